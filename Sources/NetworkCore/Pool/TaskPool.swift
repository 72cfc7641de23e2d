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
        /// Headers added to every request; an endpoint's headers override them. Checked once, when the
        /// pool is created: if a name is not an HTTP token or a value has a line break, every send fails
        /// with ``NetworkError/invalidEndpoint(url:reason:)``.
        public var defaultHeaders: [String: String]
        /// Receives every task event; `nil` for none.
        public var logger: (any NetworkLogger)?
        /// What happens when an id is sent again while its task runs; ``DuplicatePolicy/join`` by default.
        public var duplicatePolicy: DuplicatePolicy
        /// Which responses count as success.
        public var validation: Validation
        /// Reads the server's own code and message from bodies, unless the endpoint has its own reader:
        /// by default ``JSONStatusReader`` with common error keys and no success flag, so a successful
        /// response's body is not read.
        public var statusReader: any ServerStatusReader
        /// Seconds to wait for the server to start or continue answering, unless the endpoint says otherwise.
        /// Zero, negative, NaN or infinite: every send that uses it fails with
        /// ``NetworkError/invalidEndpoint(url:reason:)``, which names the setting.
        public var requestTimeout: TimeInterval
        /// Seconds a whole task may take, retries and waits included, unless the endpoint says otherwise;
        /// `nil` for no deadline. Enforced by the pool itself (FoundationNetworking ignores
        /// `timeoutIntervalForResource`): the task ends with ``NetworkError/deadlineExceeded(seconds:)``
        /// when the time is up, or earlier when a retry's wait would end after it. Zero, negative, NaN
        /// or infinite: every send that uses it fails with ``NetworkError/invalidEndpoint(url:reason:)``.
        public var resourceTimeout: TimeInterval?
        /// Interceptors for every request, in order: see ``RequestInterceptor`` for how they chain.
        public var interceptors: [any RequestInterceptor]
        /// The most attempts any task makes, whatever its interceptors decide: a guard against loops.
        public var maximumAttempts: Int
        /// The most body bytes a response may have, unless the endpoint says otherwise: 32 MiB by default,
        /// far more than any JSON answer, so that a hostile or broken server cannot fill the process's
        /// memory. A larger answer ends the task with ``NetworkError/responseTooLarge(limit:)`` as soon
        /// as it is known to be too large (its `Content-Length`, or the bytes received). A limit under 1
        /// counts as 1.
        public var maximumResponseBytes: Int
        /// Which redirects tasks follow, unless the endpoint says otherwise: ``RedirectPolicy/follow`` by
        /// default. Credentials never follow a redirect to another origin, whatever the policy.
        public var redirectPolicy: RedirectPolicy
        /// Seconds without a byte, while sending or receiving, after which a task is reported once
        /// as ``TaskEvent/Kind/stalled`` with its row; `nil` (the default) turns the detector off. A threshold
        /// under a millisecond (zero, negative, NaN) counts as a millisecond.
        public var stallThreshold: TimeInterval?

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
            requestTimeout: TimeInterval = 60,
            resourceTimeout: TimeInterval? = nil,
            interceptors: [any RequestInterceptor] = [],
            maximumAttempts: Int = 10,
            stallThreshold: TimeInterval? = nil,
            redirectPolicy: RedirectPolicy = .follow,
            maximumResponseBytes: Int = 32 << 20
        ) {
            self.transport = transport
            self.defaultHeaders = defaultHeaders
            self.logger = logger
            self.duplicatePolicy = duplicatePolicy
            self.validation = validation
            self.statusReader = statusReader
            self.requestTimeout = requestTimeout
            self.resourceTimeout = resourceTimeout
            self.interceptors = interceptors
            self.maximumAttempts = maximumAttempts
            self.stallThreshold = stallThreshold
            self.redirectPolicy = redirectPolicy
            self.maximumResponseBytes = maximumResponseBytes
        }
    }

    /// The pool's configuration.
    public let configuration: Configuration

    let lock = Lock()
    /// The running tasks by id. Invariant: a task is here exactly while its outcome is `nil`;
    /// ``settle(_:with:)`` sets the outcome and removes it in one critical section. Guarded by `lock`,
    /// as is `sequence`, so neither needs the runtime's dynamic exclusivity check (see `DataTask.storage`).
    @exclusivity(unchecked) private var active: [String: DataTask] = [:]
    @exclusivity(unchecked) private var sequence: UInt64 = 0
    /// The most tasks `active` keeps room for once it is empty again; a larger table is released.
    static let keptCapacity = 64
    /// How many tasks `active` has room for (for tests).
    var activeCapacity: Int { lock.withLock { active.capacity } }
    /// The transport when awaited sends without interceptors can run on it directly (see
    /// ``run(_:endpoint:deadline:immediately:)``): a `URLSessionTransport` with no pool-wide interceptors. Decided
    /// once, rather than cast on every send.
    private let directTransport: URLSessionTransport?
    /// The configuration's default headers checked and spelled canonically once, or `nil` when one is
    /// invalid: then every request checks them again, and fails with the endpoint's URL in its error.
    private let checkedDefaultHeaders: [String: String]?

    /// Creates a pool.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        directTransport =
            configuration.interceptors.isEmpty ? configuration.transport as? URLSessionTransport : nil
        checkedDefaultHeaders = HeaderName.checked(configuration.defaultHeaders)
    }

    // MARK: Sending

    /// Sends the endpoint's request under `id` (derived from the request when `nil`) and returns the accepted response.
    ///
    /// Cancelling the calling Swift task withdraws this caller; when no caller is left waiting,
    /// the task is cancelled, down to the `URLSessionTask`. The task starts within this call, on
    /// the thread running it, and stays there until its first wait, usually for the server.
    /// - Throws: ``NetworkError``: every failure, including cancellation, is one of its cases.
    public func send(_ endpoint: some Endpoint, id: String? = nil) async throws(NetworkError) -> Response {
        let (task, finishes) = try start(endpoint, id: id, immediately: true)
        return try await wait(for: task, finishing: finishes).get()
    }

    /// Sends the endpoint's request and parses the accepted response with `parser`.
    /// - Throws: ``NetworkError``; a parser's error arrives as ``NetworkError/decodingFailed(_:)``.
    public func send<Parser: JSONParser>(
        _ endpoint: some Endpoint, parser: Parser, id: String? = nil
    )
        async throws(NetworkError) -> Parser.Model
    {
        let response = try await send(endpoint, id: id)
        return try Self.parse(response, with: parser)
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
        let ended = lock.withLock { () -> (DataTask, Ending)? in
            guard let index = active.index(forKey: id) else { return nil }
            let task = active.values[index]
            return end(task, with: .failure(.cancelled), activeIndex: index).map { (task, $0) }
        }
        guard let (task, ending) = ended else { return false }
        deliver(ending, of: task)
        return true
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
        try endpoint.urlRequest(
            defaultHeaders: checkedDefaultHeaders ?? configuration.defaultHeaders,
            checked: checkedDefaultHeaders != nil,
            timeout: configuration.requestTimeout)
    }

    /// Builds the request, registers its task under the duplicate policy, and starts it unless it joined a running one.
    /// `immediately`: the caller awaits the outcome next, so the task may start sending on the caller's
    /// thread (see ``run(_:endpoint:deadline:immediately:)``).
    /// - Returns: the task, and whether the caller is to finish it (it started the task's transfer and
    ///   waits as its ``DataTask/Resumer/finisher(_:)``).
    func start(
        _ endpoint: some Endpoint, id: String?, immediately: Bool
    ) throws(NetworkError) -> (task: DataTask, finishes: Bool) {
        let request = try makeRequest(endpoint)
        let deadline = endpoint.resourceTimeout ?? configuration.resourceTimeout
        if let deadline, !(deadline > 0 && deadline.isFinite) {
            throw .invalidEndpoint(
                url: endpoint.urlString,
                reason:
                    "the resource timeout must be a positive, finite number of seconds (nil for none), not \(deadline)")
        }
        let givenID = id?.isEmpty == false ? id : nil
        var taskID = givenID ?? TaskID.derive(from: request)
        var replaced: DataTask?
        let (task, isNew) = try lock.withLock { () throws(NetworkError) -> (DataTask, Bool) in
            if let running = active[taskID] {
                let isSame = running.isSameCall(as: request, hasInterceptors: !endpoint.interceptors.isEmpty)
                if givenID == nil, !isSame {
                    // A derived id names the call: a different call that derives the same id (a header that
                    // is not a credential, an endpoint's own interceptors) is a call of its own, never a duplicate.
                    taskID = uniqueID(after: taskID)
                } else {
                    switch configuration.duplicatePolicy {
                    case .reject:
                        throw .duplicateTask(id: taskID)
                    case .join:
                        guard isSame else { throw .duplicateTask(id: taskID) }
                        return (running, false)
                    case .replace:
                        replaced = running
                    }
                }
            }
            sequence += 1
            let task = DataTask(id: taskID, request: request, endpoint: endpoint, sequence: sequence, lock: lock)
            active[taskID] = task
            return (task, true)
        }
        if let replaced { settle(replaced, with: .failure(.cancelled)) }
        return (task, isNew && run(task, endpoint: endpoint, deadline: deadline, immediately: immediately))
    }

    /// `id` with the first of ` (2)`, ` (3)`… that no running task has; call with `lock` held.
    private func uniqueID(after id: String) -> String {
        var number = 2
        while active[id + " (\(number))"] != nil { number += 1 }
        return id + " (\(number))"
    }

    /// Starts the runner, what performs the call and settles it, and the task's watchdog and stall
    /// monitor. The runner is a Swift task; except for a caller that waits (`immediately`), without
    /// interceptors, over ``URLSessionTransport``: then it is the `URLSessionTask` alone, whose
    /// completion wakes the caller with the answer, as `data(for:)` would, and the caller ends the task
    /// (see ``transfer(_:transport:)``), so no Swift task is created, woken, and waited for in between.
    /// A Swift runner started `immediately` runs on the caller's thread until its first wait (usually
    /// for the server), rather than waking another thread first; only for a caller that waits for the
    /// outcome next, since a transport that answers without waiting then ends the task before `run`
    /// returns. A send with a completion handler starts a Swift runner, so that its handler is not
    /// called on the session's queue (unless it joined an awaited send's task whose caller has gone: a
    /// joined caller is told where the task ends).
    /// - Returns: whether the task runs as its transfer alone, which its caller finishes (see ``finish(_:with:)``).
    private func run(_ task: DataTask, endpoint: some Endpoint, deadline: TimeInterval?, immediately: Bool) -> Bool {
        log(.started, task)
        // Literal closures where the platform allows: converting a closure value to a task's operation
        // costs allocations of its own per task (`startImmediately` passes one on, on the platforms that
        // have `Task.immediate`; the fast path over URLSession has no Swift task at all).
        let runner: DataTask.Runner
        if immediately, let transport = directTransport, endpoint.interceptors.isEmpty {
            runner = .transfer(transfer(task, transport: transport))
        } else {
            runner = .task(
                immediately
                    ? Self.startImmediately { [self] in
                        await performAndSettle(task, endpoint: endpoint, deadline: deadline)
                    }
                    : Task { [self] in await performAndSettle(task, endpoint: endpoint, deadline: deadline) })
        }
        let watchdog = deadline.map { seconds in
            Alarm(after: seconds) { [self] _ in settle(task, with: .failure(.deadlineExceeded(seconds: seconds))) }
        }
        let stallMonitor = configuration.stallThreshold.map { threshold in
            Alarm(after: threshold) { [self] alarm in checkForStall(of: task, threshold: threshold, alarm: alarm) }
        }
        let alreadyEnded = lock.withLock {
            guard !task.storage.hasEnded else { return true }
            task.storage.runner = runner
            task.storage.watchdog = watchdog
            task.storage.stallMonitor = stallMonitor
            return false
        }
        if alreadyEnded {
            runner.cancel()
            watchdog?.cancel()
            stallMonitor?.cancel()
        }
        if case .transfer = runner { return true }
        return false
    }

    /// A Swift task running `operation` on the calling thread until its first wait, where the platform
    /// has `Task.immediate` (Swift 6.2; macOS, iOS, tvOS and watchOS 26); elsewhere an ordinary task.
    private static func startImmediately(
        _ operation: sending @escaping @isolated(any) () async -> Void
    ) -> Task<Void, Never> {
        #if compiler(>=6.2)
            if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
                return Task.immediate(operation: operation)
            }
        #endif
        return Task(operation: operation)
    }

    /// The runner's work: the call, then the task's end with its outcome.
    private func performAndSettle(_ task: DataTask, endpoint: some Endpoint, deadline: TimeInterval?) async {
        settle(task, with: await perform(task, endpoint: endpoint, deadline: deadline), byRunner: true)
    }

    /// Starts the task's one attempt on `transport` with no Swift task of its own. The transfer's
    /// completion, on the session's queue, hands the answer to the caller that started the task, which
    /// finishes it on its own thread: the session's queue runs every transfer of the session one after
    /// another, so what it does for each limits how many requests a second the session carries. If that
    /// caller no longer waits (it was cancelled while callers that joined still wait), the completion
    /// finishes the task itself.
    private func transfer(_ task: DataTask, transport: URLSessionTransport) -> Transfer {
        let bytesSent = task.request.httpBody?.count ?? 0
        let number = openAttempt(of: task, bytesSent: bytesSent)
        return transport.start(task.request, context: context(of: task)) { [self] result in
            let answer = DataTask.Answer(
                result: result, attempt: number, bytesSent: bytesSent, time: MonotonicClock.now())
            switch takeFinisher(of: task) {
            case .some(let finisher): finisher.resume(returning: .answered(answer))
            case nil: finish(task, with: answer)
            }
        }
    }

    /// Takes a running task's finisher out of its waiters and marks the task as being finished, if the
    /// finisher still waits.
    private func takeFinisher(of task: DataTask) -> UnsafeContinuation<DataTask.Wake, Never>? {
        lock.withLock {
            guard !task.storage.hasEnded,
                case .finisher(let continuation)? = task.storage.waiters.remove(where: { $0.resumer.isFinisher })?
                    .resumer
            else { return nil }
            task.storage.finishing = true
            return continuation
        }
    }

    /// Closes the attempt with the transport's answer, validates it and ends the task with it.
    /// - Returns: the task's outcome: this one, or the one that ended it first (a cancel, the deadline).
    @discardableResult
    private func finish(_ task: DataTask, with answer: DataTask.Answer) -> DataTask.Outcome {
        let outcome = outcome(
            of: answer.attempt, of: task, request: task.request, bytesSent: answer.bytesSent, answer: answer.result,
            at: answer.time)
        if settle(task, with: outcome, byRunner: true) { return outcome }
        return lock.withLock { task.storage.outcome } ?? outcome
    }

    /// Reports the task once if, while sending or receiving, nothing has arrived for `threshold`
    /// seconds (at least a millisecond); otherwise sets `alarm` for when that would be.
    private func checkForStall(of task: DataTask, threshold: TimeInterval, alarm: Alarm) {
        let limit = max(MonotonicClock.nanoseconds(threshold), 1_000_000)  // NaN too: a millisecond
        let (idle, watching, ended) = lock.withLock { () -> (UInt64, Bool, Bool) in
            let phase = task.storage.phase
            let ended = task.storage.hasEnded
            return (MonotonicClock.now() &- task.storage.lastProgress, phase == .sending || phase == .receiving, ended)
        }
        if ended { return alarm.cancel() }
        if watching, idle >= limit {
            lock.withLock { task.storage.stallReported = true }
            log(.stalled, task, snapshot: task.snapshot)
            return alarm.cancel()
        }
        alarm.set(after: Double(watching ? limit - idle : limit) / 1e9)
    }

    /// Sends the task's request: once when there are no interceptors; else as
    /// ``intercepted(_:endpoint:deadline:interceptors:)`` does.
    private func perform(_ task: DataTask, endpoint: some Endpoint, deadline: TimeInterval?) async -> DataTask.Outcome {
        let interceptors = configuration.interceptors + endpoint.interceptors
        guard interceptors.isEmpty else {
            return await intercepted(task, endpoint: endpoint, deadline: deadline, interceptors: interceptors)
        }
        // Nothing can adapt or retry the request: one attempt, and no context for interceptors to read.
        // The task is still in its first phase, `.preparing`, until the attempt opens.
        if Task.isCancelled { return .failure(.cancelled) }
        return await send(task.request, for: task)
    }

    /// Sends the task's request until it succeeds or no interceptor retries it: adapt, send,
    /// validate, ask the retry chain, back off, and again.
    ///
    /// A function of its own, never inlined, because its async frame is large (the retry loop keeps
    /// much across its waits), and every task's runner would otherwise allocate it, interceptors or not.
    @inline(never)
    private func intercepted(
        _ task: DataTask, endpoint: some Endpoint, deadline: TimeInterval?, interceptors: [any RequestInterceptor]
    ) async -> DataTask.Outcome {
        let retriers = endpoint.interceptors + configuration.interceptors
        var attempt = 1
        while true {
            let context = attemptContext(attempt, of: task, endpoint: endpoint, deadline: deadline)
            setPhase(.preparing, of: task)
            var request = task.request
            do {
                for interceptor in interceptors {
                    request = try await interceptor.adapt(request, context: context)
                }
            } catch {
                return .failure(NetworkError.from(error, timeout: task.request.timeoutInterval))
            }
            if Task.isCancelled { return .failure(.cancelled) }
            let outcome = await send(request, for: task)
            guard case .failure(let failure) = outcome else { return outcome }
            if case .cancelled = failure { return outcome }
            if attempt >= configuration.maximumAttempts { return outcome }
            var decision = RetryDecision.doNotRetry
            for retrier in retriers {
                decision = await retrier.retry(request, failing: failure, context: context)
                if case .doNotRetry = decision { continue }
                break
            }
            switch decision {
            case .doNotRetry: return outcome
            case .fail(let error): return .failure(error)
            case .retry(let delay):
                let wait = delay > 0 ? delay : 0  // NaN too
                // The next attempt could not start before the deadline: say so now rather than wait for it.
                if let deadline, task.elapsed + wait >= deadline {
                    return .failure(.deadlineExceeded(seconds: deadline))
                }
                attempt += 1
                lock.withLock {
                    task.storage.attempts = attempt
                    task.storage.phase = .backingOff(beforeAttempt: attempt)
                }
                log(.retrying, task, error: failure, delay: wait)
                if wait > 0 {
                    do { try await Task.sleep(nanoseconds: MonotonicClock.nanoseconds(wait)) } catch {
                        return .failure(.cancelled)
                    }
                }
                if Task.isCancelled { return .failure(.cancelled) }
            }
        }
    }

    /// What interceptors learn of attempt `attempt`, and the hooks they report through.
    private func attemptContext(
        _ attempt: Int, of task: DataTask, endpoint: some Endpoint, deadline: TimeInterval?
    ) -> AttemptContext {
        let elapsed = task.elapsed
        return AttemptContext(
            taskID: task.id, attempt: attempt, method: HTTPMethod(rawValue: task.method),
            requiresAuthentication: endpoint.requiresAuthentication,
            elapsed: elapsed, remaining: deadline.map { $0 - elapsed },
            onWaitingForCredential: { [self] in setPhase(.waitingForCredential, of: task) },
            onCredentialRefreshed: { [self] in log(.credentialRefreshed, task) })
    }

    /// One attempt: sends the request, times it, and validates the answer.
    ///
    /// Only what must outlive the wait for the transport is kept here; the work before and after is
    /// done by synchronous functions, so that this async frame, allocated for every attempt, stays small.
    private func send(_ request: URLRequest, for task: DataTask) async -> DataTask.Outcome {
        let context = context(of: task)
        let bytesSent = request.httpBody?.count ?? 0
        let number = openAttempt(of: task, bytesSent: bytesSent)
        let answer: Result<(Data, HTTPURLResponse), any Error>
        do {
            answer = .success(try await configuration.transport.send(request, context: context))
        } catch {
            answer = .failure(error)
        }
        return outcome(
            of: number, of: task, request: request, bytesSent: bytesSent, answer: answer, at: MonotonicClock.now())
    }

    /// The context a transport sends the task's request with: its progress goes to the task. It
    /// shares the task's endpoint, rather than boxing the endpoint again for every attempt.
    private func context(of task: DataTask) -> TransportContext {
        TransportContext(
            taskID: task.id, endpoint: task.endpoint,
            redirectPolicy: task.endpoint.redirectPolicy ?? configuration.redirectPolicy,
            maximumResponseBytes: responseLimit(of: task)
        ) { [self] progress in record(progress, of: task) }
    }

    /// The most body bytes a response to the task may have: its endpoint's limit or the pool's, at least 1.
    private func responseLimit(of task: DataTask) -> Int {
        max(1, task.endpoint.maximumResponseBytes ?? configuration.maximumResponseBytes)
    }

    /// Marks the start of an attempt on the task; returns the attempt's number.
    @inline(never)
    private func openAttempt(of task: DataTask, bytesSent: Int) -> Int {
        lock.withLock { () -> Int in
            let now = MonotonicClock.now()
            task.storage.started = task.storage.started ?? now
            task.storage.attemptStart = now
            task.storage.attemptFirstByte = nil
            task.storage.attemptBytes = 0
            task.storage.openAttempt = (task.storage.attempts, bytesSent)
            task.storage.lastProgress = now
            task.storage.phase = .sending
            return task.storage.attempts
        }
    }

    /// Closes attempt `number` with the transport's answer, which came at `time`: its timing, and the
    /// response validated or the error typed.
    @inline(never)
    private func outcome(
        of number: Int, of task: DataTask, request: URLRequest, bytesSent: Int,
        answer: Result<(Data, HTTPURLResponse), any Error>, at time: UInt64
    ) -> DataTask.Outcome {
        switch answer {
        case .success(let (body, _)) where body.count > responseLimit(of: task):
            // A transport that does not stop at the limit itself (``URLSessionTransport`` does).
            finishAttempt(number, of: task, bytesSent: bytesSent, received: body.count, status: nil, at: time)
            return .failure(.responseTooLarge(limit: responseLimit(of: task)))
        case .success(let (body, httpResponse)):
            let timing = finishAttempt(
                number, of: task, bytesSent: bytesSent, received: body.count, status: httpResponse.statusCode, at: time)
            let response = Response(
                request: request, httpResponse: httpResponse, body: body, duration: timing.duration,
                statusReader: task.endpoint.statusReader ?? configuration.statusReader, timing: timing)
            return validate(response)
        case .failure(let error):
            finishAttempt(number, of: task, bytesSent: bytesSent, received: nil, status: nil, at: time)
            return .failure(NetworkError.from(error, timeout: request.timeoutInterval))
        }
    }

    /// Records what the transport reported: first byte, body bytes, redirects.
    private func record(_ progress: TransportContext.Progress, of task: DataTask) {
        switch progress {
        case .response:
            lock.withLock {
                guard !task.storage.hasEnded else { return }  // an ended task's figures stay as they were
                let now = MonotonicClock.now()
                task.storage.firstByte = task.storage.firstByte ?? now
                task.storage.attemptFirstByte = task.storage.attemptFirstByte ?? now
                task.storage.lastProgress = now
            }
        case .bytes(let count):
            lock.withLock {
                guard !task.storage.hasEnded else { return }
                let now = MonotonicClock.now()
                task.storage.firstByte = task.storage.firstByte ?? now
                task.storage.attemptFirstByte = task.storage.attemptFirstByte ?? now
                task.storage.bytesReceived += count
                task.storage.attemptBytes += count
                task.storage.lastProgress = now
                task.storage.phase = .receiving
            }
        case .redirect(let status, let url):
            let running = lock.withLock { () -> Bool in
                guard !task.storage.hasEnded else { return false }
                task.storage.lastProgress = MonotonicClock.now()
                task.storage.redirects += 1
                return true
            }
            // A transport may still report after a cancel or the deadline; the task's events have ended.
            guard running else { return }
            log(.redirected, task, statusCode: status, redirectURL: Redactor.default.redact(url))
        }
    }

    /// Closes the attempt's timing at `time`; `received` is the body size when the transport returned one.
    /// If the task ended meanwhile, its attempt was closed then and stays as it was.
    @discardableResult
    private func finishAttempt(
        _ number: Int, of task: DataTask, bytesSent: Int, received: Int?, status: Int?, at time: UInt64
    )
        -> TaskTimings.Attempt
    {
        lock.withLock {
            guard task.storage.openAttempt?.number == number else {
                return task.storage.attemptTimings.last { $0.number == number }
                    ?? TaskTimings.Attempt(
                        number: number, start: task.offset(task.storage.attemptStart), firstByte: nil,
                        end: task.offset(time), bytesSent: bytesSent, bytesReceived: received ?? 0,
                        statusCode: status)
            }
            return closeAttempt(of: task, received: received, status: status, at: time)
        }
    }

    /// Appends the open attempt's timing and closes it; call with `lock` held.
    @discardableResult
    private func closeAttempt(
        of task: DataTask, received: Int?, status: Int?, at now: UInt64 = MonotonicClock.now()
    ) -> TaskTimings.Attempt {
        let open = task.storage.openAttempt ?? (task.storage.attempts, 0)
        let bytes = max(task.storage.attemptBytes, received ?? 0)
        // Transports that report no progress still count what they returned.
        task.storage.bytesReceived += bytes - task.storage.attemptBytes
        task.storage.attemptBytes = bytes
        let timing = TaskTimings.Attempt(
            number: open.number, start: task.offset(task.storage.attemptStart),
            firstByte: task.storage.attemptFirstByte.map(task.offset), end: task.offset(now),
            bytesSent: open.bytesSent, bytesReceived: bytes, statusCode: status)
        task.storage.attemptTimings.append(timing)
        task.storage.openAttempt = nil
        return timing
    }

    private func setPhase(_ phase: DataTask.Phase, of task: DataTask) {
        lock.withLock { task.storage.phase = phase }
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
    /// `byRunner`: the runner itself ends the task, so it needs no cancelling.
    /// - Returns: whether this call ended the task.
    @discardableResult
    func settle(_ task: DataTask, with outcome: DataTask.Outcome, byRunner: Bool = false) -> Bool {
        guard var ending = lock.withLock({ end(task, with: outcome) }) else { return false }
        if byRunner { ending.runner = nil }
        deliver(ending, of: task)
        return true
    }

    /// What ending a task leaves to do outside the lock.
    private struct Ending {
        let outcome: DataTask.Outcome
        let waiters: DataTask.Waiters
        var runner: DataTask.Runner?
        let watchdog: Alarm?
        let stallMonitor: Alarm?
    }

    /// Sets the outcome and removes the task from the active set; call with `lock` held. `activeIndex`:
    /// where the caller found the task in the active set, if it did.
    /// - Returns: `nil` when the task had ended already.
    private func end(
        _ task: DataTask, with outcome: DataTask.Outcome, activeIndex: [String: DataTask].Index? = nil
    ) -> Ending? {
        guard !task.storage.hasEnded else { return nil }
        // One clock reading for the end of the task and of an attempt still under way (a cancel, the
        // deadline), which ends with it so that its timings are final.
        let now = MonotonicClock.now()
        if task.storage.openAttempt != nil { closeAttempt(of: task, received: nil, status: nil, at: now) }
        task.storage.outcome = outcome
        task.storage.endTime = now
        // The task may have been replaced under its id (`DuplicatePolicy.replace`): remove only itself.
        if let index = activeIndex ?? active.index(forKey: task.id), active.values[index] === task {
            active.remove(at: index)
            // A dictionary keeps the capacity it grew to: once a burst has drained, give its table back.
            if active.isEmpty, active.capacity > Self.keptCapacity { active = [:] }
        }
        let ending = Ending(
            outcome: outcome, waiters: task.storage.waiters, runner: task.storage.runner,
            watchdog: task.storage.watchdog, stallMonitor: task.storage.stallMonitor)
        task.storage.waiters = DataTask.Waiters()
        task.storage.runner = nil
        task.storage.watchdog = nil
        task.storage.stallMonitor = nil
        return ending
    }

    /// Logs the end, resumes the waiters, and stops whatever of the task still runs: the runner
    /// itself, a cancel or the deadline may have ended it, and nothing of it keeps running.
    private func deliver(_ ending: Ending, of task: DataTask) {
        switch ending.outcome {
        case .success: log(.finished, task)
        case .failure(.cancelled): log(.cancelled, task)
        case .failure: log(.failed, task)
        }
        for waiter in ending.waiters { waiter.resumer.resume(ending.outcome) }
        ending.runner?.cancel()
        ending.watchdog?.cancel()
        ending.stallMonitor?.cancel()
    }

    /// Awaits the task's outcome; `finishing`: as its finisher, ending the task with the transport's
    /// answer when that comes first (see ``DataTask/Resumer/finisher(_:)``). Cancelling the calling
    /// Swift task withdraws this caller (it gets `.cancelled`); the task itself is cancelled when no
    /// caller is left.
    private func wait(for task: DataTask, finishing: Bool) async -> DataTask.Outcome {
        guard finishing else { return await suspend(on: task, as: DataTask.Resumer.continuation) }
        switch await suspend(on: task, as: DataTask.Resumer.finisher) {
        case .ended(let outcome): return outcome
        case .answered(let answer): return finish(task, with: answer)
        }
    }

    /// Waits among the task's waiters, resumed through `resumer`, until the pool resumes it.
    private func suspend<Value>(
        on task: DataTask, as resumer: (UnsafeContinuation<Value, Never>) -> DataTask.Resumer
    ) async -> Value {
        let token = lock.withLock { () -> UInt64 in
            sequence += 1
            return sequence
        }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                addWaiter(to: task, token: token, resumer: resumer(continuation))
                if Task.isCancelled { withdraw(token, from: task) }
            }
        } onCancel: {
            withdraw(token, from: task)
        }
    }

    /// Resumes `resumer` once with the task's outcome: now if it has ended, else when it ends.
    func addWaiter(to task: DataTask, token: UInt64, resumer: DataTask.Resumer) {
        let outcome = lock.withLock { () -> DataTask.Outcome? in
            if let outcome = task.storage.outcome { return outcome }
            task.storage.waiters.append((token, resumer))
            return nil
        }
        if let outcome { resumer.resume(outcome) }
    }

    private func withdraw(_ token: UInt64, from task: DataTask) {
        let withdrawn = lock.withLock { () -> (waiter: DataTask.Waiter, wasLast: Bool)? in
            guard let waiter = task.storage.waiters.remove(where: { $0.token == token }) else { return nil }
            return (waiter, task.storage.waiters.isEmpty && !task.storage.finishing)
        }
        guard let withdrawn else { return }
        if withdrawn.wasLast { settle(task, with: .failure(.cancelled)) }
        withdrawn.waiter.resumer.resume(.failure(.cancelled))
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

    private func log(
        _ kind: TaskEvent.Kind, _ task: DataTask, error retryError: NetworkError? = nil, delay: TimeInterval? = nil,
        statusCode eventStatus: Int? = nil, redirectURL: String? = nil, snapshot: TaskSnapshot? = nil
    ) {
        guard let logger = configuration.logger else { return }
        let (bytes, attempts, outcome) = lock.withLock {
            (task.storage.bytesReceived, task.storage.attempts, task.storage.outcome)
        }
        var statusCode = eventStatus ?? retryError?.statusCode
        var error = retryError
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
                statusCode: statusCode, bytesReceived: bytes, error: error, delay: delay, redirectURL: redirectURL,
                snapshot: snapshot))
    }
}
