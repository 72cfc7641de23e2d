/// Why a WebSocket closed: the status code of a close frame (RFC 6455 §7.4).
///
/// ```swift
/// await socket.close(.normalClosure, reason: "done")
/// if socket.closeCode == .goingAway { print("the server is restarting") }
/// ```
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code's number.
    public let rawValue: UInt16

    /// A code by its number.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection was fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: an end point is going away (a server shutting down, a client leaving; the pool's cancel).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: the peer broke the protocol.
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: a kind of data the end point cannot accept.
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1005: the close frame carried no code (never sent; reported when the peer gave none).
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// 1006: the connection was lost without a close frame (never sent).
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// 1007: a text message that is not UTF-8, or data inconsistent with its type.
    public static let invalidPayload = WebSocketCloseCode(rawValue: 1007)
    /// 1008: a message that breaks the end point's policy.
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a message too large to take.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1010: the client expected an extension the server did not agree to.
    public static let mandatoryExtension = WebSocketCloseCode(rawValue: 1010)
    /// 1011: the server met a condition that kept it from serving.
    public static let internalServerError = WebSocketCloseCode(rawValue: 1011)

    /// Whether the code may travel in a close frame: the defined codes 1000–1003 and 1007–1014, and the
    /// codes for libraries and applications, 3000–4999. 1005 and 1006 are only ever reported.
    public var mayBeSent: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// The number, with its name when it has one: "1001 going away".
    public var description: String {
        let names: [UInt16: String] = [
            1000: "normal closure", 1001: "going away", 1002: "protocol error", 1003: "unsupported data",
            1005: "no status received", 1006: "abnormal closure", 1007: "invalid payload",
            1008: "policy violation", 1009: "message too big", 1010: "mandatory extension",
            1011: "internal server error",
        ]
        return names[rawValue].map { "\(rawValue) \($0)" } ?? String(rawValue)
    }
}
