import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An open WebSocket as its transport holds it: the pool sends through it, closes it, and cancels it (a
/// close with ``WebSocketCloseCode/goingAway``, then the connection dropped). A transport that opens
/// sockets returns one from ``Transport/startWebSocket(_:options:events:)``.
public protocol WebSocketConnection: TransportControl {
    /// Sends a message; returns once the transport has taken it (written it to the connection, or queued
    /// it in order for the connection), so that a sender waits while the connection is full (at most the options' `sendTimeout`, then
    /// ``WebSocketError/sendTimedOut(seconds:)``). Throws ``WebSocketError/notOpen`` once the socket is
    /// closing, or the connection's error.
    func send(_ message: WebSocketMessage) async throws
    /// Begins the closing handshake with `code` and `reason`: the transfer ends when the server answers
    /// with its close frame, or after the options' `closeTimeout`.
    func close(_ code: WebSocketCloseCode, reason: String)
}

extension Transport {
    /// Opens a WebSocket with `request` (its URL `ws`, `wss`, `http` or `https`), reporting to `events`:
    /// the head of the server's answer (`101 Switching Protocols` once the socket is open, or any other
    /// answer, whose body follows, as for any request), each message the server sends
    /// (``TransportEvents/receive(message:)``), its close frame (``TransportEvents/receive(closeCode:reason:)``),
    /// then the end: ``TransportEvents/finish()`` after a closing handshake, ``TransportEvents/fail(_:)``
    /// otherwise. Transports that cannot open one report ``WebSocketError/unsupported(transport:reason:)``
    /// at once, as this default does.
    public func startWebSocket(
        _ request: URLRequest, options: WebSocketOptions, events: TransportEvents
    ) -> any WebSocketConnection {
        events.refuseWebSocket(by: String(describing: Self.self), because: "it has no WebSocket engine")
    }
}

extension TransportEvents {
    /// Refuses a WebSocket at once: reports ``WebSocketError/unsupported(transport:reason:)`` naming
    /// `transport` and `reason`, and returns a connection that sends nothing.
    public func refuseWebSocket(by transport: String, because reason: String) -> any WebSocketConnection {
        fail(WebSocketError.unsupported(transport: transport, reason: reason))
        return RefusedWebSocket()
    }
}

/// The connection of a socket its transport refused: nothing to send on, close or cancel.
final class RefusedWebSocket: WebSocketConnection {
    func send(_ message: WebSocketMessage) async throws { throw WebSocketError.notOpen }
    func close(_ code: WebSocketCloseCode, reason: String) {}
    func cancel() {}
}
