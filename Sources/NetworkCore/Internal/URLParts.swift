/// A URL string cut into what comes before the query, the query's `name=value` pairs as written,
/// and the fragment; used to redact and to derive ids without re-encoding anything.
struct URLParts {
    var head: String
    var pairs: [(name: String, rawPair: String)]
    var fragment: String?

    init(_ string: String) {
        var rest = Substring(string)
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        guard let mark = rest.firstIndex(of: "?") else {
            head = String(rest)
            pairs = []
            return
        }
        head = String(rest[..<mark])
        pairs = rest[rest.index(after: mark)...].split(separator: "&").map { pair in
            let name = pair.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return (name: (name.removingPercentEncoding ?? name), rawPair: String(pair))
        }
    }

    /// A URL's head cut at its authority: `https://` + `ana:pw@api.example.com:8080` + `/v1/items`.
    /// A head without `://` is all path.
    struct Head {
        /// Up to and including `://`, or empty.
        let prefix: Substring
        /// User info, host and port, or empty.
        let authority: Substring
        /// From the first `/` after the authority, or empty.
        let path: Substring

        /// The user info before the authority's last `@`, if there is one.
        var userInfo: Substring? { authority.lastIndex(of: "@").map { authority[..<$0] } }

        /// Host and port, after any user info.
        var host: Substring {
            authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        }
    }

    /// Cuts a head (a URL without query and fragment) at its authority.
    static func split(head: String) -> Head {
        guard let schemeEnd = head.range(of: "://") else {
            return Head(prefix: head.prefix(0), authority: head.prefix(0), path: head[...])
        }
        let authorityEnd = head[schemeEnd.upperBound...].firstIndex(of: "/") ?? head.endIndex
        return Head(
            prefix: head[..<schemeEnd.upperBound], authority: head[schemeEnd.upperBound..<authorityEnd],
            path: head[authorityEnd...])
    }

    /// The URL again, from the head and the given pairs, without the fragment.
    static func join(head: String, pairs: [String]) -> String {
        pairs.isEmpty ? head : head + "?" + pairs.joined(separator: "&")
    }
}
