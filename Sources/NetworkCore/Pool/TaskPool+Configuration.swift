import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TaskPool {
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
        /// Public-key pins for the hosts that have them (see ``CertificatePins``), on every request and
        /// socket: enforced by the transport, or each request to a pinned host fails at once with
        /// ``PinningError/unsupported(transport:reason:)`` when the transport cannot. `nil`: none.
        public var pins: CertificatePins?
        /// Whether the network is there (``SystemConnectivity``, or ``ManualConnectivity`` told by the app):
        /// while it says ``Connectivity/offline`` the pool starts no task; sends wait in the queue (phase
        /// ``DataTask/Phase/waitingForNetwork``, their deadlines running) and start when the network is back.
        /// Tasks already running go on. `nil` (the default): the pool never waits for the network.
        public var connectivity: (any ConnectivityMonitor)?
        /// Where durable writes (``Endpoint/durable(for:)``) are kept until the server has them; a pool opened on
        /// it sends again what an earlier one left there (see ``DurableStore``). `nil`: a durable send fails as
        /// ``NetworkError/invalidEndpoint(url:reason:)``.
        public var durableStore: DurableStore?
        /// The header each durable write carries its idempotency key in, the same at every attempt and after a
        /// restart, so that a server that saw it once can ignore it again (IETF httpapi's `Idempotency-Key`).
        public var idempotencyKeyHeader: String
        /// Told what became of each durable write, on a thread of the pool's; quick, it must not wait for the
        /// pool. A write sent again after a restart has no caller but this.
        public var durableOutcomes: (@Sendable (DurableOutcome) -> Void)?
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
        /// ``NetworkError/invalidEndpoint(url:reason:)``, which names the setting. On Linux, `URLSessionTransport`
        /// waits whole seconds (FoundationNetworking counts no fraction), so 0.5 waits up to 1 s.
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
        /// The most tasks that run at once for one host (scheme, host and port); `nil` (the default) for
        /// as many as the transport carries to one host at once (``Transport/maximumRequestsPerHost``:
        /// a ``URLSessionTransport``'s `httpMaximumConnectionsPerHost`, 6 unless configured; 6 for a
        /// transport that does not say). A request past it waits in the pool's queue, where it can be
        /// seen, prioritised and cancelled, rather than inside the transport with its timeout running.
        /// Set it to run fewer, or more (``maximumConcurrentTasks`` still bounds the whole). Streams and
        /// event streams hold their slot while open. Less than 1 counts as 1.
        public var maximumTasksPerHost: Int?

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
            maximumTasksPerHost: Int? = nil,
            inspector: PoolInspector? = nil,
            pins: CertificatePins? = nil,
            connectivity: (any ConnectivityMonitor)? = nil,
            durableStore: DurableStore? = nil,
            idempotencyKeyHeader: String = "Idempotency-Key",
            durableOutcomes: (@Sendable (DurableOutcome) -> Void)? = nil
        ) {
            self.connectivity = connectivity
            self.durableStore = durableStore
            self.idempotencyKeyHeader = idempotencyKeyHeader
            self.durableOutcomes = durableOutcomes
            self.inspector = inspector
            self.pins = pins.flatMap { $0.isEmpty ? nil : $0 }
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
}
