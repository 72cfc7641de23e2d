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
        /// Keeps what a live view of the pool needs (see ``PoolInspector``): the pool gives it its events
        /// after ``logger`` and lets it list and cancel its tasks. `nil` (the default) for none: a pool is
        /// never inspected unless it is given one.
        public var inspector: PoolInspector?
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
        /// as it is known to be too large (its `Content-Length`, or the bytes received). A download to a
        /// file has no such limit; a stream (``TaskPool/stream(_:id:)``, ``TaskPool/events(_:id:)``) has it
        /// for one line or event, and for the bytes its reader has not read yet where the transport cannot
        /// pause the transfer (``URLSessionTransport`` on Linux). A limit under 1 counts as 1.
        public var maximumResponseBytes: Int
        /// Which redirects tasks follow, unless the endpoint says otherwise: ``RedirectPolicy/follow`` by
        /// default. Credentials never follow a redirect to another origin, whatever the policy.
        public var redirectPolicy: RedirectPolicy
        /// Seconds without a byte, while sending or receiving, after which a task is reported once
        /// as ``TaskEvent/Kind/stalled`` with its row; `nil` (the default) turns the detector off. A threshold
        /// under a millisecond (zero, negative, NaN) counts as a millisecond.
        public var stallThreshold: TimeInterval?
        /// Where answers are stored for later requests (``MemoryCacheStore``, ``DiskCacheStore``); `nil`
        /// (the default) for no cache. See ``CachePolicy`` for what is stored and used.
        public var cache: (any CacheStore)?
        /// How tasks use ``cache``, unless the endpoint or the call says otherwise: ``CachePolicy/followProtocol``.
        public var cachePolicy: CachePolicy
        /// The most tasks that run at once; the rest wait in the pool's queue (phase ``DataTask/Phase/queued``,
        /// in the table with their place), by ``RequestPriority`` and then in the order they came. 64 by
        /// default, as OkHttp's dispatcher. A task holds its slot through its retries; a joined caller
        /// takes none, and an answer from the cache needs none. Less than 1 counts as 1.
        public var maximumConcurrentTasks: Int
        /// The most tasks that run at once for one host (scheme, host and port). 6 by default: the
        /// connections `URLSession` opens to one host, so that a seventh request waits here, where it can
        /// be seen, prioritised and cancelled, rather than inside the session with its timeout running.
        /// Raise it for a transport with more connections, or HTTP/2 (``maximumConcurrentTasks`` still
        /// bounds the whole). Streams and event streams hold their slot while open. Less than 1 counts as 1.
        public var maximumTasksPerHost: Int

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
            maximumResponseBytes: Int = 32 << 20,
            cache: (any CacheStore)? = nil,
            cachePolicy: CachePolicy = .followProtocol,
            maximumConcurrentTasks: Int = 64,
            maximumTasksPerHost: Int = 6,
            inspector: PoolInspector? = nil
        ) {
            self.inspector = inspector
            self.maximumConcurrentTasks = maximumConcurrentTasks
            self.maximumTasksPerHost = maximumTasksPerHost
            self.cache = cache
            self.cachePolicy = cachePolicy
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
    @exclusivity(unchecked) var active: [String: DataTask] = [:]
    @exclusivity(unchecked) private var sequence: UInt64 = 0
    /// The most tasks `active` keeps room for once it is empty again; a larger table is released.
    static let keptCapacity = 64
    /// How many tasks `active` has room for (for tests).
    var activeCapacity: Int { lock.withLock { active.capacity } }
    /// Whether the pool has interceptors of its own: decided once, rather than asked on every send.
    let hasInterceptors: Bool
    /// Who receives the pool's events: its logger, its inspector, both, or nobody; decided once.
    private let eventLogger: (any NetworkLogger)?
    /// The configuration's default headers checked and spelled canonically once, or `nil` when one is
    /// invalid: then every request checks them again, and fails with the endpoint's URL in its error.
    private let checkedDefaultHeaders: [String: String]?
    /// The running tasks' deadlines and stall checks, earliest first, and the one dispatch timer set
    /// for the earliest (made at the first) and when it is set for; guarded by `lock` (see TaskPool+Timers).
    @exclusivity(unchecked) var timers = TimerHeap<DataTask>()
    @exclusivity(unchecked) var timerSource: (any DispatchSourceTimer)?
    @exclusivity(unchecked) var timerSourceTime = UInt64.max
    /// Which tasks run and which wait for a slot; guarded by `lock` (see ``Scheduler``).
    @exclusivity(unchecked) var scheduler: Scheduler<DataTask>

    /// Creates a pool.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        hasInterceptors = !configuration.interceptors.isEmpty
        eventLogger =
            switch (configuration.logger, configuration.inspector) {
            case (nil, nil): nil
            case (let logger?, nil): logger
            case (nil, let inspector?): inspector
            case (let logger?, let inspector?): CombinedLogger([logger, inspector])
            }
        checkedDefaultHeaders = HeaderName.checked(configuration.defaultHeaders)
        scheduler = Scheduler(
            maximumTotal: configuration.maximumConcurrentTasks, maximumPerHost: configuration.maximumTasksPerHost)
        configuration.inspector?.attach(self)
    }

    deinit {
        timerSource?.cancel()
        // Tasks still waiting for a slot (a paused pool let go of): nothing would ever start them, so each
        // of their callers gets `cancelled`. A running task keeps its pool alive until it ends.
        // Under the lock: the tasks share it, and their holders may still read them.
        let endings = lock.withLock {
            active.values.filter { $0.storage.isQueued }.compactMap {
                task -> TaskStateMachine<DataTask.Resumer>.Ending? in
                task.storage.isQueued = false
                task.storage.endTime = MonotonicClock.now()
                return task.storage.machine.end(with: .failure(.cancelled))
            }
        }
        for ending in endings {
            for waiter in ending.waiters { waiter.resumer.resume(ending.outcome) }
        }
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
        let (task, finishes) = try start(endpoint, id: id, immediately: true)
        return try await wait(for: task, finishing: finishes, progress: progress).get()
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

    // MARK: Scheduling

    /// Stops starting tasks: new sends, and those already waiting, wait in the queue until ``resume()``;
    /// tasks already running go on. For an app going to the background, say. Nothing is lost or sent
    /// twice: a waiting task can still be cancelled, and its deadline still counts.
    public func pause() {
        lock.withLock { scheduler.pause() }
    }

    /// Starts tasks again after ``pause()``: the waiting ones, as many as the limits allow, by priority.
    public func resume() {
        let started = lock.withLock { () -> [DataTask] in
            let started = scheduler.resume()
            for task in started { holdSlot(task) }
            return started
        }
        run(dequeued: started)
    }

    /// Whether the pool is paused (see ``pause()``).
    public var isPaused: Bool { lock.withLock { scheduler.isPaused } }

    /// The running task with this id gets `priority`; if it waits in the queue, it moves to the back of
    /// that priority's line. O(1).
    /// - Returns: whether a running or waiting task has this id.
    @discardableResult
    public func reprioritize(id: String, to priority: RequestPriority) -> Bool {
        lock.withLock {
            guard let task = active[id] else { return false }
            task.storage.priority = priority
            _ = scheduler.reprioritize(task, host: task.storage.host, to: priority)
            return true
        }
    }

    /// How many tasks wait in the queue for a slot.
    public var queuedCount: Int { lock.withLock { scheduler.queuedCount } }

    /// A task leaving the queue takes its slot; call with `lock` held.
    private func holdSlot(_ task: DataTask) {
        task.storage.isQueued = false
        task.storage.holdsSlot = true
    }

    /// Runs tasks that left the queue (their deadlines were set when they were queued).
    private func run(dequeued tasks: [DataTask]) {
        for task in tasks {
            let deadline = task.endpoint.resourceTimeout ?? configuration.resourceTimeout
            _ = run(task, endpoint: task.endpoint, deadline: deadline, immediately: false, deadlineSet: true)
        }
    }

    /// Cancels every running task.
    /// - Returns: how many were cancelled.
    @discardableResult
    public func cancelAll() -> Int {
        // Waiting tasks first, so that none of them starts in a slot a cancelled one frees.
        let tasks = lock.withLock { active.values.sorted { $0.storage.isQueued && !$1.storage.isQueued } }
        return tasks.reduce(0) { count, task in
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
    /// `revalidating`: a background validation of a stale answer the cache gave (see ``revalidate(_:id:)``).
    func start(
        _ endpoint: some Endpoint, id: String?, immediately: Bool, delivery: Delivery = .memory,
        waiter: DataTask.Resumer? = nil, revalidating: Bool = false
    ) throws(NetworkError) -> (task: DataTask, finishes: Bool) {
        let request = try makeRequest(endpoint)
        var cache: CacheTransaction?
        var cached: (response: Response, revalidate: Bool)?
        let cachePolicy = endpoint.cachePolicy ?? configuration.cachePolicy
        if cachePolicy == .cacheOnly, configuration.cache == nil || !delivery.isMemory {
            // Cache only, where no cache can answer (the pool has none, or the body goes to a file or a
            // stream): never the network.
            throw .notCached(url: Redactor.default.redact(request.url))
        }
        if let store = configuration.cache, delivery.isMemory {
            switch CacheTransaction.lookup(
                request, in: store, policy: cachePolicy, revalidating: revalidating)
            {
            case .send(let transaction): cache = transaction
            case .answer(let stored, let source, let age, let revalidate):
                let response = CacheTransaction.response(
                    stored, for: request, source: source, age: age,
                    statusReader: endpoint.statusReader ?? configuration.statusReader)
                cached = (response, revalidate)
            case .notCached: throw .notCached(url: Redactor.default.redact(request.url))
            }
        }
        // A body that is not bytes in the request (a file) is only asked for where there can be one.
        let upload = request.httpBody == nil && request.httpMethod != nil ? try endpoint.upload(for: request) : .none
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
        let host = cached == nil ? URLParts.origin(of: request.url) ?? "" : ""
        var queued = false
        let (task, isNew) = try lock.withLock { () throws(NetworkError) -> (DataTask, Bool) in
            if let running = active[taskID] {
                let isSame =
                    delivery.isMemory
                    && running.isSameCall(as: request, hasInterceptors: !endpoint.interceptors.isEmpty)
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
                        if let waiter { _ = running.storage.machine.add((0, waiter)) }
                        return (running, false)
                    case .replace:
                        replaced = running
                    }
                }
            }
            sequence += 1
            let task = DataTask(
                id: taskID, request: request, endpoint: endpoint, sequence: sequence, lock: lock, delivery: delivery,
                upload: upload, cache: cache)
            if let waiter { _ = task.storage.machine.add((0, waiter)) }
            active[taskID] = task
            if cached == nil {
                // It runs now, or waits for a slot; then its deadline counts from now, in the queue.
                task.storage.host = host
                task.storage.priority = endpoint.priority
                if scheduler.admit(task, host: host, priority: endpoint.priority) {
                    task.storage.holdsSlot = true
                } else {
                    task.storage.isQueued = true
                    queued = true
                    if let deadline { setTimer(.deadline, of: task, after: deadline) }
                }
            }
            return (task, true)
        }
        if let replaced { settle(replaced, with: .failure(.cancelled)) }
        if isNew, let cached {
            // Answered by the cache: the task starts and ends here, and a stale answer is validated by a
            // task of its own.
            log(.started, task)
            settle(task, with: validate(cached.response))
            if cached.revalidate { revalidate(endpoint, id: task.id) }
            return (task, false)
        }
        if queued {
            // Started when a slot frees: a caller that waits for it next waits as its finisher, so that
            // the transport's answer wakes it (see ``run(_:endpoint:deadline:immediately:deadlineSet:)``).
            log(.queued, task)
            return (task, immediately)
        }
        return (task, isNew && run(task, endpoint: endpoint, deadline: deadline, immediately: immediately))
    }

    /// Validates a stale answer the cache gave, as a task of its own named after the one answered
    /// (`"<id> (revalidation)"`), whose answer updates the store; nobody waits for it.
    private func revalidate(_ endpoint: some Endpoint, id: String) {
        _ = try? start(endpoint, id: id + " (revalidation)", immediately: false, revalidating: true)
    }

    /// A number no other waiter or task of the pool has.
    func nextToken() -> UInt64 {
        lock.withLock { () -> UInt64 in
            sequence += 1
            return sequence
        }
    }

    /// `id` with the first of ` (2)`, ` (3)`… that no running task has; call with `lock` held.
    private func uniqueID(after id: String) -> String {
        var number = 2
        while active[id + " (\(number))"] != nil { number += 1 }
        return id + " (\(number))"
    }

    /// Starts the runner, what performs the call and settles it, and sets the task's deadline and stall
    /// check. When no interceptor can adapt or retry the request, the runner is the transfer alone, with
    /// no Swift task: for a caller that waits (`immediately`), the transport's answer wakes that caller,
    /// which ends the task on its own thread (see ``answered(_:with:)``); for a completion handler, the
    /// answer is finished in a Swift task made then, so that the handler never runs on the transport's
    /// thread. Otherwise (interceptors, or a stream) the runner is a Swift task that runs the attempts
    /// (see ``perform(_:endpoint:deadline:)``); started `immediately`, it runs on the caller's thread
    /// until its first wait.
    /// - Returns: whether the task runs as its transfer alone, which its caller finishes.
    /// `deadlineSet`: the task was queued, and its deadline was set then.
    private func run(
        _ task: DataTask, endpoint: some Endpoint, deadline: TimeInterval?, immediately: Bool, deadlineSet: Bool = false
    ) -> Bool {
        log(.started, task)
        // Literal closures where the platform allows: converting a closure value to a task's operation
        // costs allocations of its own per task (`startImmediately` passes one on, on the platforms that
        // have `Task.immediate`; the transfer alone has no Swift task at all).
        let runner: DataTask.Runner
        if !hasInterceptors, endpoint.interceptors.isEmpty, immediately || task.delivery.isMemory {
            runner = .transfer(transfer(task))
        } else {
            runner = .task(
                immediately
                    ? immediateTask { [self] in
                        await performAndSettle(task, endpoint: endpoint, deadline: deadline)
                    }
                    : Task { [self] in await performAndSettle(task, endpoint: endpoint, deadline: deadline) })
        }
        let threshold = configuration.stallThreshold
        let ended = lock.withLock { () -> DataTask.Runner? in
            if let ended = task.storage.machine.started(runner: runner) { return ended }
            if !deadlineSet, let deadline { setTimer(.deadline, of: task, after: deadline) }
            if let threshold { setTimer(.stall, of: task, after: threshold) }
            return nil
        }
        ended?.cancel()
        if case .transfer = runner { return immediately }
        return false
    }

    /// Ends a task with `outcome` unless it has ended already: the one place a task's outcome is
    /// set and the one place it leaves the active set, both under the lock.
    /// `byRunner`: the runner itself ends the task, so it needs no cancelling.
    /// - Returns: whether this call ended the task.
    @discardableResult
    func settle(_ task: DataTask, with outcome: DataTask.Outcome, byRunner: Bool = false) -> Bool {
        guard var ending = lock.withLock({ end(task, with: outcome) }) else { return false }
        if byRunner { ending.machine.runner = nil }
        deliver(ending, of: task)
        return true
    }

    /// What ending a task leaves to do outside the lock: the machine's ending, and the tasks that left
    /// the queue for the slot it freed.
    struct Ending {
        var machine: TaskStateMachine<DataTask.Resumer>.Ending
        var dequeued: [DataTask]
    }

    /// Ends the task's machine with `outcome`, closes an attempt still under way, and removes the task
    /// from the active set; call with `lock` held. `activeIndex`: where the caller found the task in the
    /// active set, if it did.
    /// - Returns: `nil` when the task had ended already.
    private func end(
        _ task: DataTask, with outcome: DataTask.Outcome, activeIndex: [String: DataTask].Index? = nil
    ) -> Ending? {
        guard let ending = task.storage.machine.end(with: outcome) else { return nil }
        var dequeued: [DataTask] = []
        if task.storage.holdsSlot {
            task.storage.holdsSlot = false
            dequeued = scheduler.release(host: task.storage.host)
            for next in dequeued { holdSlot(next) }
        } else if task.storage.isQueued {
            task.storage.isQueued = false
            _ = scheduler.remove(task, host: task.storage.host)
        }
        // One clock reading for the end of the task and of an attempt still under way (a cancel, the
        // deadline), which ends with it so that its timings are final.
        let now = MonotonicClock.now()
        if task.storage.openAttempt != nil { closeAttempt(of: task, received: nil, status: nil, at: now) }
        task.storage.endTime = now
        task.storage.finishProgress(at: now)
        timers.remove(.deadline, of: task)
        timers.remove(.stall, of: task)
        // The task may have been replaced under its id (`DuplicatePolicy.replace`): remove only itself.
        if let index = activeIndex ?? active.index(forKey: task.id), active.values[index] === task {
            active.remove(at: index)
            // A dictionary keeps the capacity it grew to: once a burst has drained, give its table back.
            if active.isEmpty, active.capacity > Self.keptCapacity { active = [:] }
        }
        return Ending(machine: ending, dequeued: dequeued)
    }

    /// Logs the end, resumes the waiters, and stops whatever of the task still runs: the runner
    /// itself, a cancel or the deadline may have ended it, and nothing of it keeps running.
    private func deliver(_ ending: Ending, of task: DataTask) {
        let machine = ending.machine
        switch machine.outcome {
        case .success: log(.finished, task)
        case .failure(.cancelled): log(.cancelled, task)
        case .failure: log(.failed, task)
        }
        task.delivery.taskEnded(with: machine.outcome)
        for waiter in machine.waiters { waiter.resumer.resume(machine.outcome) }
        machine.runner?.cancel()
        if !ending.dequeued.isEmpty { run(dequeued: ending.dequeued) }
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

    func log(
        _ kind: TaskEvent.Kind, _ task: DataTask, error retryError: NetworkError? = nil, delay: TimeInterval? = nil,
        statusCode eventStatus: Int? = nil, redirectURL: String? = nil, snapshot: TaskSnapshot? = nil,
        silence: TimeInterval? = nil
    ) {
        guard let logger = eventLogger else { return }
        var (bytes, attempts, outcome, url) = lock.withLock {
            (task.storage.bytesReceived, task.storage.attempts, task.storage.outcome, task.storage.redactedURL)
        }
        var statusCode = eventStatus ?? retryError?.statusCode
        var error = retryError
        var source: Response.Source?
        var answer: Response?
        switch outcome {
        case .success(let response):
            statusCode = response.statusCode
            source = response.source
            answer = response
            if response.source != .network { bytes = response.body.count }
        case .failure(let failure):
            statusCode = failure.statusCode
            source = failure.response?.source
            answer = failure.response
            if kind == .failed { error = failure }
        case nil: break
        }
        var event = TaskEvent(
            kind: kind, taskID: task.id, service: task.service, method: task.method,
            url: url ?? task.redactedURL,
            attempt: attempts, date: Date(), duration: kind == .started ? nil : task.elapsed,
            statusCode: statusCode, bytesReceived: bytes, error: error, delay: delay, redirectURL: redirectURL,
            snapshot: snapshot, silence: silence, source: source, response: answer)
        event.task = task
        logger.log(event)
    }
}
