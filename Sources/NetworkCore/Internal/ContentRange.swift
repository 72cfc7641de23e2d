/// A `Content-Range` value of a 206 answer, `bytes FIRST-LAST/COMPLETE` (RFC 9110 §14.4), `COMPLETE`
/// being `*` when the server does not know it.
struct ContentRange: Equatable {
    /// The first byte of the range.
    let first: Int
    /// The last byte of the range, included.
    let last: Int
    /// The whole representation's length, when the server named it.
    let complete: Int?

    /// Reads `value`; `nil` for anything but a well-formed byte range with `first <= last`.
    init?(_ value: String?) {
        guard let value, value.hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst(6).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int(bounds[0]), let last = Int(bounds[1]), first >= 0, first <= last
        else { return nil }
        self.first = first
        self.last = last
        if parts[1] == "*" {
            complete = nil
        } else {
            guard let complete = Int(parts[1]), complete > last else { return nil }
            self.complete = complete
        }
    }
}
