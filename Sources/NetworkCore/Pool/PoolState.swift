import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The whole state of a ``TaskPool`` as one value: the registry of running tasks by id, every task's
/// record (its life, waiters and measurements), the scheduler's queue and the timers.
///
/// Each event is a mutating method: a send registered, a caller attached or withdrawn, a cancel, a
/// transfer's head, bytes and end, an attempt's outcome, a retry decided, timers fired, a pause, a
/// resume. It returns what to do, as ``Effects`` (resume these callers, stop this work, log these
/// events, begin these attempts), which the pool performs after letting go of its lock. A value an event
/// returns besides is never something to do to others: only what its caller needs for its own next step
/// (whether to send the request, who turns an answer into an outcome, whether a cancel found its task). The state never
/// performs anything itself, reads no clock (times are given) and knows nothing of transports,
/// endpoints or caches, so every order of events can be driven by a test.
///
/// Exactly once is a property of this value: a task ends only in ``end(_:with:at:into:)``, which sets
/// its outcome once (`ended` is final), resumes each waiter once, stops its work once, frees its slot
/// once and removes it from the registry once.
///
/// `Waiter` is how a caller is resumed; `Handle` is the pool's object for a task, held while the task
/// runs and given back when it ends.
struct PoolState<Waiter: TaskWaiter, Handle: AnyObject> {
    typealias Outcome = Result<Response, NetworkError>

    /// What the pool is to do after an event, outside its lock: resume these callers with these outcomes, let
    /// go of these ended tasks (their delivery learns the end), arm the timer, and, more rarely, stop work,
    /// log events, begin attempts and tell progress. The usual event allocates nothing.
    struct Effects {
        /// Callers to resume with an outcome.
        var resumes = InlineFirstList<(waiter: Waiter, outcome: Outcome)>()
        /// Tasks that ended, with their outcome: their handles are let go outside the lock, and their
        /// delivery (a file, a stream) learns the end; then each is settled (``settled(_:)``).
        var ended = InlineFirstList<(key: TaskKey, handle: Handle, outcome: Outcome)>()
        /// The time the pool's one dispatch timer is to fire at, when it changes.
        var timer: UInt64?
        /// The rarer effects, in the order they came.
        private(set) var others: [Other] = []

        /// A rarer effect.
        enum Other {
            /// Work of an ended task to stop: its transfer or its interceptors.
            case stop(Work)
            /// An event to log (only when the pool logs).
            case log(LogEntry)
            /// An attempt to begin: a task left the queue, or its retry's wait is over.
            case begin(Begin)
            /// Progress to tell those following a task.
            case progress(Progress)
        }

        /// Whether `others` holds an event to log, or progress to tell: most events have neither, and then
        /// the shell does not look for them.
        private(set) var hasLogEntries = false
        private(set) var hasProgress = false

        mutating func stop(_ work: Work) { others.append(.stop(work)) }
        mutating func log(_ entry: LogEntry) {
            others.append(.log(entry))
            hasLogEntries = true
        }
        mutating func begin(_ begin: Begin) { others.append(.begin(begin)) }
        mutating func tell(_ progress: Progress) {
            others.append(.progress(progress))
            hasProgress = true
        }

        /// Work to stop, events to log, attempts to begin, progress to tell, each in order.
        var stops: [Work] { others.compactMap { if case .stop(let work) = $0 { work } else { nil } } }
        var events: [LogEntry] { others.compactMap { if case .log(let entry) = $0 { entry } else { nil } } }
        var begins: [Begin] { others.compactMap { if case .begin(let begin) = $0 { begin } else { nil } } }
        var progress: [Progress] { others.compactMap { if case .progress(let told) = $0 { told } else { nil } } }

        var isEmpty: Bool { resumes.isEmpty && ended.isEmpty && timer == nil && others.isEmpty }
    }

    /// A task's progress to tell those following it; `finish`: and end their streams.
    struct Progress {
        let observers: [AsyncStream<TransferProgress>.Continuation]
        let value: TransferProgress
        let finish: Bool
    }

