/// RFC 3986 percent-encoding.
enum PercentEncoding {
    /// Encodes every byte except the unreserved characters (`A–Z a–z 0–9 - . _ ~`), so a query
    /// or form component never changes meaning: `"a b&c=d+e/f"` → `"a%20b%26c%3Dd%2Be%2Ff"`.
    static func component(_ string: String) -> String {
        encode(string) { isUnreserved($0) }
    }

    /// Writes `bytes` to `output` from `start`, encoding what may not stand in a URL path: it keeps
    /// the unreserved characters, `/`, the sub-delimiters, `:`, `@` and escapes already present (`%20`);
    /// a `%` that starts no escape becomes `%25`. Returns where the written bytes end. `output` needs
    /// room for ``maxEncodedCount(_:)`` bytes from `start`.
    static func encodePath(
        _ bytes: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>, at start: Int
    ) -> Int {
        var end = start
        for index in bytes.indices {
            let byte = bytes[index]
            // An escape's two hex digits are unreserved, so keeping its `%` keeps the escape.
            if isUnreserved(byte) || isPathDelimiter(byte)
                || (byte == UInt8(ascii: "%") && index + 2 < bytes.count && isHex(bytes[index + 1])
                    && isHex(bytes[index + 2]))
            {
                output[end] = byte
                end += 1
            } else {
                end = writeEscape(byte, into: output, at: end)
            }
        }
        return end
    }

    /// The most bytes `count` bytes can become when encoded: three each.
    static func maxEncodedCount(_ count: Int) -> Int { count * 3 }

    private static func encode(_ string: String, keeping keep: (UInt8) -> Bool) -> String {
        if string.utf8.allSatisfy(keep) { return string }
        var string = string  // `withUTF8` needs a mutable string; a native one is not copied
        return string.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: maxEncodedCount(bytes.count)) { output in
                var end = 0
                for byte in bytes {
                    if keep(byte) {
                        output[end] = byte
                        end += 1
                    } else {
                        end = writeEscape(byte, into: output, at: end)
                    }
                }
                return end
            }
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Writes `%XX` for `byte` at `index`; returns where it ends.
    private static func writeEscape(_ byte: UInt8, into output: UnsafeMutableBufferPointer<UInt8>, at index: Int) -> Int
    {
        output[index] = UInt8(ascii: "%")
        output[index + 1] = hexDigits[Int(byte >> 4)]
        output[index + 2] = hexDigits[Int(byte & 0x0F)]
        return index + 3
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static func isPathDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "!"), UInt8(ascii: "$"),
            UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"),
            UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="):
            true
        default: false
        }
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default: false
        }
    }
}
