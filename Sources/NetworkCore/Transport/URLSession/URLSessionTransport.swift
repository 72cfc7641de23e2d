import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends requests with a `URLSession` of its own.
///
/// Cancelling a transfer cancels its `URLSessionTask`; pausing a stream's transfer suspends it on Apple
/// platforms. On Linux a transfer is never paused: FoundationNetworking starts a suspended data task's
/// request over when it resumes, so a stream whose reader falls behind buffers what it has not read, up
/// to the pool's `maximumResponseBytes` (see ``TaskPool/stream(_:id:)``).
/// Body bytes are counted as they arrive, by the session's delegate, on every platform
/// (FoundationNetworking on Linux never updates a data task's progress).
///
/// On FoundationNetworking the session's `delegateQueue` runs each delegate call at once, on the
/// session's own queue, as `URLSession.data(for:)` does for its completion there, rather than as an
/// `Operation` on another queue for each response, body chunk and completion. So a
/// ``NetworkLogger`` sees redirect events on that queue, and must not block; and blocks added to
/// `session.delegateQueue` run at once. The session's queue runs every transfer of the session one
/// after another, so for an awaited send the pool does little there: it records the progress of the
/// task and hands the answer to the caller waiting for it, which ends the task.
/// ```swift
/// let configuration = URLSessionConfiguration.ephemeral
/// configuration.httpMaximumConnectionsPerHost = 16
/// let pool = TaskPool(configuration: .init(transport: URLSessionTransport(configuration: configuration)))
/// ```
public final class URLSessionTransport: Transport {
    /// The session requests go through; it belongs to this transport.
    public let session: URLSession
    private let delegate: SessionDelegate

    /// Creates a transport with its own session built from a copy of `configuration`, without its
    /// `urlCache`: the session never answers from Foundation's cache.
    ///
    /// Why: on FoundationNetworking a session with a cache looks up every data task in it on another
    /// queue before the task's protocol exists, and a task cancelled during that lookup still starts
    /// loading, then fails a second time, which traps the whole process ("not in the registry",
    /// swift-corelibs-foundation #3296). Without a cache the protocol exists as soon as the task is
    /// resumed and a cancel always finds it. The same holds on Apple platforms, so that a response
    /// never comes from a cache the pool does not see.
    ///
    /// `fileUploads` says how a body read from a file (``RequestBody/file(_:)``, a multipart form with
    /// files, a stream body) is sent: with its length, which every server accepts, or chunked.
    public init(configuration: URLSessionConfiguration = .default, fileUploads: FileUploads = .withLength) {
        // A copy, so that the caller's configuration keeps its cache for its own sessions.
        let configuration = configuration.copy() as? URLSessionConfiguration ?? .ephemeral
        configuration.urlCache = nil
        delegate = SessionDelegate(fileUploads: fileUploads)
        #if canImport(FoundationNetworking)
            session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: InlineDelegateQueue())
        #else
            session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        #endif
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// The session's `httpMaximumConnectionsPerHost` (6 unless configured): a pool runs as many tasks per
    /// host at once, and the rest wait in its queue.
    public var maximumRequestsPerHost: Int? { session.configuration.httpMaximumConnectionsPerHost }

    /// On Apple platforms, opens a WebSocket as a `URLSessionWebSocketTask` of the session: the platform
    /// checks the server's frames and answers its pings; the options' subprotocols, largest message,
    /// keep-alive and close timeout apply; ``WebSocketOptions/compression`` does not (the platform decides).
    /// An answer other than `101` is reported with its head but no body. On Linux, refuses at once:
    /// FoundationNetworking's `URLSessionWebSocketTask` does not work with the toolchain's libcurl.
    public func startWebSocket(
        _ request: URLRequest, options: WebSocketOptions, events: TransportEvents
    ) -> any WebSocketConnection {
        #if canImport(FoundationNetworking)
            events.refuseWebSocket(
                by: "URLSessionTransport",
                because: "FoundationNetworking's URLSessionWebSocketTask does not work with the toolchain's libcurl")
        #else
            delegate.startWebSocket(request, options: options, in: session, events: events)
        #endif
    }

    /// Pins are refused: on Linux, FoundationNetworking does not show a connection's certificates to the
    /// app; on Apple platforms, this transport does not check them yet.
    public var pinningRefusal: String? {
        #if canImport(FoundationNetworking)
            "FoundationNetworking does not show a connection's certificates to the app"
        #else
            "it does not check certificate pins yet"
        #endif
    }

    /// How a transport sends a body read from a file.
    public enum FileUploads: Sendable, Hashable {
        /// With `Content-Length`: every server accepts it. On Apple platforms, as a file upload of the
        /// platform (`uploadTask(with:fromFile:)`). On Linux, as a stream of the file read as the
        /// connection takes bytes, exactly the length announced: FoundationNetworking's own file upload
        /// crashes the process when a transfer ends while it waits for a read of the file (a cancel, a
        /// time-out, a lost connection). A file that became shorter after its length was announced fails
        /// with ``NetworkError/fileAccessFailed(path:reason:)``; bytes it gained are not sent.
        case withLength
        /// As a stream of the file with no length (`Transfer-Encoding: chunked`), read as fast as the
        /// connection takes it; the file as it is when each part is read. HTTP/1.1 servers must accept
        /// chunked request bodies, but some services refuse them (411 Length Required), among them
        /// presigned uploads to object stores: choose this for servers you know take them.
        case chunked
    }

    /// Starts the request as a task of the session; its head, body chunks and end go to `events`. A
    /// redirect is not followed: its response is the answer (the pool follows it as the task's policy says). A ``RequestBody/file(_:)`` body is sent from the file as it is read. A
    /// ``RequestBody/stream(_:length:)`` body is written to a temporary file as it is produced and sent
    /// from there once complete (FoundationNetworking reads a stream body on its session's queue, holding
    /// every transfer of the session while the stream waits); the file is removed when the transfer ends.
    public func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
        if case .stream(let chunks, let length) = body {
            return SpooledUpload(
                request, chunks: chunks, length: length, delegate: delegate, session: session, events: events)
        }
        return delegate.start(request, body: body, in: session, events: events)
    }
}

#if canImport(FoundationNetworking)
    /// The delegate queue of a transport's session on FoundationNetworking. FoundationNetworking hands
    /// every delegate call to `addOperation(_:)`; this runs it at once, on the session's serial queue, in
    /// order. The delegate's work is short and never waits on the session (see ``SessionDelegate``).
    private final class InlineDelegateQueue: OperationQueue, @unchecked Sendable {
        // @unchecked Sendable: no state of its own.
        override init() {
            super.init()
            // Anything added as an `Operation` rather than a block still runs one at a time, in order.
            maxConcurrentOperationCount = 1
        }

        override func addOperation(_ block: @escaping @Sendable () -> Void) {
            SessionCallbackThread.run(block)
        }
    }
#endif
