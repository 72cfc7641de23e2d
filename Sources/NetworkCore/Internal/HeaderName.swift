/// Header names in the one spelling FoundationNetworking's `URLRequest.setValue(_:forHTTPHeaderField:)`
/// stores them in (`x-api-key` → `X-Api-Key`), so that merging headers by name is case-insensitive
/// and the request carries the names it always did, without Foundation's per-call string work.
enum HeaderName {
    /// A header that cannot be sent: its name is not an HTTP token (RFC 9110), or its value has a line
    /// break or NUL, which would smuggle in headers of their own (Foundation would drop them silently).
    enum Problem: Equatable {
        case invalidName(String)
        case invalidValue(name: String)
    }

    /// Adds `headers` to `fields` under their canonical names (a later spelling of a name replaces an
    /// earlier one); stops at the first header that cannot be sent and returns its problem.
    static func merge(_ headers: [String: String], into fields: inout [String: String]) -> Problem? {
        for (name, value) in headers {
            guard isToken(name) else { return .invalidName(name) }
            guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
                return .invalidValue(name: name)
            }
            fields[canonical(name)] = value
        }
        return nil
    }

    /// The headers under their canonical names, or `nil` if one cannot be sent: the check
    /// `Endpoint.urlRequest(defaultHeaders:timeout:)` makes for each request, made once.
    static func checked(_ headers: [String: String]) -> [String: String]? {
        var fields: [String: String] = [:]
        fields.reserveCapacity(headers.count)
        return merge(headers, into: &fields) == nil ? fields : nil
    }

    /// Whether two header names are the same, ASCII letters compared without case (names are tokens):
    /// without Foundation's locale-aware comparison, which costs far more.
    static func same(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        // Native strings hold their bytes in one piece: compared there, without iterators (a response head's
        // fields are looked up this way on every answer).
        let compared = a.utf8.withContiguousStorageIfAvailable { a in
            b.utf8.withContiguousStorageIfAvailable { b in
                a.indices.allSatisfy { a[$0].lowercasedASCII == b[$0].lowercasedASCII }
            }
        }
        if let compared, let compared { return compared }
        return zip(a.utf8, b.utf8).allSatisfy { $0.lowercasedASCII == $1.lowercasedASCII }
    }

    /// Whether `text` is an HTTP token (RFC 9110 §5.6.2), as a header name or a method must be.
    static func isToken(_ text: String) -> Bool { !text.isEmpty && text.utf8.allSatisfy(isTokenByte) }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// The canonical spelling of an HTTP token: each letter upper case when the character before it
    /// (skipping `'`, `^` and `` ` ``, which `String.capitalized` passes over) is not a letter,
    /// lower case otherwise. Returns `name` itself when it is already spelled so.
    static func canonical(_ name: String) -> String {
        guard needsChange(name) else { return name }
        var afterLetter = false
        let bytes = name.utf8.map { byte -> UInt8 in
            let (letter, adjusted) = Self.adjust(byte, afterLetter: afterLetter)
            if !isCaseIgnorable(byte) { afterLetter = letter }
            return adjusted
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func needsChange(_ name: String) -> Bool {
        var afterLetter = false
        for byte in name.utf8 {
            let (letter, adjusted) = adjust(byte, afterLetter: afterLetter)
            if adjusted != byte { return true }
            if !isCaseIgnorable(byte) { afterLetter = letter }
        }
        return false
    }

    /// Whether `byte` is an ASCII letter, and its spelling at this place.
    private static func adjust(_ byte: UInt8, afterLetter: Bool) -> (isLetter: Bool, byte: UInt8) {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): (true, afterLetter ? byte + 32 : byte)
        case UInt8(ascii: "a")...UInt8(ascii: "z"): (true, afterLetter ? byte : byte - 32)
        default: (false, byte)
        }
    }

    private static func isCaseIgnorable(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "'") || byte == UInt8(ascii: "^") || byte == UInt8(ascii: "`")
    }
}