    /// An attempt to begin: prepare the request (interceptors) and send it.
    struct Begin {
        let key: TaskKey
        let handle: Handle
        let attempt: Int
    }

    /// An event to log, with what the state knows of the task at that moment.
    struct LogEntry {
        let kind: TaskEvent.Kind
        let handle: Handle
        let attempt: Int
        let bytesReceived: Int
        /// Seconds since the task started; `nil` for `started`.
        let duration: TimeInterval?
        /// The outcome, for an end.
        var outcome: Outcome?
        var error: NetworkError?
        var delay: TimeInterval?
        var statusCode: Int?
        /// Where a redirect goes (redacted when logged).
        var redirectURL: URL?
        var silence: TimeInterval?
    }

    /// A send to register (see ``submit(_:at:)``).
    struct Submission {
        /// The id the caller gave, if any; else `derivedID`, made unique among different calls.
        let givenID: String?
        let derivedID: String
        let host: String
        let priority: RequestPriority
        let deadline: TimeInterval?
        let stallThreshold: TimeInterval?
        /// The answer from the cache, when the cache answers: the task starts and ends at once.
        let cached: Outcome?
        let duplicatePolicy: DuplicatePolicy
        /// A completion handler, waiting from the start.
        let waiter: Waiter?
        /// Whether the task waits for one of the scheduler's slots: not a socket, which lives on once open
        /// and would hold a slot from the requests to its host for as long.
        var takesSlot = true
    }

    /// What registering a send came to.
    enum Submitted {
        /// A task with this id runs and the duplicate policy refuses this one.
        case rejected(NetworkError)
        /// The send joined the running task `key`; its caller waits with `token`.
        case joined(key: TaskKey, handle: Handle, token: UInt32)
        /// A new task; its caller waits with `token`. `begins`: it holds a slot and its first attempt
        /// is for the caller to begin; otherwise it waits in the queue, or was answered by the cache.
        case registered(key: TaskKey, handle: Handle, token: UInt32, begins: Bool)
    }

    /// A running task as the registry of ids holds it.
    struct Registered {
        let key: TaskKey
        let handle: Handle
    }

    /// Every task's record, by key: the running ones, and the ended ones whose handle is still held
    /// somewhere (see ``forget(_:)``).
    private(set) var records = Records()
    /// The running tasks by id: each one's key, and its handle, so that finding a task by id reads no record.
    private(set) var ids: [String: Registered] = [:]
    var scheduler: Scheduler<TaskKey>
    var timers = TimerHeap<TaskKey>()
    /// Tasks backing off after losing the network while it is gone: their next attempt waits for it, not
    /// for a timer (see ``connectivity(_:at:into:)``).
    var retriesAwaitingNetwork: Set<TaskKey> = []
    /// When the pool's dispatch timer is set to fire; `.max` when it is not set.
    var armedTime = UInt64.max
    private var lastSequence: UInt64 = 0
    /// Whether the pool logs events: when not, none are made.
    let logs: Bool
    /// The most attempts any task makes.
    let maximumAttempts: Int

    /// The most ids the registry keeps room for once it is empty again; a larger table is released.
    static var keptCapacity: Int { 64 }

    /// `followsTransport`: whether a transport's report of what it carries to a host sets that host's limit
    /// (the app did not set the limit itself).
    init(
        maximumConcurrentTasks: Int, maximumTasksPerHost: Int, followsTransport: Bool = false, maximumAttempts: Int,
        logs: Bool
    ) {
        scheduler = Scheduler(
            maximumTotal: maximumConcurrentTasks, maximumPerHost: maximumTasksPerHost,
            followsTransport: followsTransport)
        self.maximumAttempts = maximumAttempts
        self.logs = logs
    }

    // MARK: Registering

