import Foundation

extension KeyedDecodingContainer {
    /// The value, or `nil` when the key is missing, `null`, or of another type.
    func lenient<T: Decodable>(_ type: T.Type, forKey key: Key) -> T? {
        (try? decodeIfPresent(T.self, forKey: key)) ?? nil
    }

    /// The string, or `nil` when it is missing, `null`, empty, or not a string.
    func nonEmptyString(forKey key: Key) -> String? {
        lenient(String.self, forKey: key).flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// Decodes a list element by element, keeping what decodes and counting what does not,
/// so one malformed movie does not fail a whole page.
struct LossyList<Element: Decodable>: Decodable {
    var elements: [Element] = []
    var skipped = 0

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd {
            let item = try container.decode(Attempt.self)
            if let value = item.value { elements.append(value) } else { skipped += 1 }
        }
    }

    private struct Attempt: Decodable {
        let value: Element?
        init(from decoder: any Decoder) throws { value = try? Element(from: decoder) }
    }
}

/// TMDB's date formats: `"2023-04-05"` and `"2016-08-26 17:04:39 UTC"`, read in UTC.
enum TMDBDate {
    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// The date, or `nil` for an empty or malformed string.
    static func parse(_ text: String?) -> Date? {
        guard let text, !text.isEmpty else { return nil }
        let parts = text.split(whereSeparator: { "- :".contains($0) }).compactMap { Int($0) }
        guard parts.count == 3 || parts.count >= 6 else { return nil }
        var components = DateComponents()
        components.year = parts[0]
        components.month = parts[1]
        components.day = parts[2]
        if parts.count >= 6 {
            components.hour = parts[3]
            components.minute = parts[4]
            components.second = parts[5]
        }
        guard (1...12).contains(parts[1]), (1...31).contains(parts[2]) else { return nil }
        return calendar.date(from: components)
    }

    /// The year of a date string, or `nil`.
    static func year(_ text: String?) -> Int? {
        parse(text).map { calendar.component(.year, from: $0) }
    }
}
