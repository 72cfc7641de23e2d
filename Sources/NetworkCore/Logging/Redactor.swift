import Foundation

/// Hides credentials in URLs and headers before anything is printed or logged.
///
/// A name is sensitive when it is in ``sensitiveNames`` or contains `token`, `password`,
/// `secret` or `apikey` (case and `-`/`_` ignored), so `Authorization`, `X-Auth-Token`,
/// `api_key`, `session_id` and `request_token` are all hidden.
/// ```swift
/// Redactor.default.redact("https://api.example.com/a?api_key=abc&page=1")
/// // "https://api.example.com/a?api_key=<redacted>&page=1"
/// ```
public struct Redactor: Sendable {
    /// What stands in for a hidden value.
    public static let placeholder = "<redacted>"

    /// The redactor NetworkCore uses unless told otherwise.
    public static let `default` = Redactor()

    /// Names (of headers, query items or fields) whose values are hidden, compared case-insensitively.
    public var sensitiveNames: Set<String>

    /// Creates a redactor; `extraNames` are added to the default list.
    public init(extraNames: Set<String> = []) {
        sensitiveNames = Set(
            [
                "authorization", "proxy-authorization", "cookie", "set-cookie", "api_key", "session_id",
                "guest_session_id", "sid", "key", "signature", "sig", "code_verifier", "otp",
            ] + extraNames.map { $0.lowercased() })
    }

    /// Whether values under this name are hidden.
    public func isSensitive(_ name: String) -> Bool {
        let lowered = name.lowercased()
        if sensitiveNames.contains(lowered) { return true }
        let folded = lowered.filter { $0 != "-" && $0 != "_" }
        return ["token", "password", "passwd", "secret", "apikey", "credential"].contains { folded.contains($0) }
    }

    /// The URL with the values of sensitive query items and any password in it hidden.
    public func redact(_ url: URL?) -> String {
        guard let url else { return "-" }
        return redact(url.absoluteString)
    }

    /// The URL string with the values of sensitive query items and any password in it hidden.
    public func redact(_ urlString: String) -> String {
        var parts = URLParts(urlString)
        parts.head = redactUserInfo(parts.head)
        let pairs = parts.pairs.map { pair in
            isSensitive(pair.name)
                ? "\(pair.rawPair.split(separator: "=", maxSplits: 1)[0])=\(Self.placeholder)" : pair.rawPair
        }
        let joined = URLParts.join(head: parts.head, pairs: pairs)
        return parts.fragment.map { joined + "#" + $0 } ?? joined
    }

    /// The headers with sensitive values hidden.
    public func redact(headers: [String: String]) -> [String: String] {
        headers.reduce(into: [:]) { result, header in
            result[header.key] = isSensitive(header.key) ? Self.placeholder : header.value
        }
    }

    private func redactUserInfo(_ head: String) -> String {
        guard let schemeEnd = head.range(of: "://") else { return head }
        let authorityStart = schemeEnd.upperBound
        let authorityEnd = head[authorityStart...].firstIndex(of: "/") ?? head.endIndex
        let authority = head[authorityStart..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { return head }
        let userInfo = authority[..<at]
        let user = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let hidden = userInfo.contains(":") ? "\(user):\(Self.placeholder)" : String(user)
        return String(head[..<authorityStart]) + hidden + String(head[at..<head.endIndex])
    }
}
