import Foundation

/// Receives the events of every task a pool runs.
///
/// It is not called `Logger` so that it can sit beside swift-log's and OSLog's `Logger`
/// without qualification; `Docs/Debugging.md` forwards events to either in a few lines.
/// Events arrive on whatever thread the pool is running on; with ``URLSessionTransport``, redirects
/// arrive on its session's own queue, and so does the end of an awaited send without interceptors whose
/// caller was cancelled while callers that joined it still wait. A logger
/// must be quick, thread-safe, and must not wait for the pool or its session.
/// URLs in events are already redacted.
public protocol NetworkLogger: Sendable {
    /// Records one event.
    func log(_ event: TaskEvent)
}

/// One thing that happened to a task.
public struct TaskEvent: Sendable {
    /// What happened.
    public enum Kind: String, Sendable, CaseIterable {
        /// The task was registered but waits for a slot: the pool's limits are reached, or it is paused
        /// (see ``TaskPool/Configuration/maximumConcurrentTasks``). ``started`` follows when it runs.
        case queued
        /// The task waits for the network (``TaskPool/Configuration/connectivity``): it was registered while the
        /// network is gone, and waits in the queue (``started`` follows when it runs), or its attempt lost the
        /// connection and its retry waits (after ``retrying``), rather than for its backoff.
        case waitingForNetwork
        /// The task was registered (or left the queue) and its request is being prepared.
        case started
        /// The server redirected; ``TaskEvent/redirectURL`` says where.
        case redirected
        /// An attempt failed and the task will be sent again after ``TaskEvent/delay``; ``TaskEvent/error`` says why.
        case retrying
        /// A WebSocket whose connection was lost is open again (``WebSocketOptions/reconnection``);
        /// ``TaskEvent/attempt`` is the attempt that opened it.
        case reconnected
        /// The credential was renewed while this task waited for it.
        case credentialRefreshed
        /// Nothing was sent or received for the pool's stall threshold (``TaskEvent/silence`` says how long);
        /// ``TaskEvent/snapshot`` is the task's row. Once per task.
        case stalled
        /// The server answered and the response was accepted.
        case finished
        /// The task ended with an error other than cancellation.
        case failed
        /// The task was cancelled.
        case cancelled
    }

    /// How much an event matters.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        /// Started, redirected.
        case debug
        /// Finished, cancelled, reconnected, credential renewed.
        case info
        /// Retrying, stalled.
        case warning
        /// Failed.
        case error

        /// Orders levels from debug to error.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// What happened.
    public let kind: Kind
    /// The task's id.
    public let taskID: String
    /// The service that started the task (its endpoint's ``Endpoint/service``, the endpoint type's name
    /// unless it says otherwise); empty when the event was made without one.
    public let service: String
    /// The request method.
    public let method: String
    /// The request URL, with credentials redacted.
    public let url: String
    /// Which attempt this is, from 1; for ``Kind/retrying``, the attempt to come (the one that failed is
    /// the one before).
    public let attempt: Int
    /// When it happened.
    public let date: Date
    /// Seconds since the task started; `nil` for ``Kind/started``.
    public let duration: TimeInterval?
    /// The HTTP status, when the server answered.
    public let statusCode: Int?
    /// Body bytes received so far.
    public let bytesReceived: Int
    /// The error, for ``Kind/failed`` and ``Kind/retrying``.
    public let error: NetworkError?
    /// Seconds until the next attempt, for ``Kind/retrying``.
    public let delay: TimeInterval?
    /// Where the server redirected to, credentials redacted, for ``Kind/redirected``.
    public let redirectURL: String?
    /// The task's row, for ``Kind/stalled``.
    public let snapshot: TaskSnapshot?
    /// Seconds without a byte sent or received, for ``Kind/stalled``: the stall threshold, or a little more.
    public let silence: TimeInterval?
    /// Where the answer came from (the network, the cache…), for ``Kind/finished`` and for a failure
    /// with a response.
    public let source: Response.Source?
    /// The answer, for ``Kind/finished`` and for a failure with a response (an unaccepted status).
    public let response: Response?
    /// The pool's task the event is about; set by the pool, `nil` in an event made by hand.
    var task: DataTask?

    /// When each step of the task happened so far (see ``TaskTimings``): final in a ``Kind/finished``,
    /// ``Kind/failed`` or ``Kind/cancelled`` event; read from the task when asked, so that a logger that
    /// does not ask pays nothing for it. `nil` in an event made by hand.
    public var timings: TaskTimings? { task?.timings }

