import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An open WebSocket, a task of its pool: listed in ``TaskPool/activeTasks`` under its id while open,
/// ended by ``TaskPool/cancel(id:)`` (with a close frame saying ``WebSocketCloseCode/goingAway``), by
/// ``close(_:reason:)``, by the server, or when it is let go. Its messages are read as an
/// `AsyncSequence`, which ends after a normal close and throws the task's ``NetworkError`` otherwise.
///
/// ```swift
/// let socket = try await pool.webSocket(Chat.room("swift"))
/// try await socket.send("hello")
/// for try await message in socket {
///     if case .text(let text) = message { print(text) }
/// }
/// ```
public final class WebSocket: AsyncSequence, Sendable {
    /// A message of the socket.
    public typealias Element = WebSocketMessage

    private let open: OpenStream<SocketMessages>
    private let delivery: SocketDelivery

    init(_ open: OpenStream<SocketMessages>, delivery: SocketDelivery) {
        self.open = open
        self.delivery = delivery
    }

    /// The task that carries the socket.
    public var task: DataTask { open.task }

    /// The server's `101 Switching Protocols` answer to the opening request.
    public var response: HTTPURLResponse { open.httpResponse }

    /// The subprotocol the server chose among those offered (``WebSocketOptions/subprotocols``), if any.
    public var subprotocol: String? { response.value(forHTTPHeaderField: "Sec-WebSocket-Protocol") }

    /// The code of the server's close frame, once it came.
    public var closeCode: WebSocketCloseCode? { delivery.closeFrame?.code }

    /// The reason of the server's close frame, once it came.
    public var closeReason: String? { delivery.closeFrame?.reason }

    /// Sends a message; returns once the connection has taken it or queued it. While messages pile up
    /// unsent (the server reads slowly), a sender waits for its own, at most the options'
    /// ``WebSocketOptions/sendTimeout``.
    /// - Throws: ``NetworkError/transport(_:)`` with ``WebSocketError/notOpen`` once the socket is closing
    ///   or closed, or while it waits to open again after losing its connection; with
    ///   ``WebSocketError/sendTimedOut(seconds:)`` when it waited too long; or with the connection's error.
    public func send(_ message: WebSocketMessage) async throws(NetworkError) {
        guard let connection = delivery.connection, task.error == nil, task.state == .running else {
            throw .transport(WebSocketError.notOpen)
        }
        do {
            try await connection.send(message)
            delivery.sent(message)
        } catch let error as WebSocketError {
            throw .transport(error)
        } catch {
            throw NetworkError.from(error, timeout: task.request.timeoutInterval)
        }
    }

    /// Sends a text message.
    public func send(_ text: String) async throws(NetworkError) { try await send(.text(text)) }

    /// Sends a binary message.
    public func send(_ data: Data) async throws(NetworkError) { try await send(.binary(data)) }

    /// Closes the socket with `code` and `reason`, and returns once it is closed: when the server has
    /// answered with its close frame, or after the options' `closeTimeout`. Messages that arrived before
    /// stay to be read.
    ///
    /// While the socket waits to open again (``WebSocketOptions/reconnection``), there is no connection
    /// to close: the socket ends at once, as cancelled.
    public func close(_ code: WebSocketCloseCode = .normalClosure, reason: String = "") async {
        if let connection = delivery.close() {
            connection.close(code, reason: reason)
        } else {
            open.end(with: .cancelled)
        }
        await open.ended()
    }

    /// How many times the socket has opened again after losing its connection
    /// (``WebSocketOptions/reconnection``).
    public var reconnections: Int { delivery.reconnections }

    /// Reads the messages.
    public func makeAsyncIterator() -> Iterator { Iterator(open: open) }

    /// Reads the socket's messages in order.
    public struct Iterator: AsyncIteratorProtocol {
        let open: OpenStream<SocketMessages>

        /// The next message; `nil` once the socket has closed normally.
        /// - Throws: the task's ``NetworkError`` when the socket failed or was cancelled.
        public mutating func next() async throws -> WebSocketMessage? { try await open.next() }
    }
}
