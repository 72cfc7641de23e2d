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
public final class TaskPool: @unchecked Sendable {
    // @unchecked Sendable: `active`, `sequence` and every task's storage are guarded by `lock`.
    /// How a pool sends, validates, logs and handles duplicate ids.
    public struct Configuration: Sendable {
        /// What sends the requests; ``URLSessionTransport`` by default.
        public var transport: any Transport
        /// Headers added to every request; an endpoint's headers override them.
        public var defaultHeaders: [String: String]
        /// Receives every task event; `nil` for none.
        public var logger: (any NetworkLogger)?
        /// What happens when an id is sent again while its task runs; ``DuplicatePolicy/join`` by default.
        public var duplicatePolicy: DuplicatePolicy
        /// Which responses count as success.
        public var validation: Validation
        /// Reads the server's own code and message from bodies.
        public var statusReader: any ServerStatusReader
        /// Seconds to wait for the server to start or continue answering, unless the endpoint says otherwise.
        public var requestTimeout: TimeInterval

        /// `Accept: application/json` and `User-Agent: NetworkCore/<version>`.
        public static let standardHeaders = [
            "Accept": "application/json",
            "User-Agent": "NetworkCore/\(LibraryVersion.current)",
        ]

        /// Creates a configuration.
        public init(
            transport: any Transport = URLSessionTransport(),
            defaultHeaders: [String: String] = Configuration.standardHeaders,
            logger: (any NetworkLogger)? = nil,
            duplicatePolicy: DuplicatePolicy = .join,
            validation: Validation = .default,
            statusReader: any ServerStatusReader = JSONStatusReader(),
            requestTimeout: TimeInterval = 60
        ) {
            self.transport = transport
            self.defaultHeaders = defaultHeaders
            self.logger = logger
            self.duplicatePolicy = duplicatePolicy
            self.validation = validation
            self.statusReader = statusReader
            self.requestTimeout = requestTimeout
        }
    }

    /// The pool's configuration.
    public let configuration: Configuration

    let lock = Lock()
    /// The running tasks by id. Invariant: a task is here exactly while its outcome is `nil`;
    /// ``settle(_:with:)`` sets the outcome and removes it in one critical section.
    private var active: [String: DataTask] = [:]
    private var sequence: UInt64 = 0

    /// Creates a pool.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    // MARK: Sending

    /// Sends the endpoint's request under `id` (derived from the request when `nil`) and returns the accepted response.
    ///
    /// Cancelling the calling Swift task withdraws this caller; when no caller is left waiting,
    /// the task is cancelled, down to the `URLSessionTask`.
    /// - Throws: ``NetworkError``: every failure, including cancellation, is one of its cases.
    public func send(_ endpoint: some Endpoint, id: String? = nil) async throws(NetworkError) -> Response {
        let task = try start(endpoint, id: id)
        return try await wait(for: task).get()
    }

    /// Sends the endpoint's request and parses the accepted response with `parser`.
    /// - Throws: ``NetworkError``; a parser's error arrives as ``NetworkError/decodingFailed(_:)``.
    public func send<Parser: JSONParser>(
        _ endpoint: some Endpoint, parser: Parser, id: String? = nil
    )
        async throws(NetworkError) -> Parser.Model
    {
        let response = try await send(endpoint, id: id)
        return try Self.parse(response, with: parser).get()
    }

    /// The id a send of `endpoint` gets when none is given: method and URL with sorted query,
    /// credentials left out, and a digest of the body if there is one.
    public func taskID(for endpoint: some Endpoint) throws(NetworkError) -> String {
        TaskID.derive(from: try makeRequest(endpoint))
    }

    // MARK: Inspecting and cancelling

    /// The running task with this id, if any. O(1).
    public func task(id: String) -> DataTask? {
        lock.withLock { active[id] }
    }

