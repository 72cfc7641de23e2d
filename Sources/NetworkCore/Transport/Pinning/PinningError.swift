/// Why a pinned connection was refused, inside ``NetworkError/transport(_:)``. Never retried: a pin that
/// does not match will not match on the next attempt.
public enum PinningError: Error, Sendable, Equatable, CustomStringConvertible {
    /// None of `host`'s pins is the key of a certificate of the connection's verified chain; `chainPins`
    /// are that chain's pins, leaf first (to update the app's pins from, when the server's keys changed).
    case mismatch(host: String, chainPins: [String])
    /// A pin is not `sha256/` and the base64 of 32 bytes.
    case invalidPin(String, reason: String)
    /// A host pattern is not a host name, `*.` and one, or `**.` and one.
    case invalidPattern(String)
    /// The transport cannot see a connection's certificates, so cannot enforce pins: `transport` names it,
    /// `reason` says why, and the description names the transports that can.
    case unsupported(transport: String, reason: String)
    /// A pinned host was asked for over plain `http`, where there is no certificate to check.
    case notEncrypted(host: String)

    /// What went wrong, in a sentence.
    public var description: String {
        switch self {
        case .mismatch(let host, let chainPins):
            "no pin of \(host) matches its certificates; the verified chain's pins, leaf first: "
                + chainPins.joined(separator: ", ")
        case .invalidPin(let pin, let reason): "the pin \(pin) is not valid: \(reason)"
        case .invalidPattern(let pattern):
            "the host pattern \(pattern) is not a host name, or *. or **. followed by one"
        case .unsupported(let transport, let reason):
            "\(transport) cannot enforce certificate pins: \(reason). NIOTransport (the NetworkCoreNIO library) enforces them, on every platform"
        case .notEncrypted(let host): "\(host) is pinned, but the request is not over https or wss"
        }
    }
}