    /// A send: registers its task under its id, as the duplicate policy says, and admits it to a slot or
    /// the queue; an answer from the cache ends it at once. `isSameCall`: whether a running task is the
    /// same call on the wire, so that this send may join it; `makeHandle` makes the new task's handle
    /// once its id and key are known.
    mutating func submit(
        _ submission: Submission, at now: UInt64, into effects: inout Effects, isSameCall: (Handle) -> Bool,
        makeHandle: (_ id: String, _ key: TaskKey) -> Handle
    ) -> Submitted {
        var id = submission.givenID ?? submission.derivedID
        if let running = ids[id] {
            let isSame = isSameCall(running.handle)
            if submission.givenID == nil, !isSame {
                // A derived id names the call: a different call that derives the same id (a header that is
                // not a credential, an endpoint's own interceptors) is a call of its own, never a duplicate.
                id = uniqueID(after: id)
            } else {
                switch submission.duplicatePolicy {
                case .reject:
                    return .rejected(.duplicateTask(id: id))
                case .join:
                    guard isSame else { return .rejected(.duplicateTask(id: id)) }
                    // Counted from now, as a new task's caller is (see below).
                    let token = update(running.key) { record -> UInt32 in
                        let token = record.newToken()
                        record.waiters.append((token, submission.waiter))
                        return token
                    }!
                    return .joined(key: running.key, handle: running.handle, token: token)
                case .replace:
                    end(running.key, with: .failure(.cancelled), at: now, into: &effects)
                }
            }
        }
        lastSequence += 1
        let cached = submission.cached
        // Tasks of one host share one copy of its name.
        let host = scheduler.interned(submission.host)
        var handle: Handle?
        let key = records.insert { key in
            handle = makeHandle(id, key)
            return Record(
                id: id, host: host, key: key, sequence: lastSequence, handle: handle, meter: TaskMeter(at: now),
                life: .preparing(work: nil), takesSlot: cached == nil && submission.takesSlot,
                priority: submission.priority, packedDeadline: PackedSeconds(submission.deadline),
                packedStallThreshold: PackedSeconds(submission.stallThreshold))
        }
        let begins =
            cached == nil
            && (submission.takesSlot
                ? scheduler.admit(key, host: host, priority: submission.priority)
                : scheduler.admitWithoutSlot(key))
        let token = update(key) { record -> UInt32 in
            let token = record.newToken()
            // A caller that will wait counts from now (as one away, until it attaches): a joined caller that
            // leaves meanwhile does not cancel the task under it.
            record.waiters.append((token, submission.waiter))
            if cached == nil, !begins { record.life = .queued }
            return token
        }!
        ids[id] = Registered(key: key, handle: handle!)
        if let deadline = submission.deadline, cached == nil {
            setTimer(.deadline, of: key, after: deadline, at: now, into: &effects)
        }
        if let cached {
            log(.started, key, at: now, into: &effects)
            end(key, with: cached, at: now, into: &effects)
        } else if begins {
            started(key, at: now, into: &effects)
        } else {
            log(scheduler.isOffline ? .waitingForNetwork : .queued, key, at: now, into: &effects)
        }
        return .registered(key: key, handle: handle!, token: token, begins: begins)
    }

    /// The task `key` leaves the queue or is admitted at once: it is started, and its stall check set.
    private mutating func started(_ key: TaskKey, at now: UInt64, into effects: inout Effects) {
        log(.started, key, at: now, into: &effects)
        if let threshold = update(key, { $0.stallThreshold }) ?? nil {
            setTimer(.stall, of: key, after: threshold, at: now, into: &effects)
        }
    }

    /// `id` with the first of ` (2)`, ` (3)`… that no running task has.
    private func uniqueID(after id: String) -> String {
        var number = 2
        while ids[id + " (\(number))"] != nil { number += 1 }
        return id + " (\(number))"
    }

    // MARK: Waiting

