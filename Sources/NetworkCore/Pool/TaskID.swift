import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Derives a task id from a request: `"GET https://api.example.com/items?a=1&b=2"`.
///
/// Query items are sorted, so parameter order does not matter; items whose names are
/// credentials (see ``Redactor``) are left out, and so are user info and fragment. A request
/// with a body gets a digest of it (`" body=3f2a…"`), so different bodies give different ids.
enum TaskID {
    static func derive(from request: URLRequest, redactor: Redactor = .default) -> String {
        let method = request.httpMethod ?? "GET"
        var parts = URLParts(request.url?.absoluteString ?? "")
        parts.head = withoutUserInfo(parts.head)
        let pairs = parts.pairs.filter { !redactor.isSensitive($0.name) }.map(\.rawPair).sorted()
        var id = "\(method) \(URLParts.join(head: parts.head, pairs: pairs))"
        if let body = request.httpBody, !body.isEmpty {
            id += " body=\(digest(body))"
        }
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

    private static func withoutUserInfo(_ head: String) -> String {
        let parts = URLParts.split(head: head)
        guard parts.userInfo != nil else { return head }
        return String(parts.prefix + parts.host + parts.path)
    }
}
