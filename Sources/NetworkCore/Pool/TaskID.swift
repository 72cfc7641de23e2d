import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Derives a task id from a request: `"GET https://api.example.com/items?a=1&b=2"`.
///
/// The id tells every call apart while showing no secret. Query items are sorted, so parameter
/// order does not matter; the value of an item whose name is a credential (see ``Redactor``) is
/// shown as its ``Redactor/fingerprint(_:)`` (`api_key=#5c1f0a9e3b27`); credentials in headers
/// (`Authorization`, `Cookie`…) and user info add one fingerprint of them all (`" credentials=#…"`);
/// a body adds a digest of it (`" body=3f2a…"`). The fragment, never sent, is left out.
enum TaskID {
    static func derive(from request: URLRequest, redactor: Redactor = .default) -> String {
        let method = request.httpMethod ?? "GET"
        var parts = URLParts(request.url?.absoluteString ?? "")
        var credentials = ""
        let head = URLParts.split(head: parts.head)
        if let userInfo = head.userInfo {
            credentials = String(userInfo)
            parts.head = String(head.prefix + head.host + head.path)
        }
        let pairs = parts.pairs.map { pair in
            guard redactor.isSensitive(pair.name) else { return pair.rawPair }
            let cut = pair.rawPair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return "\(cut[0])=\(Redactor.fingerprint(cut.count > 1 ? String(cut[1]) : ""))"
        }.sorted()
        var id = "\(method) \(URLParts.join(head: parts.head, pairs: pairs))"
        if let body = request.httpBody, !body.isEmpty {
            id += " body=\(digest(body))"
        }
        if let headers = request.allHTTPHeaderFields {
            for (name, value) in headers.sorted(by: { $0.key.lowercased() < $1.key.lowercased() })
            where redactor.isSensitive(name) {
                credentials += "\n\(name.lowercased()): \(value)"
            }
        }
        if !credentials.isEmpty { id += " credentials=\(Redactor.fingerprint(credentials))" }
        return id
    }

    /// FNV-1a, 64 bits, as 16 hex digits: stable across runs and platforms, unlike `Hasher`.
    static func digest(_ data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
