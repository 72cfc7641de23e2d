import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Hides credentials in URLs and headers before anything is printed or logged.
///
/// A name is sensitive when it is in ``sensitiveNames`` or contains `token`, `password`,
/// `secret` or `apikey` (case and `-`/`_` ignored), so `Authorization`, `X-Auth-Token`,
/// `api_key`, `session_id` and `request_token` are all hidden.
/// ```swift
/// let shown = Redactor.default.redact("https://api.example.com/a?api_key=abc&page=1")
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

    /// A short digest of a secret that tells two secrets apart without showing either: `"#5c1f0a9e3b27"`.
    ///
    /// The digest is keyed with a random value made once per process, so the same secret gives the
    /// same fingerprint for the life of the process, different secrets almost surely different ones,
    /// and a fingerprint can neither be reversed nor matched against one from another process. Task
    /// ids use it for credentials; a service can use it to name calls made with different credentials.
    public static func fingerprint(_ secret: String) -> String {
        var hasher = Hasher()
        hasher.combine(fingerprintKey.0)
        hasher.combine(fingerprintKey.1)
        hasher.combine(secret)
        let hex = String(UInt64(bitPattern: Int64(hasher.finalize())) & 0xffff_ffff_ffff, radix: 16)
        return "#" + String(repeating: "0", count: 12 - hex.count) + hex
    }

    /// The key of ``fingerprint(_:)``: random, made once per process (also where `Hasher` is seeded
    /// the same every run, with `SWIFT_DETERMINISTIC_HASHING`).
    private static let fingerprintKey = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))

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
        // Nothing to hide without a query, a fragment or user information: the URL as it is.
        guard
            urlString.utf8.contains(where: {
                $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: "@")
            })
        else { return urlString }
        var parts = URLParts(urlString)
        parts.head = redactUserInfo(parts.head)
        let joined = URLParts.join(head: parts.head, pairs: redactedPairs(of: parts))
        // A fragment may carry credentials too (`#access_token=…` in OAuth's implicit flow).
        let redacted = parts.fragment.map { joined + "#" + redact(fragment: $0) } ?? joined
        // With nothing hidden, the text as it was (taken apart and joined, a lone `?` or an empty pair is lost).
        return redacted.contains(Self.placeholder) ? redacted : urlString
    }

    /// A fragment with the values of sensitive `name=value` pairs hidden: pairs alone (`#access_token=…`), or
    /// after a route and a `?` (`#/callback?access_token=…`, as single-page apps write them).
    private func redact(fragment: String) -> String {
        guard fragment.contains("=") else { return fragment }
        if fragment.contains("?") { return redact(fragment) }
        return redactedPairs(of: URLParts("?" + fragment)).joined(separator: "&")
    }

    /// The query's `name=value` pairs as written, the values of sensitive ones hidden.
    private func redactedPairs(of parts: URLParts) -> [String] {
        parts.pairs.map { pair in
            isSensitive(pair.name)
                ? "\(pair.rawPair.split(separator: "=", maxSplits: 1)[0])=\(Self.placeholder)" : pair.rawPair
        }
    }

    /// The headers with what their values may carry hidden, each as ``redact(headerValue:named:secrets:)`` does.
    public func redact(headers: [String: String]) -> [String: String] {
        redact(headers: headers, secrets: [])
    }

    /// The headers with what their values may carry hidden, and the given secret values (a request's, see
    /// ``secrets(in:)``) scrubbed where a server echoes them, each as ``redact(headerValue:named:secrets:)`` does.
    public func redact(headers: [String: String], secrets: Set<String>) -> [String: String] {
        headers.reduce(into: [:]) { result, header in
            result[header.key] = redact(headerValue: header.value, named: header.key, secrets: secrets)
        }
    }

    /// A header's value with what it may carry hidden: all of it under a sensitive name; otherwise every URL
    /// in it redacted as ``redact(_:)-(String)`` redacts one (a `Location`, a `Link`'s targets, a `Refresh`'s
    /// `url=`, a `Content-Location`), and the given secret values scrubbed where a server echoes them.
    /// ```swift
    /// let shown = Redactor.default.redact(headerValue: "/next?api_key=abc#access_token=xyz", named: "Location")
    /// // "/next?api_key=<redacted>#access_token=<redacted>"
    /// ```
    public func redact(headerValue value: String, named name: String, secrets: Set<String> = []) -> String {
        if isSensitive(name) { return Self.placeholder }
        let hidden = redactURLs(in: value)
        return secrets.isEmpty ? hidden : scrub(hidden, secrets: secrets)
    }

    /// The text with each of its URLs redacted. A URL runs up to white space, a quote or an angle bracket (the
    /// ends of URLs in `Link`, `Refresh` and free text); only a run with a query, a fragment or user information
    /// can hold a secret, so any other text is kept as it is.
    private func redactURLs(in text: String) -> String {
        func delimits(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "<")
                || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
        }
        func mayHold(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") || byte == UInt8(ascii: "@")
        }
        guard text.utf8.contains(where: mayHold) else { return text }
        var result = ""
        var run = Substring(text).utf8[...]
        while let start = run.firstIndex(where: { !delimits($0) }) {
            result += String(Substring(run[..<start]))
            let end = run[start...].firstIndex(where: delimits) ?? run.endIndex
            let url = String(Substring(run[start..<end]))
            result += url.utf8.contains(where: mayHold) ? redact(url) : url
            run = run[end...]
        }
        return result + String(Substring(run))
    }

    /// A body as text with sensitive fields hidden: JSON objects (at any depth) and form bodies are
    /// redacted field by field; other text is kept; bytes that are not UTF-8 are summarised.
    /// A body with nothing to hide is returned exactly as it was.
    public func redact(body: Data, contentType: String?) -> String {
        guard let text = String(data: body, encoding: .utf8) else { return "<\(body.count) bytes>" }
        let type = contentType?.lowercased() ?? ""
        if type.contains("json") || body.first.map({ $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "[") }) == true,
            let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
        {
            var changed = false
            let redacted = redact(json: object, changed: &changed)
            guard changed, let data = try? JSONSerialization.data(withJSONObject: redacted, options: [.sortedKeys])
            else { return text }
            return String(decoding: data, as: UTF8.self)
        }
        if type.contains("x-www-form-urlencoded") {
            return String(redact("?" + text).dropFirst())
        }
        return text
    }

    /// The secret values a request carries: sensitive query items, headers (a `Bearer` token on its
    /// own too) and JSON or form fields. Values shorter than 4 characters are left out.
    public func secrets(in request: URLRequest) -> Set<String> {
        var found = Set<String>()
        found.formUnion(sensitiveValues(in: URLParts(request.url?.absoluteString ?? "")))
        for (name, value) in request.allHTTPHeaderFields ?? [:] where isSensitive(name) {
            found.insert(value)
            if let space = value.firstIndex(of: " ") { found.insert(String(value[value.index(after: space)...])) }
        }
        if let body = request.httpBody {
            if let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) {
                collectSecrets(in: object, into: &found)
            } else if let text = String(data: body, encoding: .utf8), text.contains("=") {
                found.formUnion(sensitiveValues(in: URLParts("?" + text)))
            }
        }
        return found.filter { $0.count >= 4 && $0 != Self.placeholder }
    }

    /// The values of sensitive `name=value` pairs, as written and percent-decoded.
    private func sensitiveValues(in parts: URLParts) -> Set<String> {
        var values = Set<String>()
        for pair in parts.pairs where isSensitive(pair.name) {
            let raw = pair.rawPair.split(separator: "=", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            values.insert(raw)
            values.insert(raw.removingPercentEncoding ?? raw)
        }
        return values
    }

    /// The text with every occurrence of the given secret values replaced by the placeholder: as
    /// written, JSON-escaped (`tok\/AbC+123==`, `\u002F`) and percent-encoded.
    public func scrub(_ text: String, secrets: Set<String>) -> String {
        let forms = Set(secrets.flatMap(Self.writtenForms)).filter { $0.count >= 4 }
        // Longest first, so a value that contains another is replaced whole.
        return forms.sorted { $0.count > $1.count }.reduce(text) { text, secret in
            text.replacingOccurrences(of: secret, with: Self.placeholder)
        }
    }

    /// The ways a secret may be written in a text: as it is, JSON-escaped, percent-encoded.
    private static func writtenForms(of secret: String) -> [String] {
        var forms = [secret]
        if let data = try? JSONSerialization.data(withJSONObject: [secret], options: [.fragmentsAllowed]),
            let array = String(data: data, encoding: .utf8), array.count >= 4
        {
            forms.append(String(array.dropFirst(2).dropLast(2)))  // `["…"]` without the brackets and quotes
        }
        forms.append(secret.replacingOccurrences(of: "/", with: "\\/"))
        forms.append(secret.replacingOccurrences(of: "/", with: "\\u002F"))
        forms.append(secret.replacingOccurrences(of: "/", with: "\\u002f"))
        if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) { forms.append(encoded) }
        return forms
    }

    private func collectSecrets(in json: Any, into found: inout Set<String>) {
        switch json {
        case let object as [String: Any]:
            for (key, value) in object {
                if isSensitive(key), let text = value as? String { found.insert(text) }
                collectSecrets(in: value, into: &found)
            }
        case let array as [Any]:
            for item in array { collectSecrets(in: item, into: &found) }
        default:
            break
        }
    }

    private func redact(json: Any, changed: inout Bool) -> Any {
        switch json {
        case let object as [String: Any]:
            var copy: [String: Any] = [:]
            for (key, value) in object {
                if isSensitive(key) {
                    copy[key] = Self.placeholder
                    changed = true
                } else {
                    copy[key] = redact(json: value, changed: &changed)
                }
            }
            return copy
        case let array as [Any]:
            return array.map { redact(json: $0, changed: &changed) }
        default:
            return json
        }
    }

    private func redactUserInfo(_ head: String) -> String {
        let parts = URLParts.split(head: head)
        guard let userInfo = parts.userInfo else { return head }
        let user = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let hidden = userInfo.contains(":") ? "\(user):\(Self.placeholder)" : String(user)
        return parts.prefix + hidden + "@" + parts.host + parts.path
    }
}