    /// A caller waits for the task's outcome with `token`. Returns the outcome if the task has ended:
    /// resume the caller now.
    /// A caller that was handed the answer and waits again takes back its place.
    mutating func attach(_ waiter: Waiter, token: UInt32, to key: TaskKey) -> Outcome? {
        update(key) { record -> Outcome? in
            // A task whose end is still being performed holds the caller until it is settled.
            if let outcome = record.outcome, !record.settling { return outcome }
            if record.waiters.replace(where: { $0.token == token && $0.waiter == nil }, with: (token, waiter)) {
                return nil
            }
            record.waiters.append((token, waiter))
            return nil
        } ?? .failure(.cancelled)
    }

    /// The ended tasks' ends have been performed (logged, their deliveries told): a caller that came
    /// meanwhile, finding the task ended, was held (``attach(_:token:to:)``) and is resumed now, and a
    /// progress stream begun meanwhile ends now, so that no one sees an ended task before its end's
    /// effects are done.
    mutating func settled(
        _ ended: InlineFirstList<(key: TaskKey, handle: Handle, outcome: Outcome)>, at now: UInt64,
        into effects: inout Effects
    ) {
        for (key, _, outcome) in ended {
            update(key) { record in
                record.settling = false
                for entry in record.waiters {
                    if let waiter = entry.waiter { effects.resumes.append((waiter, outcome)) }
                }
                record.waiters = InlineFirstList()
                if !record.observers.isEmpty {
                    effects.tell(
                        Progress(observers: record.observers, value: record.meter.progress(at: now), finish: true))
                    record.observers = []
                }
            }
        }
    }

    /// The caller waiting with `token` withdraws (its Swift task was cancelled): it is resumed with
    /// ``NetworkError/cancelled``, and when no caller is left, the task is cancelled. (A caller away
    /// finishing the task still counts: see ``Record/waiters``.)
    mutating func withdraw(_ token: UInt32, from key: TaskKey, at now: UInt64, into effects: inout Effects) {
        let found = update(key) { record -> (waiter: Waiter?, wasLast: Bool)? in
            guard let entry = record.waiters.remove(where: { $0.token == token && $0.waiter != nil }) else {
                return nil
            }
            return (entry.waiter, record.waiters.isEmpty && !record.hasEnded)
        }
        guard let (waiter, wasLast) = found ?? nil else { return }
        if wasLast { end(key, with: .failure(.cancelled), at: now, into: &effects) }
        if let waiter { effects.resumes.append((waiter, .failure(.cancelled))) }
    }

    // MARK: Cancelling

    /// Cancels the running task with this id. Returns whether there was one.
    mutating func cancel(id: String, at now: UInt64, into effects: inout Effects) -> Bool {
        guard let index = ids.index(forKey: id) else { return false }
        return end(ids.values[index].key, with: .failure(.cancelled), at: now, into: &effects, registered: index)
    }

    /// Cancels every running task, those waiting in the queue first, so that none of them starts in a
    /// slot a cancelled one frees. Returns how many.
    mutating func cancelAll(at now: UInt64, into effects: inout Effects) -> Int {
        let keys = runningKeys().sorted { a, b in a.queued != b.queued ? a.queued : a.sequence < b.sequence }.map(\.key)
        return keys.reduce(0) { count, key in
            count + (end(key, with: .failure(.cancelled), at: now, into: &effects) ? 1 : 0)
        }
    }

    /// Ends the tasks waiting in the queue with ``NetworkError/cancelled``: the pool is going away, and
    /// nothing would ever start them.
    mutating func cancelQueued(at now: UInt64, into effects: inout Effects) {
        // Ending a queued task frees no slot, so none of the others leaves the queue meanwhile.
        for (key, _, queued) in runningKeys().sorted(by: { $0.sequence < $1.sequence }) where queued {
            end(key, with: .failure(.cancelled), at: now, into: &effects)
        }
    }

    // MARK: Ending

