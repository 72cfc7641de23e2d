import Foundation

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A caller as the state sees it in these tests: a name to count its resumptions by.
struct TestWaiter: TaskWaiter {
    let name: String
    var isCaller = true
}

/// A task's handle in these tests.
final class TestHandle: @unchecked Sendable {  // immutable
    let id: String
    let key: TaskKey

    init(id: String, key: TaskKey) {
        self.id = id
        self.key = key
    }
}

/// Work a task runs (a transfer's control, interceptors), counting how often it is stopped.
final class TestWork: Stoppable, TransportControl, @unchecked Sendable {  // `count` is locked
    let name: String
    private let count = Locked(0)

    init(_ name: String) { self.name = name }

    func stop() { count.withLock { $0 += 1 } }
    func cancel() { stop() }

    var stops: Int { count.withLock { $0 } }
}

/// Drives a ``PoolState`` as the pool does, with a clock of its own, and records every effect: who was
/// resumed with what, what was stopped, logged, begun and ended, and when the timer is armed. No I/O,
/// no real clock, no sleep.
struct PoolStateDriver {
    typealias State = PoolState<TestWaiter, TestHandle>
    typealias Outcome = Result<Response, NetworkError>

    var state: State
    /// The driver's clock, in `MonotonicClock` nanoseconds.
    var now: UInt64 = 1_000_000_000
    /// The outcomes each waiter was resumed with, by name, in order.
    private(set) var resumes: [String: [String]] = [:]
    /// The events logged, as "kind id", in order, and each as the state made it.
    private(set) var logged: [String] = []
    private(set) var entries: [State.LogEntry] = []
    /// The attempts begun by effects, as "id#attempt", in order.
    private(set) var begun: [String] = []
    /// The tasks whose end was performed (their delivery told), with the outcome, in order.
    private(set) var ended: [(id: String, outcome: String)] = []
    /// Whether ended tasks wait for ``settle()``, as between the pool's lock and the performing of their
    /// ends; otherwise each is settled with the event that ended it.
    var holdsSettling = false
    private var unsettled = InlineFirstList<(key: TaskKey, handle: TestHandle, outcome: Outcome)>()
    /// When the pool's timer was last armed for.
    private(set) var armed: UInt64?
    /// The progress values told, with whether they finished the streams.
    private(set) var progressTold: [(value: TransferProgress, finish: Bool)] = []

    init(total: Int = 64, perHost: Int = 6, attempts: Int = 10, logs: Bool = true) {
        state = State(
            maximumConcurrentTasks: total, maximumTasksPerHost: perHost, maximumAttempts: attempts, logs: logs)
    }

    // MARK: Names

    static let response = Response(
        request: URLRequest(url: URL(string: "https://example.com/a")!),
        httpResponse: HTTPURLResponse(
            url: URL(string: "https://example.com/a")!, statusCode: 200, httpVersion: nil, headerFields: nil)!,
        body: Data("{}".utf8), duration: 0)

    static let unavailable = Response(
        request: URLRequest(url: URL(string: "https://example.com/a")!),
        httpResponse: HTTPURLResponse(
            url: URL(string: "https://example.com/a")!, statusCode: 503, httpVersion: nil, headerFields: nil)!,
        body: Data(), duration: 0)

    static func name(_ outcome: Outcome) -> String {
        switch outcome {
        case .success: "ok"
        case .failure(.cancelled): "cancelled"
        case .failure(.deadlineExceeded): "deadline"
        case .failure(.httpStatus(let response)): "http \(response.statusCode)"
        case .failure(.duplicateTask): "duplicate"
        case .failure: "failed"
        }
    }

    // MARK: Running events

    /// Runs an event, as the pool does under its lock, and records what it returned.
    @discardableResult
    mutating func run<T>(_ event: (inout State, inout State.Effects, UInt64) -> T) -> T {
        var effects = State.Effects()
        let result = event(&state, &effects, now)
        absorb(effects)
        return result
    }

