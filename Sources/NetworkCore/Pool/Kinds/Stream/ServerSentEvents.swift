import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The events of a Server-Sent Events stream, from ``TaskPool/events(_:id:)``, in the order they came,
/// across reconnections.
///
/// Iterate from one Swift task at a time; errors thrown are ``NetworkError``s. Stop iterating and let
/// go of it, or cancel its ``task``, to close the connection.
public final class ServerSentEvents: AsyncSequence, Sendable {
    /// An event.
    public typealias Element = ServerSentEvent

    private let open: OpenStream<ServerSentEventParser>

    init(_ open: OpenStream<ServerSentEventParser>) { self.open = open }

    /// The first connection's status and headers.
    public var httpResponse: HTTPURLResponse { open.httpResponse }
    /// The task in the pool that carries the connection.
    public var task: DataTask { open.task }

    /// Reads the events in order.
    public func makeAsyncIterator() -> Iterator { Iterator(open: open) }

    /// Reads the events of a ``ServerSentEvents`` stream.
    public struct Iterator: AsyncIteratorProtocol {
        let open: OpenStream<ServerSentEventParser>

        /// The next event, `nil` once the stream has ended for good; throws the task's ``NetworkError``.
        public mutating func next() async throws -> ServerSentEvent? { try await open.next() }
    }
}
