import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends requests and tracks every one of them by id while it runs.
///
/// Create a pool and inject it; there is no shared instance.
/// ```swift
/// let pool = TaskPool()
/// let page = try await pool.send(Movies.nowPlaying(page: 1), parser: DecodableParser<MoviePage>(), id: "now-playing")
/// pool.cancel(id: "now-playing")     // from anywhere, e.g. when a screen goes away
/// print(pool.activeTasks)            // what is in flight, oldest first
/// ```
/// Every send ends exactly once, in a value, a ``NetworkError``, or ``NetworkError/cancelled``,
/// and its task leaves ``activeTasks`` exactly once, whatever the interleaving of cancellation,
/// timeouts and completion. All methods are safe to call from any thread or task.
///
/// Inside, a pool is a shell around one value, its ``PoolState``: each call and each report of a
/// transport is an event for that value, under the pool's one lock, and what the event returns (resume
/// these callers, stop this transfer, begin that attempt, log this) is performed after the lock is let
/// go. See CONTRIBUTING.md for the whole route of a send.
public final class TaskPool: Sendable {
    /// The pool's state as the pool keeps it: its waiters are callers and completion handlers, its
    /// handles ``DataTask``s.
    typealias State = PoolState<Waiter, DataTask>
    typealias Outcome = Result<Response, NetworkError>

    /// How a caller waiting for a task's outcome is told: its suspended Swift task, or a completion handler.
    enum Waiter: TaskWaiter, Sendable {
        /// An `async` caller. Unchecked: the pool resumes it exactly once (the state removes a waiter
        /// before it is resumed), and a checked continuation would cost an allocation on every send.
        case caller(UnsafeContinuation<Wake, Never>)
        case handler(@Sendable (Outcome) -> Void)

        var isCaller: Bool {
            if case .caller = self { return true }
            return false
        }

        func resume(_ outcome: Outcome) {
            switch self {
            case .caller(let continuation): continuation.resume(returning: .ended(outcome))
            case .handler(let handler): handler(outcome)
            }
        }
    }

    /// What wakes an `async` caller: the task's outcome, or the transport's answer, which the caller turns
    /// into the attempt's outcome on its own thread (a transport such as ``URLSessionTransport`` reports
    /// every transfer of its session on one queue, so what is done there limits how many requests a
    /// second the session carries).
    enum Wake: Sendable {
        case ended(Outcome)
        case finish(Answer)
    }

    /// The pool's configuration.
    public let configuration: Configuration
    /// How many tasks the pool runs to one host at once: ``Configuration/maximumTasksPerHost`` when set, else
    /// as many as its transport carries (``Transport/maximumRequestsPerHost``), else 6.
    public let maximumTasksPerHost: Int
    /// The pool's state: every task's, the registry, the queue and the timers. Its lock is the pool's one lock.
    let state: Locked<State>
    /// Who receives the pool's events: its logger, its inspector, both, or nobody; decided once.
    let eventLogger: (any NetworkLogger)?
    /// The configuration's default headers checked and spelled canonically once, or `nil` when one is
    /// invalid: then every request checks them again, and fails with the endpoint's URL in its error.
    let checkedDefaultHeaders: [String: String]?
    /// The base URLs the pool's requests were built from lately, checked, with their origins.
    let checkedBaseURLs = CheckedBaseURLs()
    /// The one dispatch timer for every task's deadline, stall check and retry wait, made when the first
    /// timer is set (an armed dispatch timer costs every pass of the dispatch event loop, so a pool
    /// whose tasks have no deadline has none). Touched only under the state's lock, in ``mutate(_:)``.
    private let timer = Locked<(any DispatchSourceTimer)?>(nil)

    /// Whether the pool is going away (its `deinit`): the tasks it cancels then are not the app's cancels.
    private let closing = Locked(false)
    /// The pool's subscription to its ``Configuration/connectivity`` monitor, kept while the pool lives.
    private let connectivityObservation = Locked<ConnectivityObservation?>(nil)

