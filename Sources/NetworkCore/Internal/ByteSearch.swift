import Foundation

/// Finds bytes in bytes, 64 positions at a time. It runs on every accepted response a status reader
/// with a success key looks at (``JSONStatusReader``), so it must be cheap: `Data.range(of:)` is generic
/// code that is many times slower on Linux, and the C library's `memmem` slower than this on the short
/// needles and bodies of JSON answers (`Benchmarks/NOTES.md` has the figures).
///
/// For each block of 16 starting positions it compares two of the needle's bytes, at their offsets,
/// with the bytes at those offsets from every position at once; only a block with a position where
/// both match is compared in full. The two bytes are the needle's second and second-to-last: in a JSON
/// key such as `"success"` the first and last are quotes, which JSON is full of.
enum ByteSearch {
    static func contains(_ haystack: Data, _ needle: Data) -> Bool {
        haystack.withUnsafeBytes { hay in
            needle.withUnsafeBytes { pin in contains(hay, pin) }
        }
    }

    static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: UnsafeRawBufferPointer) -> Bool {
        let length = needle.count
        guard length > 0 else { return true }
        guard haystack.count >= length, let hay = haystack.baseAddress, let pin = needle.baseAddress else {
            return false
        }
        let last = haystack.count &- length  // the last position the needle can start at
        let (first, second) = length >= 4 ? (1, length &- 2) : (0, length &- 1)
        let firstByte = SIMD16<UInt8>(repeating: needle[first])
        let secondByte = SIMD16<UInt8>(repeating: needle[second])
        /// The 16 positions from `position` on whose two probed bytes match the needle's.
        func candidates(_ position: Int) -> SIMDMask<SIMD16<Int8>> {
            (hay.loadUnaligned(fromByteOffset: position &+ first, as: SIMD16<UInt8>.self) .== firstByte)
                .& (hay.loadUnaligned(fromByteOffset: position &+ second, as: SIMD16<UInt8>.self) .== secondByte)
        }
        var position = 0
        // 64 positions at a time while they all fit; a block with a candidate is compared position by position.
        while position &+ 63 <= last {
            let any64 =
                candidates(position) .| candidates(position &+ 16) .| candidates(position &+ 32)
                .| candidates(position &+ 48)
            if hasAny(any64), occurs(pin, length, in: hay, from: position, to: position &+ 63) { return true }
            position &+= 64
        }
        while position &+ 15 <= last {
            if hasAny(candidates(position)), occurs(pin, length, in: hay, from: position, to: position &+ 15) {
                return true
            }
            position &+= 16
        }
        return position <= last && occurs(pin, length, in: hay, from: position, to: last)
    }

    /// Whether any lane is set: the mask's 16 bytes read as two words. (`any(_:)` is a call to a generic
    /// minimum here, several times the cost of the comparisons it follows.)
    @inline(__always)
    private static func hasAny(_ mask: SIMDMask<SIMD16<Int8>>) -> Bool {
        let words = unsafeBitCast(mask, to: SIMD2<UInt64>.self)
        return words[0] | words[1] != 0
    }

    /// Whether the needle starts at any position from `start` to `end`, both included; compared in full.
    @inline(never)
    private static func occurs(
        _ needle: UnsafeRawPointer, _ length: Int, in hay: UnsafeRawPointer, from start: Int, to end: Int
    ) -> Bool {
        (start...end).contains { memcmp(hay + $0, needle, length) == 0 }
    }
}

extension UInt8 {
    /// The byte with an ASCII letter in lower case; any other byte as it is.
    var lowercasedASCII: UInt8 { (0x41...0x5a).contains(self) ? self | 0x20 : self }
}
