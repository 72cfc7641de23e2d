import Foundation

/// Checks run before untrusted bytes reach Foundation's JSON decoder.
enum JSONGuard {
    /// Why `data` must not be handed to `JSONDecoder`, or `nil` when it may be.
    ///
    /// A body whose last byte is `[` or `{` is never valid JSON. It is also exactly the shape that
    /// makes `JSONDecoder` on Swift 6.3 (Linux) trap instead of throwing, when that bracket is the
    /// one past its 512-level nesting limit (found by NetworkCore's fuzz test: 513 × `[`).
    /// Rejecting it here costs one byte comparison and turns a crash into a typed error.
    static func rejection(of data: Data) -> String? {
        guard let last = data.last, last == UInt8(ascii: "[") || last == UInt8(ascii: "{") else { return nil }
        return "the body ends inside an array or object (truncated JSON)"
    }
}
