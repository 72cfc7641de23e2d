import Foundation

/// Reads a `Retry-After` header (RFC 9110 §10.2.3): delay seconds, or an HTTP date.
enum RetryAfter {
    /// Seconds to wait from `now`, or `nil` for a missing or unreadable value. A date in the past is 0.
    static func seconds(_ value: String?, now: Date = Date()) -> TimeInterval? {
        guard let value = value?.trimmingWhitespace(), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return seconds >= 0 ? TimeInterval(seconds) : nil }
        return HTTPDate.parse(value).map { max(0, $0.timeIntervalSince(now)) }
    }
}
