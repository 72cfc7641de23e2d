import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Moves one request to a server and its answer back: the one path every transport is driven
/// through, whatever the transfer (a JSON call, an upload, a download to a file, a stream).
///
/// The pool hands a transport the request's head, where its body comes from (``RequestBody``), and
/// ``TransportEvents`` to report to: the response's head, then its body in chunks, then the end. The
/// transport returns a ``TransportControl`` that cancels the transfer. It knows nothing else: not the
/// endpoint, the pool, retries or where the body goes. It does not follow redirects: it reports a 3xx
/// as the answer, and the pool follows it as the task's ``RedirectPolicy`` says.
///
/// A transport written with async/await implements ``send(_:context:)`` instead, returning the whole
/// body; the pool drives it through ``start(_:body:events:)`` all the same.
/// ```swift
/// struct Canned: Transport {
///     func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
///         AsyncTransfer(reportingTo: events) { events in
///             events.receive(head: HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: nil, headerFields: nil)!)
///             events.receive(body: Data("{}".utf8))
///         }
///     }
/// }
/// ```
/// ``URLSessionTransport`` is the default; ``StubTransport``, ``HARReplayTransport`` and
/// ``RecordingTransport`` run on the same path.
public protocol Transport: Sendable {
    /// Starts sending `request` with `body` and reports to `events` until the transfer ends, with
    /// ``TransportEvents/finish()`` or ``TransportEvents/fail(_:)``, exactly once. Events may come on
    /// any thread, one at a time, in order; some may come before this returns. For
    /// ``RequestBody/data(_:)`` the bytes are also `request.httpBody`.
    func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl

    /// Sends `request` and returns the full body and the response, or throws: the way to write a
    /// transport with async/await, which the default ``start(_:body:events:)`` runs. Calling it on any
    /// transport collects what ``start(_:body:events:)`` reports.
    func send(_ request: URLRequest, context: TransportContext) async throws -> (Data, HTTPURLResponse)

    /// How many requests the transport carries to one host (scheme, host and port) at once: its
    /// connections per host, more where it multiplexes. A pool runs at most this many tasks per host
    /// unless its ``TaskPool/Configuration/maximumTasksPerHost`` says otherwise, so that a request waits
    /// in the pool's queue, where it can be seen, prioritised and cancelled, rather than inside the
    /// transport with its timeout running. `nil` (the default) when the transport has no such limit or
    /// does not say: the pool then runs 6, the connections a browser opens to one host.
    var maximumRequestsPerHost: Int? { get }

    /// Opens a WebSocket with `request` and reports to `events` until it closes; returns the connection to
    /// send on. By default the transport refuses at once with ``WebSocketError/unsupported(transport:reason:)``
    /// (see the extension's documentation for what a transport that opens sockets reports).
    func startWebSocket(
        _ request: URLRequest, options: WebSocketOptions, events: TransportEvents
    )
        -> any WebSocketConnection

    /// `nil` when the transport enforces certificate pins (the pool's, in ``TransportEvents/pins``, and
    /// any of its own) on every connection it makes or reuses for a pinned host; otherwise why it cannot.
    /// A pool with pins then fails each request to a pinned host at once with
    /// ``PinningError/unsupported(transport:reason:)``, never connecting. By default: it cannot.
    var pinningRefusal: String? { get }
}

extension Transport {
    /// Pins are not enforced: "it does not check certificate pins".
    public var pinningRefusal: String? { "it does not check certificate pins" }

    /// No limit said: a pool runs 6 tasks per host.
    public var maximumRequestsPerHost: Int? { nil }

    /// Runs ``send(_:context:)`` in a Swift task of its own and reports its answer in one chunk.
    public func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
        if TransportDefaults.sending == ObjectIdentifier(Self.self) {
            // Neither requirement is implemented: each default would call the other for ever.
            events.fail(TransportError.notImplemented(String(describing: Self.self)))
            return AsyncTransfer.none
        }
        return AsyncTransfer(reportingTo: events) { events in
            let (data, response) = try await send(request, context: events.context.reporting(redirectsTo: events))
            guard events.receive(head: response), !data.isEmpty else { return }
            events.receive(body: data)
        }
    }

    /// Drives ``start(_:body:events:)`` and collects the whole body; progress goes to `context`.
    public func send(_ request: URLRequest, context: TransportContext) async throws -> (Data, HTTPURLResponse) {
        try await TransportDefaults.$sending.withValue(ObjectIdentifier(Self.self)) {
            try await TransportEvents.collect(
                from: self, request: request, body: request.httpBody.map(RequestBody.data) ?? .none, context: context
            ).get()
        }
    }
}