    /// The running tasks, oldest first; a snapshot.
    public var activeTasks: [DataTask] {
        lock.withLock { Array(active.values) }.sorted { $0.sequence < $1.sequence }
    }

    /// Cancels the running task with this id; its callers get ``NetworkError/cancelled`` at once. O(1).
    /// - Returns: whether a running task was cancelled.
    @discardableResult
    public func cancel(id: String) -> Bool {
        guard let task = lock.withLock({ active[id] }) else { return false }
        return settle(task, with: .failure(.cancelled))
    }

    /// Cancels every running task.
    /// - Returns: how many were cancelled.
    @discardableResult
    public func cancelAll() -> Int {
        lock.withLock { Array(active.values) }.reduce(0) { count, task in
            count + (settle(task, with: .failure(.cancelled)) ? 1 : 0)
        }
    }

    // MARK: Internals

    func makeRequest(_ endpoint: some Endpoint) throws(NetworkError) -> URLRequest {
        try endpoint.urlRequest(defaultHeaders: configuration.defaultHeaders, timeout: configuration.requestTimeout)
    }

    /// Builds the request, registers its task under the duplicate policy, and starts it unless it joined a running one.
    func start(_ endpoint: some Endpoint, id: String?) throws(NetworkError) -> DataTask {
        let request = try makeRequest(endpoint)
        let taskID = (id?.isEmpty == false ? id : nil) ?? TaskID.derive(from: request)
        var replaced: DataTask?
        let (task, isNew) = try lock.withLock { () throws(NetworkError) -> (DataTask, Bool) in
            if let running = active[taskID] {
                switch configuration.duplicatePolicy {
                case .reject:
                    throw .duplicateTask(id: taskID)
                case .join:
                    guard running.isSameCall(as: request) else { throw .duplicateTask(id: taskID) }
                    return (running, false)
                case .replace:
                    replaced = running
                }
            }
            sequence += 1
            let task = DataTask(id: taskID, request: request, sequence: sequence, lock: lock)
            active[taskID] = task
            return (task, true)
        }
        if let replaced { settle(replaced, with: .failure(.cancelled)) }
        if isNew { run(task, endpoint: endpoint) }
        return task
    }

    private func run(_ task: DataTask, endpoint: some Endpoint) {
        log(.started, task)
        let runner = Task { [self] in
            let outcome = await perform(task, endpoint: endpoint)
            settle(task, with: outcome)
        }
        let alreadyEnded = lock.withLock {
            guard task.storage.outcome == nil else { return true }
            task.storage.runner = runner
            return false
        }
        if alreadyEnded { runner.cancel() }
    }

    private func perform(_ task: DataTask, endpoint: some Endpoint) async -> DataTask.Outcome {
        let context = TransportContext(taskID: task.id, endpoint: endpoint) { [lock] bytes in
            lock.withLock { task.storage.bytesReceived += bytes }
        }
        let start = MonotonicClock.now()
        do {
            let (body, httpResponse) = try await configuration.transport.send(task.request, context: context)
            let response = Response(
                request: task.request, httpResponse: httpResponse, body: body,
                duration: MonotonicClock.seconds(from: start, to: MonotonicClock.now()),
                statusReader: configuration.statusReader)
            lock.withLock { task.storage.bytesReceived = max(task.storage.bytesReceived, body.count) }
            return validate(response)
        } catch {
            return .failure(NetworkError.from(error, timeout: task.request.timeoutInterval))
        }
    }

    private func validate(_ response: Response) -> DataTask.Outcome {
        let validation = configuration.validation
        guard validation.acceptableStatusCodes.contains(response.statusCode) else {
            return .failure(.httpStatus(response))
        }
        if validation.detectsServerRefusal, response.isServerRefusal {
            return .failure(.serverRefused(response))
        }
        return .success(response)
    }

