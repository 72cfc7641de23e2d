/// Header names in the one spelling FoundationNetworking's `URLRequest.setValue(_:forHTTPHeaderField:)`
/// stores them in (`x-api-key` → `X-Api-Key`), so that merging headers by name is case-insensitive
/// and the request carries the names it always did, without Foundation's per-call string work.
enum HeaderName {
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