    private mutating func absorb(_ effects: State.Effects) {
        for entry in effects.events {
            logged.append("\(entry.kind.rawValue) \(entry.handle.id)")
            entries.append(entry)
        }
        for (_, handle, outcome) in effects.ended { ended.append((handle.id, Self.name(outcome))) }
        var settled = State.Effects()
        if holdsSettling {
            for entry in effects.ended { unsettled.append(entry) }
        } else {
            state.settled(effects.ended, at: now, into: &settled)
        }
        for (waiter, outcome) in effects.resumes { resumes[waiter.name, default: []].append(Self.name(outcome)) }
        for (waiter, outcome) in settled.resumes { resumes[waiter.name, default: []].append(Self.name(outcome)) }
        for progress in settled.progress { progressTold.append((progress.value, progress.finish)) }
        for work in effects.stops { work.stop() }
        for begin in effects.begins { begun.append("\(begin.handle.id)#\(begin.attempt)") }
        if let time = effects.timer { armed = time }
        for progress in effects.progress { progressTold.append((progress.value, progress.finish)) }
    }

    /// Settles the tasks whose ends were held (``holdsSettling``), as the pool does once their ends are
    /// performed, and records whom that resumed.
    mutating func settle() {
        var effects = State.Effects()
        state.settled(unsettled, at: now, into: &effects)
        unsettled = InlineFirstList()
        for (waiter, outcome) in effects.resumes { resumes[waiter.name, default: []].append(Self.name(outcome)) }
        for progress in effects.progress { progressTold.append((progress.value, progress.finish)) }
    }

    /// Runs a transfer's report, as the pool does, and records the progress it told.
    @discardableResult
    mutating func report(_ event: (inout State, UInt64) -> State.Reported) -> Bool {
        let (counts, progress) = event(&state, now)
        if let progress { progressTold.append((progress.value, progress.finish)) }
        return counts
    }

    /// Moves the clock on.
    mutating func advance(_ seconds: Double) { now += UInt64(seconds * 1e9) }

    // MARK: Events by name

    /// Registers a send; returns what the state made of it.
    @discardableResult
    mutating func submit(
        _ id: String?, derived: String = "derived", host: String = "h", priority: RequestPriority = .normal,
        deadline: TimeInterval? = nil, stall: TimeInterval? = nil, cached: Outcome? = nil,
        policy: DuplicatePolicy = .join, handler: String? = nil, sameCall: Bool = true, takesSlot: Bool = true
    ) -> State.Submitted {
        var submission = State.Submission(
            givenID: id, derivedID: derived, host: host, priority: priority, deadline: deadline,
            stallThreshold: stall, cached: cached, duplicatePolicy: policy,
            waiter: handler.map { TestWaiter(name: $0, isCaller: false) })
        submission.takesSlot = takesSlot
        return run { state, effects, now in
            state.submit(
                submission, at: now, into: &effects, isSameCall: { _ in sameCall },
                makeHandle: { TestHandle(id: $0, key: $1) })
        }
    }

    /// Registers a send and attaches its caller `waiter`; returns the task's key.
    @discardableResult
    mutating func send(
        _ id: String, as waiter: String = "caller", host: String = "h", priority: RequestPriority = .normal,
        deadline: TimeInterval? = nil, stall: TimeInterval? = nil
    ) -> TaskKey {
        switch submit(id, host: host, priority: priority, deadline: deadline, stall: stall) {
        case .registered(let key, _, let token, _), .joined(let key, _, let token):
            attach(waiter, token: token, to: key)
            return key
        case .rejected(let error):
            fatalError("\(id) was rejected: \(error)")
        }
    }

    /// Attaches a caller; an outcome it gets at once counts as its resumption.
    mutating func attach(_ waiter: String, token: UInt32, to key: TaskKey, isCaller: Bool = true) {
        if let outcome = state.attach(TestWaiter(name: waiter, isCaller: isCaller), token: token, to: key) {
            resumes[waiter, default: []].append(Self.name(outcome))
        }
    }

