import Foundation

/// Reads an HTTP date (RFC 9110 §5.6.7): the preferred IMF-fixdate, and the obsolete RFC 850 and asctime
/// forms a recipient must accept.
enum HTTPDate {
    /// The date `value` names, or `nil` when it is not an HTTP date. Every form is read by hand: a
    /// formatter costs far more to make than the cache's hit path may spend, and FoundationNetworking's
    /// `DateFormatter` leaks memory on some malformed values, which any server can send.
    static func parse(_ value: String?, now: Date = Date()) -> Date? {
        guard let value = value?.trimmingWhitespace(), !value.isEmpty else { return nil }
        let bytes = Array(value.utf8)
        return imfFixdate(bytes) ?? rfc850(bytes, now: now) ?? asctime(bytes)
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT` exactly, or `nil`.
    static func imfFixdate(_ value: String) -> Date? { imfFixdate(Array(value.utf8)) }

    private static func imfFixdate(_ bytes: [UInt8]) -> Date? {
        guard bytes.count == 29, weekdays.contains(where: { $0.prefix(3).elementsEqual(bytes[0..<3]) }),
            bytes[3] == UInt8(ascii: ","), bytes[4] == UInt8(ascii: " "), bytes[7] == UInt8(ascii: " "),
            bytes[11] == UInt8(ascii: " "), bytes[25...].elementsEqual(" GMT".utf8),
            let day = number(bytes[5..<7]), let month = month(bytes[8..<11]), let year = number(bytes[12..<16])
        else { return nil }
        return date(year: year, month: month, day: day, time: bytes[16..<25])
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT` (RFC 850), a two-digit year read as the most recent year with
    /// those digits that is not more than 50 years after `now` (RFC 9110 §5.6.7), or `nil`.
    private static func rfc850(_ bytes: [UInt8], now: Date) -> Date? {
        guard let comma = bytes.firstIndex(of: UInt8(ascii: ",")),
            weekdays.contains(where: { $0.elementsEqual(bytes[..<comma]) }), bytes.count == comma + 24
        else { return nil }
        let rest = bytes[(comma + 1)...]
        let start = rest.startIndex
        guard rest[start] == UInt8(ascii: " "), rest[start + 3] == UInt8(ascii: "-"),
            rest[start + 7] == UInt8(ascii: "-"), rest[(start + 19)...].elementsEqual(" GMT".utf8),
            let day = number(rest[(start + 1)..<(start + 3)]), let month = month(rest[(start + 4)..<(start + 7)]),
            let twoDigits = number(rest[(start + 8)..<(start + 10)])
        else { return nil }
        let thisYear = Calendar(identifier: .gregorian).component(.year, from: now)
        var year = thisYear - thisYear % 100 + twoDigits
        if year > thisYear + 50 { year -= 100 }
        return date(year: year, month: month, day: day, time: rest[(start + 10)..<(start + 19)])
    }

    /// `Sun Nov  6 08:49:37 1994` (C's asctime: the day padded with a space), or `nil`.
    private static func asctime(_ bytes: [UInt8]) -> Date? {
        guard bytes.count == 24, weekdays.contains(where: { $0.prefix(3).elementsEqual(bytes[0..<3]) }),
            bytes[3] == UInt8(ascii: " "), bytes[7] == UInt8(ascii: " "), bytes[19] == UInt8(ascii: " "),
            let month = month(bytes[4..<7]), let year = number(bytes[20..<24])
        else { return nil }
        let day = bytes[8] == UInt8(ascii: " ") ? number(bytes[9..<10]) : number(bytes[8..<10])
        guard let day else { return nil }
        return date(year: year, month: month, day: day, time: bytes[10..<19])
    }

    /// The date of a civil day and a ` HH:MM:SS` time (its leading space included), or `nil` when they
    /// are not a valid day and time.
    private static func date(year: Int, month: Int, day: Int, time: ArraySlice<UInt8>) -> Date? {
        let start = time.startIndex
        guard time.count == 9, time[start] == UInt8(ascii: " "), time[start + 3] == UInt8(ascii: ":"),
            time[start + 6] == UInt8(ascii: ":"), let hour = number(time[(start + 1)..<(start + 3)]),
            let minute = number(time[(start + 4)..<(start + 6)]), let second = number(time[(start + 7)..<(start + 9)]),
            (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        // Days since 1970-01-01 of the civil date (H. Hinnant's `days_from_civil`); `month` counts from 0.
        let (y, m) = month < 2 ? (year - 1, month + 13) : (year, month + 1)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (m - 3) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    /// The month a three-letter name names, from 0.
    private static func month(_ name: ArraySlice<UInt8>) -> Int? {
        months.firstIndex { $0.elementsEqual(name) }
    }

    private static let weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
        .map { Array($0.utf8) }
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
}