    /// Ends the task with `outcome` unless it has ended: the one place a task ends. Its waiters are
    /// resumed, its work stopped, its timers taken out, its slot freed (the tasks that get it begin),
    /// its id let go, its progress streams ended, its end logged. Returns whether this call ended it.
    /// `registered`: the task's place among the ids, when the caller has just found it there (nothing
    /// changes the ids before it is used).
    @discardableResult
    mutating func end(
        _ key: TaskKey, with outcome: Outcome, at now: UInt64, into effects: inout Effects,
        registered: [String: Registered].Index? = nil
    ) -> Bool {
        let logs = self.logs
        let ended = update(key) { record -> (id: String, host: String, wasQueued: Bool, heldSlot: Bool)? in
            // Its life is read once: whether it waited in the queue, and the work to stop.
            let wasQueued: Bool
            switch record.life {
            case .ended: return nil
            case .queued: wasQueued = true
            case .preparing(let work), .waitingForCredential(let work), .deciding(let work, _, _):
                wasQueued = false
                if let work { effects.stop(.interceptors(work)) }
            case .transferring(let transfer):
                wasQueued = false
                if let control = transfer.control { effects.stop(.transfer(control)) }
            case .finishing, .backingOff: wasQueued = false
            }
            let facts = (record.id, record.host, wasQueued, record.takesSlot && !wasQueued && !record.slotFreed)
            record.life = .ended(outcome)
            record.meter.end(at: now)
            // A caller away finishing the task learns the outcome when it comes back.
            for entry in record.waiters {
                if let waiter = entry.waiter { effects.resumes.append((waiter, outcome)) }
            }
            record.waiters = InlineFirstList()
            if !record.observers.isEmpty {
                effects.tell(Progress(observers: record.observers, value: record.meter.progress(at: now), finish: true))
                record.observers = []
            }
            // Its handle is let go outside the lock, where its delivery learns the end.
            if let handle = record.handle {
                if logs {
                    let kind: TaskEvent.Kind =
                        switch outcome {
                        case .success: .finished
                        case .failure(.cancelled): .cancelled
                        case .failure: .failed
                        }
                    effects.log(Self.entry(kind, of: record, handle: handle, at: now))
                }
                effects.ended.append((key, handle, outcome))
                record.handle = nil
                record.settling = true
            }
            return facts
        }
        guard let (id, host, wasQueued, heldSlot) = ended ?? nil else { return false }
        timers.removeAll(of: key)
        if !retriesAwaitingNetwork.isEmpty { retriesAwaitingNetwork.remove(key) }
        // The task may have been replaced under its id (`DuplicatePolicy.replace`): remove only itself.
        if let index = registered ?? ids.index(forKey: id), ids.values[index].key == key {
            ids.remove(at: index)
            // A dictionary keeps the capacity it grew to: once a burst has drained, give its table back.
            if ids.isEmpty, ids.capacity > Self.keptCapacity { ids = [:] }
        }
        if wasQueued {
            _ = scheduler.remove(key, host: host)
        } else if heldSlot {
            for next in scheduler.release(host: host) { dequeued(next, at: now, into: &effects) }
        }
        return true
    }

    /// A task left the queue for a slot: its first attempt begins.
    mutating func dequeued(_ key: TaskKey, at now: UInt64, into effects: inout Effects) {
        guard
            let handle = update(
                key,
                { record -> Handle? in
                    record.life = .preparing(work: nil)
                    return record.handle
                }) ?? nil
        else { return }
        started(key, at: now, into: &effects)
        effects.begin(Begin(key: key, handle: handle, attempt: 1))
    }

    /// The task's handle is gone: its record goes too. (A running task's handle is held by its record,
    /// so only an ended task's can go.)
    mutating func forget(_ key: TaskKey) {
        guard update(key, { $0.hasEnded }) == true else { return }
        records.remove(key)
    }

    // MARK: Reading

    /// The running task with this id.
    func handle(id: String) -> Handle? {
        ids[id]?.handle
    }