/// Why a transport could not send.
public enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The transport type implements neither ``Transport/start(_:body:events:)`` nor
    /// ``Transport/send(_:context:)``.
    case notImplemented(String)
    /// The transport cannot send this kind of body (a stream, a file).
    case unsupportedBody(String)

    /// What went wrong, in a sentence.
    public var description: String {
        switch self {
        case .notImplemented(let type):
            "\(type) implements neither Transport.start(_:body:events:) nor Transport.send(_:context:)"
        case .unsupportedBody(let kind): "this transport cannot send a body of this kind: \(kind)"
        }
    }
}

enum TransportDefaults {
    /// The transport type whose default ``Transport/send(_:context:)`` drives its
    /// ``Transport/start(_:body:events:)`` in this Swift task: if that is the default too, neither is implemented.
    @TaskLocal static var sending: ObjectIdentifier?
}

/// What a transport written with ``Transport/send(_:context:)`` may know about the task it is sending
/// for, and how it reports progress.
public struct TransportContext: Sendable {
    /// What a transport reports while a request runs.
    public enum Progress: Sendable {
        /// The response's status and headers arrived: the first byte.
        case response
        /// This many more body bytes arrived.
        case bytes(Int)
        /// The server redirected, with this status, to this URL; the transport follows.
        case redirect(statusCode: Int, to: URL?)
    }

    /// The id of the task in its pool.
    public let taskID: String
    /// Which redirects the transport may follow itself. A pool's context says ``RedirectPolicy/never``:
    /// the pool follows redirects itself, as the task's policy says, so the transport returns a 3xx as
    /// the answer. A caller of ``Transport/send(_:context:)`` may say otherwise.
    public let redirectPolicy: RedirectPolicy
    /// The most body bytes the response may have, when the answer is collected in memory by
    /// ``Transport/send(_:context:)``: once more arrive, it fails with ``NetworkError/responseTooLarge(limit:)``.
    /// (In a pool, the pool's own limit applies as the answer arrives.)
    public let maximumResponseBytes: Int
    /// The canned answer of the endpoint the request was built from (``Endpoint/sampleData``), for
    /// stand-ins that answer with it.
    public var sampleData: Data? { sample() }
    private let sample: @Sendable () -> Data?
    private let onProgress: @Sendable (Progress) -> Void

    /// Creates a context; `onProgress` receives what the transport reports.
    public init(
        taskID: String, sampleData: Data? = nil, redirectPolicy: RedirectPolicy = .follow,
        maximumResponseBytes: Int = .max, onProgress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) {
        self.init(
            taskID: taskID, sample: { sampleData }, redirectPolicy: redirectPolicy,
            maximumResponseBytes: maximumResponseBytes, onProgress: onProgress)
    }

    init(
        taskID: String, sample: @escaping @Sendable () -> Data?, redirectPolicy: RedirectPolicy,
        maximumResponseBytes: Int, onProgress: @escaping @Sendable (Progress) -> Void
    ) {
        self.taskID = taskID
        self.sample = sample
        self.redirectPolicy = redirectPolicy
        self.maximumResponseBytes = maximumResponseBytes
        self.onProgress = onProgress
    }

    /// Reports progress as it is; a transport that wraps another passes its reports on with this.
    public func report(_ progress: Progress) { onProgress(progress) }

    /// Reports that the response's status and headers arrived.
    public func didReceiveResponse() { report(.response) }

    /// Reports that `bytes` more body bytes arrived.
    public func didReceive(bytes: Int) { report(.bytes(bytes)) }

    /// Reports a redirect that the transport follows.
    public func didRedirect(statusCode: Int, to url: URL?) { report(.redirect(statusCode: statusCode, to: url)) }

    /// The same context, its progress reported to `events` as well (redirects; bytes and the head are
    /// reported when the answer is).
    func reporting(redirectsTo events: TransportEvents) -> TransportContext {
        TransportContext(
            taskID: taskID, sample: sample, redirectPolicy: redirectPolicy, maximumResponseBytes: maximumResponseBytes
        ) { [onProgress] progress in
            if case .redirect(let status, let url) = progress { events.redirected(statusCode: status, to: url) }
            onProgress(progress)
        }
    }
}
