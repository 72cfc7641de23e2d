import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends requests with a `URLSession` of its own.
///
/// Cancelling the Swift task that awaits ``send(_:context:)`` cancels the `URLSessionTask`.
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
    public init(configuration: URLSessionConfiguration = .default) {
        // A copy, so that the caller's configuration keeps its cache for its own sessions.
        let configuration = configuration.copy() as? URLSessionConfiguration ?? .ephemeral
        configuration.urlCache = nil
        delegate = SessionDelegate()
        #if canImport(FoundationNetworking)
            session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: InlineDelegateQueue())
        #else
            session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        #endif
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends the request; throws `URLError` on failure, `CancellationError` when cancelled first.
    public func send(_ request: URLRequest, context: TransportContext) async throws -> (Data, HTTPURLResponse) {
        let state = CancelState()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if state.attach(start(request, context: context) { continuation.resume(with: $0) }) {
                    state.cancel()
                }
            }
        } onCancel: {
            state.cancel()
        }
    }

    /// Starts the request and calls `completion` once with the answer, on the session's queue; the
    /// pool's way when no Swift task needs to wait for it. Cancel what it returns with
    /// ``Transfer/cancel()``, never `URLSessionTask.cancel()` directly.
    func start(
        _ request: URLRequest, context: TransportContext, completion: @escaping SessionDelegate.Completion
    )
        -> Transfer
    {
        Transfer(
            entry: delegate.start(request, in: session, context: context, completion: completion), delegate: delegate)
    }
}

/// A request started by ``URLSessionTransport/start(_:context:completion:)``.
struct Transfer: Sendable {
    let entry: SessionDelegate.Entry
    let delegate: SessionDelegate

    /// Cancels the request; its completion gets `URLError(.cancelled)` unless it has had its answer.
    ///
    /// Not on the calling thread: this may run where a Swift task's status is locked (a cancellation
    /// handler) or on the session's own queue, and `URLSessionTask.cancel()` waits for that queue, where
    /// a delegate call may be resuming this very task. It runs on the transport's own control queue (see
    /// ``SessionDelegate/control``), so that the wait holds up nothing else.
    func cancel() {
        delegate.cancel(entry)
    }
}

/// Whether a send was cancelled, and its transfer once there is one: cancelling before the
/// transfer exists cancels it as soon as it is attached. Copies share the state.
private struct CancelState: Sendable {
    private let state = Locked<(transfer: Transfer?, cancelled: Bool)>((nil, false))

    /// Attaches the transfer; returns whether it must be cancelled at once.
    func attach(_ transfer: Transfer) -> Bool {
        state.withLock { state in
            state.transfer = transfer
            return state.cancelled
        }
    }

    func cancel() {
        state.withLock { state in
            state.cancelled = true
            return state.transfer
        }?.cancel()
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
            block()
        }
    }
#endif
