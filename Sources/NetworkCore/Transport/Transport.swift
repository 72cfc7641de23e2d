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

/// What a transport may want to know about the task it is sending for.
public struct TransportContext: Sendable {
    /// The id of the task in its pool.
    public let taskID: String
    /// The endpoint the request was built from, for transports that answer from ``Endpoint/sampleData``.
    public let endpoint: (any Endpoint)?
    private let onBytes: @Sendable (Int) -> Void

    /// Creates a context; `onBytes` receives the size of each chunk of body bytes.
    public init(taskID: String, endpoint: (any Endpoint)? = nil, onBytes: @escaping @Sendable (Int) -> Void = { _ in })
    {
        self.taskID = taskID
        self.endpoint = endpoint
        self.onBytes = onBytes
    }

    /// Reports that `bytes` more body bytes arrived.
    public func didReceive(bytes: Int) { onBytes(bytes) }
}
