/// permessage-deflate (RFC 7692) as a client offers it: messages compressed with DEFLATE, each side's
/// window and whether each keeps its context from one message to the next. The server may agree to less
/// (a smaller window, no context kept); what it answers is what is used.
///
/// ```swift
/// let options = WebSocketOptions(compression: WebSocketCompression(clientContextTakeover: false))
/// ```
public struct WebSocketCompression: Sendable, Equatable {
    /// Whether the client keeps its compressor's context from one message to the next (a better ratio for
    /// messages alike, a window's memory kept); when `false`, it offers `client_no_context_takeover`.
    public var clientContextTakeover: Bool
    /// Whether the server may keep its context; when `false`, it is asked not to
    /// (`server_no_context_takeover`), which spares the client's memory too.
    public var serverContextTakeover: Bool
    /// The largest window the server may compress with, as a power of two, 9 to 15
    /// (`server_max_window_bits`, offered when under 15).
    public var serverMaximumWindowBits: Int

    /// An offer; every argument has the default its property describes: contexts kept, windows of 32 KiB.
    public init(
        clientContextTakeover: Bool = true, serverContextTakeover: Bool = true, serverMaximumWindowBits: Int = 15
    ) {
        self.clientContextTakeover = clientContextTakeover
        self.serverContextTakeover = serverContextTakeover
        self.serverMaximumWindowBits = min(15, max(9, serverMaximumWindowBits))
    }

    /// The `Sec-WebSocket-Extensions` value that offers it: the client takes any window the server names.
    public var offer: String {
        var parameters = ["permessage-deflate", "client_max_window_bits"]
        if !clientContextTakeover { parameters.append("client_no_context_takeover") }
        if !serverContextTakeover { parameters.append("server_no_context_takeover") }
        if serverMaximumWindowBits < 15 { parameters.append("server_max_window_bits=\(serverMaximumWindowBits)") }
        return parameters.joined(separator: "; ")
    }
}
