/// A URL string cut into what comes before the query, the query's `name=value` pairs as written,
/// and the fragment; used to redact and to derive ids without re-encoding anything.
struct URLParts {
    var head: String
    var pairs: [(name: String, rawPair: String)]
    var fragment: String?

    init(_ string: String) {
        var rest = Substring(string)
        if let hash = rest.utf8.firstIndex(of: UInt8(ascii: "#")) {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        guard let mark = rest.utf8.firstIndex(of: UInt8(ascii: "?")) else {
            head = String(rest)
            pairs = []
            return
        }
        head = String(rest[..<mark])
        pairs = rest[rest.index(after: mark)...].split(separator: "&").map { pair in
            let name = String(pair[..<(pair.utf8.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex)])
            let decoded = name.utf8.contains(UInt8(ascii: "%")) ? name.removingPercentEncoding : nil
            return (name: decoded ?? name, rawPair: String(pair))
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
        var userInfo: Substring? { authority.utf8.lastIndex(of: UInt8(ascii: "@")).map { authority[..<$0] } }

        /// Host and port, after any user info.
        var host: Substring {
            authority.utf8.lastIndex(of: UInt8(ascii: "@")).map { authority[authority.index(after: $0)...] }
                ?? authority
        }
    }

    /// Cuts a head (a URL without query and fragment) at its authority.
    static func split(head: String) -> Head {
        guard let authorityStart = schemeSeparatorEnd(in: head) else {
            return Head(prefix: head.prefix(0), authority: head.prefix(0), path: head[...])
        }
        let authorityEnd = head.utf8[authorityStart...].firstIndex(of: UInt8(ascii: "/")) ?? head.endIndex
        return Head(
            prefix: head[..<authorityStart], authority: head[authorityStart..<authorityEnd],
            path: head[authorityEnd...])
    }

    /// Where the first `://` ends, found byte by byte.
    private static func schemeSeparatorEnd(in string: String) -> String.Index? {
        let bytes = string.utf8
        var from = bytes.startIndex
        while let colon = bytes[from...].firstIndex(of: UInt8(ascii: ":")) {
            let rest = bytes[bytes.index(after: colon)...]
            if rest.starts(with: "//".utf8) { return bytes.index(colon, offsetBy: 3) }
            from = rest.startIndex
        }
        return nil
    }

    /// The URL again, from the head and the given pairs, without the fragment.
    static func join(head: String, pairs: [String]) -> String {
        pairs.isEmpty ? head : head + "?" + pairs.joined(separator: "&")
    }
}
