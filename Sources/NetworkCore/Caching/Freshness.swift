import Foundation

/// How long a stored response stays fresh and how old it is (RFC 9111 §4.2), computed from its fields and
/// from when the cache sent the request and got the response.
struct Freshness: Equatable, Sendable {
    /// Seconds the response is fresh for from when it was made; `nil` when it has no explicit expiry and
    /// no heuristic one is allowed (it can then be stored only to be validated).
    let lifetime: TimeInterval?
    /// Whether ``lifetime`` is the cache's own estimate from `Last-Modified` rather than the server's.
    let isHeuristic: Bool

    /// The statuses a cache may give a heuristic lifetime when the response names none (RFC 9110 §15.1).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// The most a heuristic lifetime is: a day, however long ago the resource last changed.
    static let largestHeuristic: TimeInterval = 86_400

    /// The freshness of a response with `status`, whose field `name` is `field(name)` (names are matched
    /// as the response's own lookup matches them), and whose `Cache-Control` reads `control`:
    /// `max-age`, else `Expires` less `Date` (an `Expires` that is not a date has expired), else a tenth
    /// of the time since `Last-Modified` when the status allows a heuristic or the response is `public`.
    /// `receivedAt` stands in for a missing or unreadable `Date`.
    init(status: Int, control: CacheControl, receivedAt: Date, field: (String) -> String?) {
        let date = HTTPDate.parse(field("Date")) ?? receivedAt
        if let maxAge = control.maxAge {
            (lifetime, isHeuristic) = (TimeInterval(maxAge), false)
        } else if let expires = field("Expires") {
            let lifetime = HTTPDate.parse(expires).map { max(0, $0.timeIntervalSince(date)) } ?? 0
            (self.lifetime, isHeuristic) = (lifetime, false)
        } else if Self.heuristicallyCacheable.contains(status) || control.isPublic,
            let modified = HTTPDate.parse(field("Last-Modified")), modified < date
        {
            (lifetime, isHeuristic) = (min(date.timeIntervalSince(modified) / 10, Self.largestHeuristic), true)
        } else {
            (lifetime, isHeuristic) = (nil, false)
        }
    }

    /// The response's age at `now` (RFC 9111 §4.2.3): the larger of what its `Date` says and what its
    /// `Age` field says plus the round trip, then the time it has been stored.
    static func age(
        ageField: String?, dateField: String?, requestedAt: Date, receivedAt: Date, now: Date
    ) -> TimeInterval {
        let apparent = HTTPDate.parse(dateField).map { max(0, receivedAt.timeIntervalSince($0)) } ?? 0
        let stated = TimeInterval(CacheControl.seconds(ageField?.trimmingWhitespace()) ?? 0)
        let corrected = stated + max(0, receivedAt.timeIntervalSince(requestedAt))
        return max(apparent, corrected) + max(0, now.timeIntervalSince(receivedAt))
    }
}
