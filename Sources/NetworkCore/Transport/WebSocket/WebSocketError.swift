/// Why a WebSocket failed, inside ``NetworkError/transport(_:)``.
///
/// ```swift
/// do {
///     for try await message in socket { print(message) }
/// } catch NetworkError.transport(let error as WebSocketError) {
///     print("the socket failed:", error)
/// }
/// ```
public enum WebSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The pool's transport cannot open a WebSocket: `transport` names it, `reason` says why, and the
    /// description names the transports that can.
    case unsupported(transport: String, reason: String)
    /// The server broke the protocol (a masked or malformed frame, a reserved bit or opcode, fragments out
    /// of order, a text message that is not UTF-8, a bad close code): the socket was closed with `code`.
    case protocolViolation(WebSocketCloseCode, String)
    /// The server's answer to the opening request was not a valid WebSocket upgrade (a wrong
    /// `Sec-WebSocket-Accept`, a subprotocol not offered).
    case upgradeRefused(String)
    /// The server closed the socket with a code other than a normal closure or going away, or the
    /// connection was lost without a close frame (``WebSocketCloseCode/abnormalClosure``).
    case closed(WebSocketCloseCode, reason: String)
    /// No pong came within the keep-alive's timeout: the connection is taken as dead.
    case pongTimeout(seconds: Double)
    /// A message was sent after the socket began to close.
    case notOpen
    /// A send waited longer than ``WebSocketOptions/sendTimeout`` for the connection to take its message
    /// (the server reads too slowly). Over `NIOTransport` the message was withdrawn unsent and the socket
    /// stays open; over `URLSessionTransport` the socket fails with this error.
    case sendTimedOut(seconds: Double)

    /// What went wrong, in a sentence.
    public var description: String {
        switch self {
        case .unsupported(let transport, let reason):
            "\(transport) cannot open a WebSocket: \(reason). NIOTransport (the NetworkCoreNIO library) opens them on every platform, URLSessionTransport on Apple platforms"
        case .protocolViolation(let code, let detail): "the server broke the WebSocket protocol (\(code)): \(detail)"
        case .upgradeRefused(let detail): "the server did not open a WebSocket: \(detail)"
        case .closed(let code, let reason):
            reason.isEmpty ? "the socket closed: \(code)" : "the socket closed: \(code), \(reason)"
        case .pongTimeout(let seconds): "no pong within \(seconds) s: the connection is taken as dead"
        case .notOpen: "the socket is closing or closed: nothing more can be sent"
        case .sendTimedOut(let seconds): "the connection did not take the message within \(seconds) s"
        }
    }
}
