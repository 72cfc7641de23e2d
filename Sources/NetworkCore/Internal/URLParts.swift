import Foundation

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

    /// Scheme, host and port (the scheme's default when none is written), lowercased, read from the URL's
    /// text, user info left out: what a credential is scoped to (``RedirectPolicy``) and what a pool's
    /// per-host limit counts. `nil` for a URL without scheme or host. In one pass over the bytes, as every
    /// send asks for it.
    static func origin(of url: URL?) -> String? {
        guard var text = url?.absoluteString else { return nil }
        return text.withUTF8(origin(in:))
    }

    /// ``origin(of:)`` of a URL's UTF-8 bytes.
    static func origin(in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard let separator = schemeSeparator(in: bytes), separator > 0 else { return nil }
        // The authority ends at the path, or at a query or fragment (either may hold an `@` or a `:`).
        var end = separator + 3
        while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"),
            bytes[end] != UInt8(ascii: "#")
        {
            end += 1
        }
        var hostStart = separator + 3
        for index in hostStart..<end where bytes[index] == UInt8(ascii: "@") { hostStart = index + 1 }
        // A port follows the last `:`, unless that `:` is inside an IPv6 literal's brackets.
        var hostEnd = end
        var writtenPort: Int?
        var index = end - 1
        while index >= hostStart, bytes[index] != UInt8(ascii: ":"), bytes[index] != UInt8(ascii: "]") { index -= 1 }
        if index >= hostStart, bytes[index] == UInt8(ascii: ":") {
            hostEnd = index
            let digits = end - index - 1
            if digits > 0, digits <= 9, bytes[(index + 1)..<end].allSatisfy({ (0x30...0x39).contains($0) }) {
                writtenPort = bytes[(index + 1)..<end].reduce(0) { $0 * 10 + Int($1 - 0x30) }
            }
        }
        guard hostEnd > hostStart else { return nil }
        let port = writtenPort ?? defaultPort(ofScheme: UnsafeBufferPointer(rebasing: bytes[..<separator]))
        // Written as `String(port)` would write it, `-1` included.
        var digitCount = 1
        var rest = port.magnitude / 10
        while rest > 0 {
            digitCount += 1
            rest /= 10
        }
        let portLength = (port < 0 ? 1 : 0) + digitCount
        // Written straight into the string's storage: one allocation, where an array and a string were two.
        return String(unsafeUninitializedCapacity: separator + 4 + hostEnd - hostStart + portLength) { out in
            var count = 0
            func append(_ byte: UInt8) {
                out[count] = byte
                count += 1
            }
            for index in 0..<separator { append(bytes[index].lowercasedASCII) }
            for byte in "://".utf8 { append(byte) }
            for index in hostStart..<hostEnd { append(bytes[index].lowercasedASCII) }
            append(UInt8(ascii: ":"))
            if port < 0 { append(UInt8(ascii: "-")) }
            count += digitCount
            var value = port.magnitude
            for position in stride(from: count - 1, through: count - digitCount, by: -1) {
                out[position] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
            return count
        }
    }

    /// The port a scheme's URLs use when they name none: 443 for `https` and `wss`, 80 for `http` and
    /// `ws`, -1 for any other; the scheme compared without regard to case.
    private static func defaultPort(ofScheme scheme: UnsafeBufferPointer<UInt8>) -> Int {
        func isScheme(_ name: StaticString) -> Bool {
            guard scheme.count == name.utf8CodeUnitCount else { return false }
            let name = name.utf8Start
            for index in 0..<scheme.count where scheme[index].lowercasedASCII != name[index] { return false }
            return true
        }
        return isScheme("https") || isScheme("wss") ? 443 : isScheme("http") || isScheme("ws") ? 80 : -1
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
