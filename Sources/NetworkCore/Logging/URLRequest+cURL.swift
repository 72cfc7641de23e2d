import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLRequest {
    /// The request as a `curl` command that can be pasted into a shell, secrets redacted.
    ///
    /// `Authorization`, `Cookie`, API keys, tokens, passwords and session ids are replaced by
    /// `<redacted>` in headers (URLs in other headers' values too, such as a `Referer`), the query,
    /// and JSON or form bodies, unless `revealingSecrets` is `true` (an explicit opt-in, for a private
    /// terminal only).
    /// ```
    /// curl -X POST 'https://api.themoviedb.org/3/authentication/session/new?api_key=<redacted>' \
    ///   -H 'Content-Type: application/json' \
    ///   --data '{"request_token":"<redacted>"}'
    /// ```
    public func cURLDescription(revealingSecrets: Bool = false, redactor: Redactor = .default) -> String {
        var lines = ["curl"]
        let method = httpMethod ?? "GET"
        if method != "GET" { lines[0] += " -X \(method)" }
        let url = url?.absoluteString ?? ""
        lines[0] += " " + Self.quoted(revealingSecrets ? url : redactor.redact(url))
        let headers = allHTTPHeaderFields ?? [:]
        let secrets = revealingSecrets || headers.isEmpty ? [] : redactor.secrets(in: self)
        for name in headers.keys.sorted() {
            let value =
                revealingSecrets
                ? headers[name]! : redactor.redact(headerValue: headers[name]!, named: name, secrets: secrets)
            lines.append("-H " + Self.quoted("\(name): \(value)"))
        }
        if let body = httpBody, !body.isEmpty {
            let text =
                revealingSecrets
                ? String(data: body, encoding: .utf8) ?? "<\(body.count) bytes>"
                : redactor.redact(body: body, contentType: value(forHTTPHeaderField: "Content-Type"))
            lines.append("--data " + Self.quoted(text))
        }
        return lines.joined(separator: " \\\n  ")
    }

    /// Single-quoted for a POSIX shell.
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

extension DataTask {
    /// The task's request as a `curl` command, secrets redacted unless `revealingSecrets`.
    public func cURLDescription(revealingSecrets: Bool = false) -> String {
        request.cURLDescription(revealingSecrets: revealingSecrets)
    }
}