    /// The key of the running task with this id.
    func key(_ id: String) -> TaskKey? { state.ids[id]?.key }

    /// The record of the task with `key`.
    func record(_ key: TaskKey) -> State.Record? { state.records[key] }

    /// The task with `key` as `DataTask` shows it (read from a copy of the state, which reads in place).
    func view(_ key: TaskKey) -> State.View? {
        var copy = state
        return copy.view(key)
    }

    /// The phase the task with `key` shows.
    func phase(_ key: TaskKey) -> DataTask.Phase? { view(key)?.phase }

    /// Starts the transfer of `attempt` (hop `hop`) for the task, as the pool does before handing the
    /// request to the transport; returns the work it stops, or `nil` when the state refused.
    @discardableResult
    mutating func startTransfer(_ key: TaskKey, attempt: Int = 1, hop: Int = 0, length: Int? = 0) -> TestWork? {
        let work = TestWork("transfer \(key) #\(attempt).\(hop)")
        let started = run { state, _, now in
            state.transferStarting(key, attempt: attempt, hop: hop, bodyLength: length, kept: 0, at: now)
        }
        guard started else { return nil }
        // The transport returns its control, which the state keeps.
        attach(work, attempt: attempt, hop: hop, to: key)
        return work.stops == 0 ? work : nil
    }

    /// The transport returns its control of the transfer (the state cancels it if the task has ended).
    mutating func attach(_ control: TestWork, attempt: Int = 1, hop: Int = 0, to key: TaskKey) {
        run { state, effects, _ in
            state.transferAttached(key, attempt: attempt, hop: hop, control: control, into: &effects)
        }
    }

    /// Interceptor work starts for the task (the state stops it if the task has ended).
    mutating func startWork(_ work: TestWork, _ stage: State.WorkStage, attempt: Int = 1, of key: TaskKey) {
        run { state, effects, _ in state.workStarted(key, attempt: attempt, stage: stage, work: work, into: &effects) }
    }

    /// The transfer's answer arrived whole; returns who is to finish it.
    mutating func transferEnded(
        _ key: TaskKey, attempt: Int = 1, hop: Int = 0, received: Int? = 2, status: Int? = 200,
        freesSlot: Bool = false
    ) -> State.Answered {
        run { state, effects, now in
            state.transferEnded(
                key, attempt: attempt, hop: hop, received: received, status: status, freesSlot: freesSlot, at: now,
                into: &effects)
        }
    }

    /// The attempt's outcome is reported (by its finisher).
    @discardableResult
    mutating func finished(
        _ key: TaskKey, attempt: Int = 1, with outcome: Outcome = .success(response), retrying: NetworkError? = nil
    ) -> State.Finished {
        run { state, effects, now in
            state.finished(key, attempt: attempt, with: outcome, retrying: retrying, at: now, into: &effects)
        }
    }

    mutating func cancel(_ id: String) -> Bool {
        run { state, effects, now in state.cancel(id: id, at: now, into: &effects) }
    }

    mutating func withdraw(_ token: UInt32, from key: TaskKey) {
        run { state, effects, now in state.withdraw(token, from: key, at: now, into: &effects) }
    }

    /// Moves the clock to `seconds` after the start and fires the timers due then.
    mutating func fireTimers(after seconds: Double) {
        now = 1_000_000_000 + UInt64(seconds * 1e9)
        run { state, effects, now in state.timersFired(at: now, into: &effects) }
    }

    mutating func decided(_ key: TaskKey, attempt: Int, _ decision: State.Decision) {
        run { state, effects, now in state.retryDecided(key, attempt: attempt, decision, at: now, into: &effects) }
    }

    /// How often each outcome name was the end of the task `id`.
    func ends(of id: String) -> [String] { ended.filter { $0.id == id }.map(\.outcome) }

    /// How many tasks hold a slot.
    var running: Int { state.scheduler.running }
}
