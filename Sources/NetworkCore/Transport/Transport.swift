import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one request and returns the body and the HTTP response.
///
/// ``URLSessionTransport`` is the default; ``StubTransport`` answers in-process for tests and
/// offline use. A transport must stop work promptly when the Swift task calling it is cancelled,
/// and should report body bytes as they arrive with ``TransportContext/didReceive(bytes:)``.
public protocol Transport: Sendable {
    /// Sends `request` and returns the full body and the response, or throws.
    func send(_ request: URLRequest, context: TransportContext) async throws -> (Data, HTTPURLResponse)
}

/// What a transport may want to know about the task it is sending for, and how it reports progress.
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
    /// The endpoint the request was built from, for transports that answer from ``Endpoint/sampleData``.
    public let endpoint: (any Endpoint)?
    /// Which redirects to follow, and how (see ``RedirectPolicy``); a transport that follows redirects
    /// must honour it.
    public let redirectPolicy: RedirectPolicy
    /// The most body bytes the response may have: a transport that can should stop there and throw
    /// ``NetworkError/responseTooLarge(limit:)`` (the pool checks what a transport returns, too).
    public let maximumResponseBytes: Int
    private let onProgress: @Sendable (Progress) -> Void

    /// Creates a context; `onProgress` receives what the transport reports.
    public init(
        taskID: String, endpoint: (any Endpoint)? = nil, redirectPolicy: RedirectPolicy = .follow,
        maximumResponseBytes: Int = .max, onProgress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) {
        self.taskID = taskID
        self.endpoint = endpoint
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
}
