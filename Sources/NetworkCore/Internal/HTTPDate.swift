import Foundation

/// Reads an HTTP date (RFC 9110 §5.6.7): the preferred IMF-fixdate, and the obsolete RFC 850 and asctime
/// forms a recipient must accept.
enum HTTPDate {
    /// The date `value` names, or `nil` when it is not an HTTP date.
    static func parse(_ value: String?) -> Date? {
        guard let value = value?.trimmingWhitespace(), !value.isEmpty else { return nil }
        for formatter in formatters {
            if let date = formatter.date(from: value) { return date }
        }
        return nil
    }

    private static var formatters: [DateFormatter] {
        ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"].map { format in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            return formatter
        }
    }
}
