import Foundation

/// One message of a WebSocket, either way: text or bytes, whole (a message the peer sent in fragments
/// arrives joined).
public enum WebSocketMessage: Sendable, Hashable, CustomStringConvertible {
    /// A text message.
    case text(String)
    /// A binary message.
    case binary(Data)

    /// How many bytes the message carries on the wire (the text's UTF-8 bytes).
    public var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let data): data.count
        }
    }

    /// Its kind and size, never its content (which may be secret).
    public var description: String {
        switch self {
        case .text: "text (\(byteCount) bytes)"
        case .binary: "binary (\(byteCount) bytes)"
        }
    }
}
