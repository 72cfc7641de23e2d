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

    /// Where the first `://` ends.
    private static func schemeSeparatorEnd(in string: String) -> String.Index? {
        var contiguous = string  // `withUTF8` needs a mutable string; a native one is not copied
        guard let separator = contiguous.withUTF8(schemeSeparator(in:)) else { return nil }
        return string.utf8.index(string.utf8.startIndex, offsetBy: separator + 3)
    }

    /// The offset at which the first `://` in `bytes` starts, if there is one; byte by byte, as every
    /// URL NetworkCore builds, redacts or names is looked at with it.
    static func schemeSeparator(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let colon = UInt8(ascii: ":")
        let slash = UInt8(ascii: "/")
        var index = 0
        while index + 2 < bytes.count {
            if bytes[index] == colon, bytes[index + 1] == slash, bytes[index + 2] == slash { return index }
            index += 1
        }
        return nil
    }

    /// The URL again, from the head and the given pairs, without the fragment.
    static func join(head: String, pairs: [String]) -> String {
        pairs.isEmpty ? head : head + "?" + pairs.joined(separator: "&")
    }
}
