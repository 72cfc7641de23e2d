import Foundation

/// What a server said about a call in its own terms, read from a body such as
/// `{"success": false, "status_code": 7, "status_message": "Invalid API key"}`.
public struct ServerStatus: Hashable, Sendable {
    /// The server's own code (`7`), not the HTTP status.
    public var code: Int?
    /// The server's own message.
    public var message: String?
    /// The server's success flag, when the body has one.
    public var success: Bool?

    /// Creates a status.
    public init(code: Int? = nil, message: String? = nil, success: Bool? = nil) {
        self.code = code
        self.message = message
        self.success = success
    }
}

/// Reads a server's own status (code, message, success flag) from a response body.
///
/// A pool asks its reader once per response, lazily, and only when something needs the status:
/// an error to report, or ``Response/serverCode``. ``JSONStatusReader`` is the default.
public protocol ServerStatusReader: Sendable {
    /// The status in `body`, or `nil` when the body carries none.
    func status(in body: Data) -> ServerStatus?

    /// A cheap test run on every accepted response: `false` means the body cannot describe a
    /// failure, so it is not parsed just to find out. The default answers `true`.
    func mayDescribeFailure(_ body: Data) -> Bool
}

extension ServerStatusReader {
    /// `true`: every body may describe a failure.
    public func mayDescribeFailure(_ body: Data) -> Bool { true }
}

/// Reads code, message and success flag from the top level of a JSON object body.
///
/// The first key present in each list wins; a message that is an array of strings
/// (`{"errors": ["page must be less than or equal to 500"]}`) is read as its strings joined by `"; "`.
/// The defaults read the keys most APIs use for errors (`code`, `error_code`; `message`,
/// `error_description`, `error`, `errors`) and no success flag: a successful response's body is
/// never read unless a ``successKey`` is set. A service whose server answers some failures with a
/// 2xx and a flag (TheMovieDB's `"success": false`) sets its own reader on its endpoints
/// (``Endpoint/statusReader``), as MovieDB does:
/// ```swift
/// let tmdb = JSONStatusReader(codeKeys: ["status_code"], messageKeys: ["status_message", "errors"], successKey: "success")
/// ```
public struct JSONStatusReader: ServerStatusReader {
    /// Keys that may hold the server's code, in order of preference.
    public var codeKeys: [String]
    /// Keys that may hold the server's message, in order of preference.
    public var messageKeys: [String]
    /// The key of a boolean success flag, or `nil` for none; a 2xx body with this flag `false` is a
    /// refusal. An accepted response is parsed only when its bytes contain this key, quoted.
    public var successKey: String? {
        didSet { successNeedle = Self.needle(for: successKey) }
    }

    /// The quoted success key, searched for in every accepted body: kept with the key, not made per response.
    private var successNeedle: Data?

    /// Creates a reader for the given keys.
    public init(
        codeKeys: [String] = ["code", "error_code"],
        messageKeys: [String] = ["message", "error_description", "error", "errors"],
        successKey: String? = nil
    ) {
        self.codeKeys = codeKeys
        self.messageKeys = messageKeys
        self.successKey = successKey
        successNeedle = Self.needle(for: successKey)
    }

    private static func needle(for key: String?) -> Data? {
        key.map { Data("\"\($0)\"".utf8) }
    }

    /// The status in a JSON object body, or `nil` for anything else (HTML, arrays, invalid JSON).
    public func status(in body: Data) -> ServerStatus? {
        guard let first = body.first(where: { !Self.isWhitespace($0) }), first == UInt8(ascii: "{"),
            JSONGuard.rejection(of: body) == nil
        else {
            return nil
        }
        let decoder = JSONDecoder()
        decoder.userInfo[StatusFields.keysKey] = self
        guard let fields = try? decoder.decode(StatusFields.self, from: body) else { return nil }
        let status = ServerStatus(code: fields.code, message: fields.message, success: fields.success)
        return status == ServerStatus() ? nil : status
    }

    /// Whether the bytes contain the quoted success key, e.g. `"success"`; `false` when there is none.
    public func mayDescribeFailure(_ body: Data) -> Bool {
        guard let successNeedle else { return false }
        return ByteSearch.contains(body, successNeedle)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}

/// The top-level fields a ``JSONStatusReader`` looks for; other fields and wrong types are ignored.
private struct StatusFields: Decodable {
    static let keysKey = CodingUserInfoKey(rawValue: "NetworkCore.JSONStatusReader")!

    var code: Int?
    var message: String?
    var success: Bool?

    init(from decoder: any Decoder) throws {
        guard let reader = decoder.userInfo[Self.keysKey] as? JSONStatusReader else { return }
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        for key in reader.codeKeys.map(AnyCodingKey.init) where code == nil {
            if let number = try? container.decodeIfPresent(Int.self, forKey: key) {
                code = number
            } else if let text = try? container.decodeIfPresent(String.self, forKey: key) {
                code = Int(text)
            }
        }
        for key in reader.messageKeys.map(AnyCodingKey.init) where message == nil {
            message =
                (try? container.decodeIfPresent(String.self, forKey: key))
                ?? (try? container.decodeIfPresent([String].self, forKey: key)).flatMap { messages in
                    messages.isEmpty ? nil : messages.joined(separator: "; ")
                }
        }
        if let successKey = reader.successKey {
            success = try? container.decodeIfPresent(Bool.self, forKey: AnyCodingKey(successKey))
        }
    }
}
