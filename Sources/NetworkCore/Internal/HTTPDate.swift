import Foundation

/// Reads an HTTP date (RFC 9110 §5.6.7): the preferred IMF-fixdate, and the obsolete RFC 850 and asctime
/// forms a recipient must accept.
enum HTTPDate {
    /// The date `value` names, or `nil` when it is not an HTTP date.
    static func parse(_ value: String?) -> Date? {
        guard let value = value?.trimmingWhitespace(), !value.isEmpty else { return nil }
        // One formatter at a time: the preferred form, nearly always the one used, is tried first, and the
        // others are made only when it does not match.
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: value) { return date }
        }
        return nil
    }

    /// IMF-fixdate, RFC 850, asctime.
    private static let formats = [
        "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
    ]
}