    /// The running tasks, oldest first, each with its place in the queue while it waits.
    mutating func activeTasks() -> [(handle: Handle, queuePosition: Int?)] {
        let order = scheduler.queuedCount > 0 ? scheduler.queueOrder : []
        let places = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0 + 1) })
        return runningKeys().sorted { $0.sequence < $1.sequence }.compactMap { key, _, _ in
            (update(key) { $0.handle } ?? nil).map { ($0, places[key]) }
        }
    }

    /// The running tasks' keys, with the order they came in and whether each waits in the queue.
    private mutating func runningKeys() -> [(key: TaskKey, sequence: UInt64, queued: Bool)] {
        ids.values.compactMap { running in update(running.key) { (running.key, $0.sequence, $0.isQueued) } }
    }

    /// How many tasks run (or wait in the queue).
    var activeCount: Int { ids.count }

    /// How many ids the registry has room for (for tests of its release).
    var registryCapacity: Int { ids.capacity }

    /// How many callers wait for the task (one away finishing it included).
    mutating func waiterCount(of key: TaskKey) -> Int { update(key) { $0.waiters.count } ?? 0 }

    /// The task as ``DataTask`` shows it.
    mutating func view(_ key: TaskKey) -> View? {
        let (offline, awaiting) = (scheduler.isOffline, retriesAwaitingNetwork.contains(key))
        return update(key) { record in
            View(
                phase: (offline && record.isQueued) || awaiting ? .waitingForNetwork : record.phase,
                outcome: record.outcome,
                attempts: record.attempt, priority: record.priority,
                meter: record.meter)
        }
    }

    /// Starts following the task's progress: returns its progress now, and whether it has ended (then
    /// `continuation` is not kept).
    mutating func observe(
        _ key: TaskKey, with continuation: AsyncStream<TransferProgress>.Continuation, at now: UInt64
    ) -> (TransferProgress, ended: Bool) {
        update(key) { record in
            let progress = record.meter.progress(at: now)
            // A task whose end is still being performed ends the stream once it is settled.
            if record.hasEnded, !record.settling { return (progress, true) }
            record.observers.append(continuation)
            return (progress, false)
        } ?? (TransferProgress(), true)
    }

    // MARK: Helpers

    /// Runs `body` on the record of `key` in place (one lookup, no copy); `nil` when there is none.
    /// Reads go through it too: a record read by `records[key]` is copied whole, with every reference in it.
    mutating func update<T>(_ key: TaskKey, _ body: (inout Record) -> T) -> T? {
        records.update(key, body)
    }

    /// Logs `kind` for the task, with what it measured at `now`; `adjust` adds the event's own details.
    mutating func log(
        _ kind: TaskEvent.Kind, _ key: TaskKey, at now: UInt64, into effects: inout Effects,
        _ adjust: (inout LogEntry) -> Void = { _ in }
    ) {
        guard logs,
            var entry = update(
                key, { record in record.handle.map { Self.entry(kind, of: record, handle: $0, at: now) } })
                ?? nil
        else { return }
        adjust(&entry)
        effects.log(entry)
    }

    /// The event `kind` of the task, with what it measured at `now`.
    static func entry(_ kind: TaskEvent.Kind, of record: borrowing Record, handle: Handle, at now: UInt64) -> LogEntry {
        LogEntry(
            kind: kind, handle: handle, attempt: record.attempt, bytesReceived: record.meter.bytesReceived,
            duration: kind == .started ? nil : record.meter.elapsed(at: now), outcome: record.outcome)
    }

    /// What to tell those following the task of its progress now; `nil` when nobody follows.
    static func progress(of record: borrowing Record, at now: UInt64) -> Progress? {
        guard !record.observers.isEmpty else { return nil }
        return Progress(observers: record.observers, value: record.meter.progress(at: now), finish: false)
    }
}

extension PoolState.Record {
    /// A token no other caller of this task has.
    mutating func newToken() -> UInt32 {
        nextToken &+= 1
        return nextToken
    }
}
