import Foundation

/// Reads an HTTP date (RFC 9110 §5.6.7): the preferred IMF-fixdate, and the obsolete RFC 850 and asctime
/// forms a recipient must accept.
enum HTTPDate {
    /// The date `value` names, or `nil` when it is not an HTTP date.
    static func parse(_ value: String?) -> Date? {
        guard let value = value?.trimmingWhitespace(), !value.isEmpty else { return nil }
        // The preferred form is read by hand: a formatter costs far more to make than the cache's hit
        // path may spend, and every stored answer's freshness reads one or two dates.
        if let date = imfFixdate(value) { return date }
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

    /// `Sun, 06 Nov 1994 08:49:37 GMT` exactly, or `nil`.
    static func imfFixdate(_ value: String) -> Date? {
        let bytes = Array(value.utf8)
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == UInt8(ascii: " "),
            bytes[7] == UInt8(ascii: " "), bytes[11] == UInt8(ascii: " "), bytes[16] == UInt8(ascii: " "),
            bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25...].elementsEqual(" GMT".utf8),
            let day = number(bytes[5..<7]), let year = number(bytes[12..<16]), let hour = number(bytes[17..<19]),
            let minute = number(bytes[20..<22]), let second = number(bytes[23..<25]),
            let month = months.firstIndex(where: { $0.elementsEqual(bytes[8..<11]) }),
            (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        // Days since 1970-01-01 of the civil date (H. Hinnant's `days_from_civil`).
        let (y, m) = month < 2 ? (year - 1, month + 13) : (year, month + 1)
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (m - 3) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .map { Array($0.utf8) }

    /// The decimal number the digits spell, or `nil` if one is not a digit.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for digit in digits {
            guard (0x30...0x39).contains(digit) else { return nil }
            value = value * 10 + Int(digit - 0x30)
        }
        return value
    }

    /// IMF-fixdate, RFC 850, asctime.
    private static let formats = [
        "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
    ]
}
