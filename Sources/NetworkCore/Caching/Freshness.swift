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
        if let maxAge = control.maxAge {
            (lifetime, isHeuristic) = (TimeInterval(maxAge), false)
            return
        }
        let date = HTTPDate.parse(field("Date")) ?? receivedAt
        if let expires = field("Expires") {
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

    /// The seconds an `Age` field states (RFC 9111 §5.1): of a list (`Age: 7200, 0`, or two `Age` lines
    /// joined), the first member, the rest discarded; `nil` when that member is not delta-seconds, and the
    /// field is then ignored.
    static func statedAge(_ field: String?) -> Int? {
        guard let field else { return nil }
        let first = field.firstIndex(of: ",").map { field[..<$0] } ?? field[...]
        return CacheControl.seconds(String(first).trimmingWhitespace())
    }

    /// The `Age` field a cache sends with a stored response it uses without validation (RFC 9111 §4,
    /// §5.1): the response's current age in whole seconds, at most ``CacheControl/largestDelta``.
    static func ageField(_ age: TimeInterval) -> String {
        String(
            age.isFinite ? Int(min(max(0, age), TimeInterval(CacheControl.largestDelta))) : CacheControl.largestDelta)
    }

    /// Whether a response `age` seconds old is still fresh.
    func isFresh(age: TimeInterval) -> Bool { lifetime.map { age < $0 } ?? false }

    /// The response's age at `now` (RFC 9111 §4.2.3): the larger of what its `Date` says and what its
    /// `Age` field says plus the round trip, then the time it has been stored.
    static func age(
        ageField: String?, dateField: String?, requestedAt: Date, receivedAt: Date, now: Date
    ) -> TimeInterval {
        let apparent = HTTPDate.parse(dateField).map { max(0, receivedAt.timeIntervalSince($0)) } ?? 0
        let stated = TimeInterval(statedAge(ageField) ?? 0)
        let corrected = stated + max(0, receivedAt.timeIntervalSince(requestedAt))
        return max(apparent, corrected) + max(0, now.timeIntervalSince(receivedAt))
    }
}

/// What a cache may do with a stored response for a request (RFC 9111 §4.2 and §4.3, RFC 5861, RFC 8246).
enum CacheUse: Equatable, Sendable {
    /// Answer from the store without asking the server.
    case serve
    /// Answer from the store now, and validate it with the server in the background
    /// (`stale-while-revalidate`).
    case serveAndRevalidate
    /// Ask the server first, with the stored response's validators.
    case validate
}

extension Freshness {
    /// What to do with a stored response of this freshness, `age` seconds old, whose own directives are
    /// `stored`, for a request whose directives are `request`:
    /// - `no-cache` (of either) asks the server, but an `immutable` response still fresh is served even
    ///   to a reload;
    /// - a request's `max-age` refuses an older response, and its `min-fresh` one about to go stale;
    /// - fresh: served; stale: served if the request's `max-stale` allows it, never past
    ///   `must-revalidate`, served while revalidating within `stale-while-revalidate`, else validated.
    func use(age: TimeInterval, stored: CacheControl, request: CacheControl) -> CacheUse {
        guard let lifetime, !stored.noCache else { return .validate }
        if let maxAge = request.maxAge, age > TimeInterval(maxAge) { return .validate }
        let remaining = lifetime - age
        if remaining > 0, remaining >= TimeInterval(request.minFresh ?? 0) {
            return request.noCache && !stored.immutable ? .validate : .serve
        }
        guard !request.noCache, !stored.mustRevalidate, remaining <= 0 else { return .validate }
        let staleness = -remaining
        if let maxStale = request.maxStale, staleness <= TimeInterval(maxStale) { return .serve }
        if let window = stored.staleWhileRevalidate, staleness <= TimeInterval(window) { return .serveAndRevalidate }
        return .validate
    }

    /// Whether the stored response, `age` seconds old, may answer when the server cannot (an error, a 5xx):
    /// within the `stale-if-error` of the request, else of the response, and never past `must-revalidate`.
    func usableOnError(age: TimeInterval, stored: CacheControl, request: CacheControl) -> Bool {
        guard let lifetime, !stored.mustRevalidate, !stored.noCache else { return false }
        if age < lifetime { return true }
        guard let window = request.staleIfError ?? stored.staleIfError else { return false }
        return age - lifetime <= TimeInterval(window)
    }
}
