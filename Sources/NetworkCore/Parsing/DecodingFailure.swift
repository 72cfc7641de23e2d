/// Why a body could not be decoded: the model, the coding path that failed, and the reason.
public struct DecodingFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The name of the type being decoded, e.g. `"MoviePage"`.
    public let type: String
    /// Where decoding failed, e.g. `"results[3].title"`; empty for the top level.
    public let path: String
    /// What went wrong there, e.g. `"expected String, found a number"`.
    public let reason: String

    /// Creates a failure.
    public init(type: String, path: String, reason: String) {
        self.type = type
        self.path = path
        self.reason = reason
    }

    /// Describes a `DecodingError` (or any other error a parser threw) while decoding `type`.
    public init(decoding type: Any.Type, error: any Error) {
        self.type = String(describing: type)
        guard let error = error as? DecodingError else {
            path = ""
            reason = String(describing: error)
            return
        }
        switch error {
        case .keyNotFound(let key, let context):
            path = Self.format(context.codingPath + [key])
            reason = "the key is missing"
        case .valueNotFound(let expected, let context):
            path = Self.format(context.codingPath)
            reason = "expected \(expected), found null"
        case .typeMismatch(let expected, let context):
            path = Self.format(context.codingPath)
            reason = "expected \(expected): \(context.debugDescription)"
        case .dataCorrupted(let context):
            path = Self.format(context.codingPath)
            let underlying = (context.underlyingError).map { " (\($0))" } ?? ""
            reason = context.debugDescription + underlying
        @unknown default:
            path = ""
            reason = String(describing: error)
        }
    }

    /// `"MoviePage at results[3].title: expected String, found null"`.
    public var description: String {
        path.isEmpty ? "\(type): \(reason)" : "\(type) at \(path): \(reason)"
    }

    static func format(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }
}