    /// Creates an event; pools do this for you.
    public init(
        kind: Kind, taskID: String, service: String = "", method: String, url: String, attempt: Int,
        date: Date = Date(),
        duration: TimeInterval? = nil, statusCode: Int? = nil, bytesReceived: Int = 0, error: NetworkError? = nil,
        delay: TimeInterval? = nil, redirectURL: String? = nil, snapshot: TaskSnapshot? = nil,
        silence: TimeInterval? = nil,
        source: Response.Source? = nil, response: Response? = nil
    ) {
        self.source = source
        self.response = response
        self.kind = kind
        self.taskID = taskID
        self.service = service
        self.method = method
        self.url = url
        self.attempt = attempt
        self.date = date
        self.duration = duration
        self.statusCode = statusCode
        self.bytesReceived = bytesReceived
        self.error = error
        self.delay = delay
        self.redirectURL = redirectURL
        self.snapshot = snapshot
        self.silence = silence
    }

    /// The event's level: debug for started and redirected; info for finished, cancelled, reconnected and
    /// credential renewals; warning for retries and stalls; error for failures.
    public var level: Level {
        switch kind {
        case .queued, .waitingForNetwork, .started, .redirected: .debug
        case .finished, .cancelled, .reconnected, .credentialRefreshed: .info
        case .retrying, .stalled: .warning
        case .failed: .error
        }
    }
}

/// A logger that writes one compact line per event, to standard error unless told otherwise.
///
/// ```
/// [NetworkCore] started   GET https://api.themoviedb.org/3/movie/now_playing?api_key=<redacted>&page=1 id=movies.nowPlaying.page=1
/// [NetworkCore] retrying  503 0 B 12 ms attempt 2 retry in 480 ms id=movies.nowPlaying.page=1 error: …
/// [NetworkCore] finished  200 5120 B 84 ms attempt 2 id=movies.nowPlaying.page=1
/// [NetworkCore] finished  200 5120 B 0 ms from cache id=movies.nowPlaying.page=1
/// ```
public struct ConsoleLogger: NetworkLogger {
    /// Events below this level are not written.
    public let minimumLevel: TaskEvent.Level
    private let write: @Sendable (String) -> Void

    /// Creates a logger that writes each line at `minimumLevel` and above with `write`; by default to standard error.
    public init(
        minimumLevel: TaskEvent.Level = .debug,
        write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    ) {
        self.minimumLevel = minimumLevel
        self.write = write
    }

    /// Writes the event as one line.
    public func log(_ event: TaskEvent) {
        guard event.level >= minimumLevel else { return }
        write(Self.format(event))
    }

    /// The one-line form of an event.
    public static func format(_ event: TaskEvent) -> String {
        // Padded to a column; a longer kind (`redirected`, `credentialRefreshed`) is written whole.
        let name = event.kind.rawValue
        let kind = name.count < 9 ? name.padding(toLength: 9, withPad: " ", startingAt: 0) : name
        var fields = ["[NetworkCore]", kind]
        switch event.kind {
        case .started:
            fields.append("\(event.method) \(event.url)")
        case .redirected:
            if let status = event.statusCode { fields.append(String(status)) }
            fields.append("to \(event.redirectURL ?? "-")")
        case .stalled:
            if let snapshot = event.snapshot {
                // A task "sending" whose body is all handed over (or that has none) waits for the answer.
                let sent = snapshot.progress.bytesSent >= (snapshot.progress.bytesToSend ?? .max)
                let doing =
                    snapshot.phase == "\(DataTask.Phase.sending)" && sent ? "waiting for the answer" : snapshot.phase
                let quiet = event.silence.map { "\(Int(($0 * 1000).rounded())) ms" } ?? "the stall threshold"
                fields.append(
                    "nothing moved for \(quiet) while \(doing) (\(Int((snapshot.elapsed * 1000).rounded())) ms in):")
                fields.append("\(snapshot.method) \(snapshot.url) \(snapshot.bytesReceived) B")
            }
        default:
            if let status = event.statusCode { fields.append(String(status)) }
            fields.append("\(event.bytesReceived) B")
            if let duration = event.duration { fields.append("\(Int((duration * 1000).rounded())) ms") }
            if let source = event.source, source != .network {
                fields.append(source == .cache ? "from cache" : "\(source) from cache")
            }
        }
        if event.attempt > 1 || event.kind == .retrying { fields.append("attempt \(event.attempt)") }
        if let delay = event.delay { fields.append("retry in \(Int((delay * 1000).rounded())) ms") }
        fields.append("id=\(event.taskID)")
        if let error = event.error { fields.append("error: \(error)") }
        return fields.joined(separator: " ")
    }
}

/// Gives every event to each of several loggers, in order: a console line, swift-log and metrics at once.
///
/// ```swift
/// let logger = CombinedLogger([ConsoleLogger(minimumLevel: .warning), InMemoryLogger()])
/// let pool = TaskPool(configuration: .init(logger: logger))
/// ```
public struct CombinedLogger: NetworkLogger {
    /// The loggers, in the order they receive each event.
    public let loggers: [any NetworkLogger]

    /// Creates a logger that passes each event to `loggers`, in order.
    public init(_ loggers: [any NetworkLogger]) {
        self.loggers = loggers
    }

    /// Passes the event to each logger.
    public func log(_ event: TaskEvent) {
        for logger in loggers { logger.log(event) }
    }
}