    /// Ends a task with `outcome` unless it has ended already: the one place a task's outcome is
    /// set and the one place it leaves the active set, both under the lock.
    /// - Returns: whether this call ended the task.
    @discardableResult
    func settle(_ task: DataTask, with outcome: DataTask.Outcome) -> Bool {
        let ended = lock.withLock { () -> (waiters: [DataTask.Waiter], runner: Task<Void, Never>?)? in
            guard task.storage.outcome == nil else { return nil }
            task.storage.outcome = outcome
            task.storage.endDate = Date()
            task.storage.endTime = MonotonicClock.now()
            if active[task.id] === task { active[task.id] = nil }
            defer {
                task.storage.waiters = []
                task.storage.runner = nil
            }
            return (task.storage.waiters, task.storage.runner)
        }
        guard let ended else { return false }
        switch outcome {
        case .success: log(.finished, task)
        case .failure(.cancelled): log(.cancelled, task)
        case .failure: log(.failed, task)
        }
        for waiter in ended.waiters { waiter.resume(outcome) }
        if case .failure(.cancelled) = outcome { ended.runner?.cancel() }
        return true
    }

    /// Awaits the task's outcome. Cancelling the calling Swift task withdraws this caller
    /// (it gets `.cancelled`); the task itself is cancelled when no caller is left.
    private func wait(for task: DataTask) async -> DataTask.Outcome {
        let token = lock.withLock { () -> UInt64 in
            sequence += 1
            return sequence
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                addWaiter(to: task, token: token) { continuation.resume(returning: $0) }
                if Task.isCancelled { withdraw(token, from: task) }
            }
        } onCancel: {
            withdraw(token, from: task)
        }
    }

    /// Calls `resume` once with the task's outcome: now if it has ended, else when it ends.
    func addWaiter(to task: DataTask, token: UInt64, resume: @escaping @Sendable (DataTask.Outcome) -> Void) {
        let outcome = lock.withLock { () -> DataTask.Outcome? in
            if let outcome = task.storage.outcome { return outcome }
            task.storage.waiters.append((token, resume))
            return nil
        }
        if let outcome { resume(outcome) }
    }

    private func withdraw(_ token: UInt64, from task: DataTask) {
        let withdrawn = lock.withLock { () -> (waiter: DataTask.Waiter, wasLast: Bool)? in
            guard let index = task.storage.waiters.firstIndex(where: { $0.token == token }) else { return nil }
            let waiter = task.storage.waiters.remove(at: index)
            return (waiter, task.storage.waiters.isEmpty)
        }
        guard let withdrawn else { return }
        if withdrawn.wasLast { settle(task, with: .failure(.cancelled)) }
        withdrawn.waiter.resume(.failure(.cancelled))
    }

    static func parse<Parser: JSONParser>(
        _ response: Response, with parser: Parser
    ) -> Result<Parser.Model, NetworkError> {
        do {
            return .success(try parser.parse(response.body))
        } catch let error as NetworkError {
            return .failure(error)
        } catch let failure as DecodingFailure {
            return .failure(.decodingFailed(failure))
        } catch {
            return .failure(.decodingFailed(DecodingFailure(decoding: Parser.Model.self, error: error)))
        }
    }

    private func log(_ kind: TaskEvent.Kind, _ task: DataTask) {
        guard let logger = configuration.logger else { return }
        let (bytes, attempts, outcome) = lock.withLock {
            (task.storage.bytesReceived, task.storage.attempts, task.storage.outcome)
        }
        var statusCode: Int?
        var error: NetworkError?
        switch outcome {
        case .success(let response): statusCode = response.statusCode
        case .failure(let failure):
            statusCode = failure.statusCode
            if kind == .failed { error = failure }
        case nil: break
        }
        logger.log(
            TaskEvent(
                kind: kind, taskID: task.id, method: task.method, url: Redactor.default.redact(task.request.url),
                attempt: attempts, date: Date(), duration: kind == .started ? nil : task.elapsed,
                statusCode: statusCode, bytesReceived: bytes, error: error))
    }
}