    /// Where the pool's timer fires: a queue of NetworkCore's own, so that work others queue on the
    /// global queues (or a platform call blocking their threads) does not hold up a deadline.
    private static let timerQueue = DispatchQueue(
        label: "NetworkCore.timers", qos: .userInitiated, attributes: .concurrent)

    /// Creates a pool.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        eventLogger =
            switch (configuration.logger, configuration.inspector) {
            case (nil, nil): nil
            case (let logger?, nil): logger
            case (nil, let inspector?): inspector
            case (let logger?, let inspector?): CombinedLogger([logger, inspector])
            }
        checkedDefaultHeaders = HeaderName.checked(configuration.defaultHeaders)
        maximumTasksPerHost = configuration.maximumTasksPerHost ?? configuration.transport.maximumRequestsPerHost ?? 6
        state = Locked(
            State(
                maximumConcurrentTasks: configuration.maximumConcurrentTasks, maximumTasksPerHost: maximumTasksPerHost,
                followsTransport: configuration.maximumTasksPerHost == nil,
                maximumAttempts: configuration.maximumAttempts, logs: eventLogger != nil))
        configuration.inspector?.attach(self)
        if let monitor = configuration.connectivity {
            // Subscribed before the value now is read, and each change reads the monitor again under the
            // pool's lock: whatever the order of the two, the pool ends with what the monitor says last.
            let observation = monitor.observe { [weak self] _ in self?.followConnectivity() }
            connectivityObservation.withLock { $0 = observation }
            followConnectivity(sendingKeptWrites: false)
        }
        sendKeptWrites()
    }

    deinit {
        timer.withLock { $0?.cancel() }
        // Durable writes still waiting are the app's, not this pool's: they stay for the next pool.
        closing.withLock { $0 = true }
        // Tasks still waiting for a slot (a paused pool let go of): nothing would ever start them, so each
        // of their callers gets `cancelled`. A running task keeps its pool alive until it ends.
        mutate { state, effects in state.cancelQueued(at: MonotonicClock.now(), into: &effects) }
    }

    // MARK: Sending

    /// Sends the endpoint's request under `id` (derived from the request when `nil`) and returns the accepted response.
    ///
    /// Cancelling the calling Swift task withdraws this caller; when no caller is left waiting,
    /// the task is cancelled, down to the transport's transfer. The task starts within this call, on
    /// the thread running it, and stays there until its first wait, usually for the server.
    /// - Throws: ``NetworkError``: every failure, including cancellation, is one of its cases.
    public func send(_ endpoint: some Endpoint, id: String? = nil) async throws(NetworkError) -> Response {
        let sent = try submit(endpoint, id: id)
        return try await wait(for: sent).get()
    }

    /// Sends the endpoint's request, its body a file (``HTTPTask/file(_:contentType:)``), a form or bytes,
    /// as ``send(_:id:)`` does, calling `progress` with the task's ``TransferProgress`` as the body is sent
    /// and the answer arrives (the newest value when calls fall behind), on another thread, and with its
    /// last value before returning.
    /// ```swift
    /// try await pool.upload(Uploads.video(file), id: "upload") { progress in
    ///     print("sent", progress.bytesSent, "of", progress.bytesToSend ?? -1)
    /// }
    /// ```
    @discardableResult
    public func upload(
        _ endpoint: some Endpoint, id: String? = nil, progress: @escaping @Sendable (TransferProgress) -> Void
    ) async throws(NetworkError) -> Response {
        let sent = try submit(endpoint, id: id)
        return try await wait(for: sent, progress: progress).get()
    }

    /// Sends the endpoint's request and parses the accepted response with `parser`.
    /// - Throws: ``NetworkError``; a parser's error arrives as ``NetworkError/decodingFailed(_:)``.
    public func send<Parser: JSONParser>(
        _ endpoint: some Endpoint, parser: Parser, id: String? = nil
    ) async throws(NetworkError) -> Parser.Model {
        let response = try await send(endpoint, id: id)
        return try Self.parse(response, with: parser)
    }

    /// The id a send of `endpoint` gets when none is given: method and URL with sorted query,
    /// credentials left out, and a digest of the body if there is one.
    public func taskID(for endpoint: some Endpoint) throws(NetworkError) -> String {
        TaskID.derive(from: try makeRequest(endpoint).request)
    }

    /// Parses the body with `parser`, its error typed. Throwing rather than returning a `Result`, whose
    /// metadata for each model type the runtime would look up on every call.
    static func parse<Parser: JSONParser>(
        _ response: Response, with parser: Parser
    ) throws(NetworkError) -> Parser.Model {
        do {
            return try parser.parse(response.body)
        } catch let error as NetworkError {
            throw error
        } catch let failure as DecodingFailure {
            throw .decodingFailed(failure)
        } catch {
            throw .decodingFailed(DecodingFailure(decoding: Parser.Model.self, error: error))
        }
    }

    // MARK: Inspecting and cancelling

    /// The running task with this id, if any. O(1).
    public func task(id: String) -> DataTask? {
        state.withLock { $0.handle(id: id) }
    }

    /// The running tasks, oldest first; a snapshot.
    public var activeTasks: [DataTask] {
        state.withLock { $0.activeTasks() }.map(\.handle)
    }

    /// Cancels the running task with this id; its callers get ``NetworkError/cancelled`` at once, whatever
    /// its transfer is doing. O(1).
    /// - Returns: whether a running task was cancelled.
    @discardableResult
    public func cancel(id: String) -> Bool {
        mutate { state, effects in state.cancel(id: id, at: MonotonicClock.now(), into: &effects) }
    }

    /// Cancels every running task, those waiting in the queue first.
    /// - Returns: how many were cancelled.
    @discardableResult
    public func cancelAll() -> Int {
        mutate { state, effects in state.cancelAll(at: MonotonicClock.now(), into: &effects) }
    }

    // MARK: The shell

    /// Runs an event on the state under the lock, then performs what it returned. The pool's timer is
    /// armed and progress is told under the lock, so that neither can be overtaken by a later event's.
    @discardableResult
    func mutate<T>(_ event: (inout State, inout State.Effects) -> T) -> T {
        var effects = State.Effects()
        let result = state.withLock { state -> T in
            let result = event(&state, &effects)
            // With events to log, the timer is armed once they are (`perform`): fired first, it could act on
            // another thread (a retry's next attempt) and log what follows before them.
            if let time = effects.timer, !effects.hasLogEntries { arm(for: time) }
            // A task's last progress, which ends its streams, is told once its end is performed (`perform`).
            if effects.hasProgress {
                for case .progress(let progress) in effects.others where !progress.finish { tell(progress) }
            }
            return result
        }
        if !effects.isEmpty { perform(effects) }
        return result
    }

    /// Runs a transfer's report on the state under the lock, telling those following the task its progress
    /// there. Returns whether the transfer still counts.
    func report(_ event: (inout State) -> State.Reported) -> Bool {
        state.withLock { state in
            let (counts, progress) = event(&state)
            if let progress { tell(progress) }
            return counts
        }
    }

    /// Tells those following a task its progress: a yield only stores the value and wakes the reader elsewhere.
    private func tell(_ progress: State.Progress) {
        for observer in progress.observers {
            observer.yield(progress.value)
            if progress.finish { observer.finish() }
        }
    }

    /// Performs an event's effects, in an order callers may rely on: its events are logged (then the timer it
    /// set is armed), the work of ended tasks is stopped (their transports have their cancels), the tasks that
    /// ended let their delivery know and are settled, the attempts that may now begin begin, and only then
    /// are the waiters resumed. A caller resumed by its task's end finds every effect of that end done, with
    /// nothing to wait for; so does one that came for an ended task before it was settled (it was held).
    func perform(_ effects: State.Effects) {
        if effects.hasLogEntries {
            for case .log(let entry) in effects.others { log(entry) }
            if effects.timer != nil {
                // For the first time set now, which other events may have made earlier meanwhile.
                state.withLock { state in if state.armedTime != .max { arm(for: state.armedTime) } }
            }
        }
        for case .stop(let work) in effects.others { work.stop() }
        var settled = State.Effects()
        if !effects.ended.isEmpty {
            for (_, handle, outcome) in effects.ended {
                handle.plan.delivery?.taskEnded(with: outcome)
                handle.plan.durable.map { $0.ended(with: outcome, poolClosing: closing.withLock { $0 }) }
            }
            state.withLock { $0.settled(effects.ended, at: MonotonicClock.now(), into: &settled) }
        }
        if effects.hasProgress {
            for case .progress(let progress) in effects.others where progress.finish { tell(progress) }
        }
        for case .progress(let progress) in settled.others { tell(progress) }
        for case .begin(let begin) in effects.others { beginAttempt(begin.attempt, of: begin.handle) }
        for (waiter, outcome) in effects.resumes { waiter.resume(outcome) }
        for (waiter, outcome) in settled.resumes { waiter.resume(outcome) }
    }

    /// Sets the dispatch timer to fire at `time` (a `MonotonicClock` reading), making it the first time;
    /// called under the state's lock.
    private func arm(for time: UInt64) {
        let now = MonotonicClock.now()
        let deadline = DispatchTime.now() + .nanoseconds(Int(clamping: time > now ? time - now : 0))
        timer.withLock { timer in
            if let timer { return timer.schedule(deadline: deadline) }
            let source = DispatchSource.makeTimerSource(queue: Self.timerQueue)
            source.setEventHandler { [weak self] in self?.timersFired() }
            source.schedule(deadline: deadline)
            source.activate()
            timer = source
        }
    }

    /// The dispatch timer fired: every due deadline, stall check and retry wait acts.
    private func timersFired() {
        mutate { state, effects in state.timersFired(at: MonotonicClock.now(), into: &effects) }
    }

    /// How many timers are set, for tests.
    var timerCount: Int { state.withLock { $0.timerCount } }

    /// How many ids the registry has room for, for tests.
    var activeCapacity: Int { state.withLock { $0.registryCapacity } }

    /// Checks the task for a stall now, as its stall timer would, for tests.
    func checkForStall(of task: DataTask, threshold: TimeInterval) {
        mutate { state, effects in
            state.checkForStall(task.key, threshold: threshold, at: MonotonicClock.now(), into: &effects)
        }
    }

    /// Gives a logged event to the pool's logger, as a ``TaskEvent``.
    private func log(_ entry: State.LogEntry) {
        guard let logger = eventLogger else { return }
        let task = entry.handle
        var statusCode = entry.statusCode ?? entry.error?.statusCode
        var error = entry.error
        var bytes = entry.bytesReceived
        var source: Response.Source?
        var answer: Response?
        switch entry.outcome {
        case .success(let response):
            statusCode = response.statusCode
            source = response.source
            answer = response
            if response.source != .network { bytes = response.body.count }
        case .failure(let failure):
            statusCode = failure.statusCode
            source = failure.response?.source
            answer = failure.response
            if entry.kind == .failed { error = failure }
        case nil: break
        }
        var event = TaskEvent(
            kind: entry.kind, taskID: task.id, service: task.service, method: task.method, url: task.redactedURL,
            attempt: entry.attempt, date: Date(), duration: entry.duration, statusCode: statusCode,
            bytesReceived: bytes, error: error, delay: entry.delay,
            redirectURL: entry.kind == .redirected ? task.redacted(redirectTo: entry.redirectURL) : nil,
            snapshot: entry.kind == .stalled ? task.snapshot : nil, silence: entry.silence, source: source,
            response: answer)
        event.task = task
        logger.log(event)
    }
}
