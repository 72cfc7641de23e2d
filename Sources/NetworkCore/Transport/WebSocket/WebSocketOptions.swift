import Foundation

/// How a pool opens and keeps a WebSocket: its subprotocols, the largest message it takes and its
/// keep-alive. The defaults suit most servers.
///
/// ```swift
/// let socket = try await pool.webSocket(Chat.room("swift"), options: .init(subprotocols: ["chat.v2"], pingInterval: 15))
/// print(socket.subprotocol ?? "no subprotocol")
/// ```
public struct WebSocketOptions: Sendable, Equatable {
    /// The subprotocols offered in `Sec-WebSocket-Protocol`, preferred first; the server picks one or none
    /// (``WebSocket/subprotocol``). A server that picks one not offered fails the opening.
    public var subprotocols: [String]
    /// The most bytes one message may have, joined from its fragments; a larger one closes the socket with
    /// ``WebSocketCloseCode/messageTooBig`` and fails it with ``NetworkError/responseTooLarge(limit:)``.
    /// `nil`: the endpoint's `maximumResponseBytes`, else the pool's.
    public var maximumMessageBytes: Int?
    /// How long the socket may be silent before a ping is sent; `nil` for no keep-alive. Default: 30 s.
    public var pingInterval: TimeInterval?
    /// How long to wait for the pong to a keep-alive ping before the connection is taken as dead
    /// (``WebSocketError/pongTimeout(seconds:)``). Default: 10 s.
    public var pongTimeout: TimeInterval
    /// How long to wait for the server's close frame after sending one, before the connection is closed
    /// anyway. Default: 5 s.
    public var closeTimeout: TimeInterval
    /// permessage-deflate as offered, or `nil` to offer no compression. Default: offered, contexts kept.
    /// A transport without it (or a server that does not agree) sends and takes messages uncompressed.
    public var compression: WebSocketCompression?
    /// How long a send may wait for the connection to take its message, when messages are waiting already
    /// (the server reads more slowly than the app sends), before it fails with
    /// ``WebSocketError/sendTimedOut(seconds:)``. Default: 30 s.
    public var sendTimeout: TimeInterval
    /// How the socket opens again after its connection is lost, or `nil` (the default) to end it then.
    /// Its messages stay one sequence across connections; ``TaskEvent/Kind/reconnected`` tells each.
    public var reconnection: WebSocketReconnection?

    /// Options; every argument has the default its property describes.
    public init(
        subprotocols: [String] = [], maximumMessageBytes: Int? = nil, pingInterval: TimeInterval? = 30,
        pongTimeout: TimeInterval = 10, closeTimeout: TimeInterval = 5, sendTimeout: TimeInterval = 30,
        compression: WebSocketCompression? = WebSocketCompression(), reconnection: WebSocketReconnection? = nil
    ) {
        self.sendTimeout = sendTimeout
        self.subprotocols = subprotocols
        self.maximumMessageBytes = maximumMessageBytes
        self.pingInterval = pingInterval
        self.pongTimeout = pongTimeout
        self.closeTimeout = closeTimeout
        self.compression = compression
        self.reconnection = reconnection
    }
}
