import Foundation
import Testing

@testable import NetworkCore

@Suite("Caching: Cache-Control directives, freshness and age (RFC 9111)")
struct CacheControlTests {
    static func control(_ set: (inout CacheControl) -> Void) -> CacheControl {
        var control = CacheControl(nil)
        set(&control)
        return control
    }

    @Test(
        "directives are read case-insensitively, with quoted values and unknown ones ignored",
        arguments: [
            ("max-age=60", control { $0.maxAge = 60 }),
            (
                "Max-Age=\"60\", PUBLIC",
                control {
                    $0.maxAge = 60; $0.isPublic = true
                }
            ),
            ("no-store", control { $0.noStore = true }),
            (
                "no-cache=\"Set-Cookie, X-A\", max-age=5",
                control {
                    $0.noCache = true; $0.maxAge = 5
                }
            ),
            (
                "private, must-revalidate",
                control {
                    $0.isPrivate = true; $0.mustRevalidate = true
                }
            ),
            (
                "max-age=31536000, immutable",
                control {
                    $0.maxAge = 31_536_000; $0.immutable = true
                }
            ),
            (
                "max-age=1, stale-while-revalidate=30, stale-if-error=600",
                control {
                    $0.maxAge = 1; $0.staleWhileRevalidate = 30; $0.staleIfError = 600
                }
            ),
            ("max-stale", control { $0.maxStale = Int.max }),
            (
                "max-stale=20, min-fresh=5, only-if-cached",
                control {
                    $0.maxStale = 20; $0.minFresh = 5; $0.onlyIfCached = true
                }
            ),
            ("community=\"UCI\", extension, max-age=7", control { $0.maxAge = 7 }),
            (" , ,max-age=3,, ", control { $0.maxAge = 3 }),
        ])
    func directives(_ field: String, _ expected: CacheControl) {
        #expect(CacheControl(field) == expected, "\(field)")
    }

    @Test("invalid or conflicting max-age reads as stale; huge values are capped; absent is none")
    func invalidFreshness() {
        #expect(CacheControl("max-age=abc").maxAge == 0)
        #expect(CacheControl("max-age=-5").maxAge == 0)
        #expect(CacheControl("max-age").maxAge == 0)
        #expect(CacheControl("max-age=10, max-age=20").maxAge == 0)
        #expect(CacheControl("max-age=10, max-age=10").maxAge == 10)
        #expect(CacheControl("max-age=99999999999999999999").maxAge == CacheControl.largestDelta)
        #expect(CacheControl(nil) == CacheControl(""))
        #expect(CacheControl(nil).maxAge == nil)
        #expect(CacheControl("stale-if-error=soon").staleIfError == nil)
    }

    @Test("a comma inside a quoted value does not split directives")
    func quotedCommas() {
        let directives = CacheControl.directives(of: #"no-cache="a, b", x="say \"hi\", ok", max-age=1"#)
        #expect(directives.map(\.0) == ["no-cache", "x", "max-age"])
        #expect(directives[0].1 == "a, b")
        #expect(directives[2].1 == "1")
    }

    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static func http(_ date: Date) -> String { httpDate(date) }

    static func freshness(status: Int = 200, _ fields: [String: String]) -> Freshness {
        Freshness(status: status, control: CacheControl(fields["Cache-Control"]), receivedAt: now) { fields[$0] }
    }

    @Test("freshness: max-age first, then Expires less Date, then a tenth since Last-Modified where allowed")
    func lifetimes() {
        let date = Self.http(Self.now)
        #expect(Self.freshness(["Cache-Control": "max-age=60", "Expires": Self.http(Self.now + 999)]).lifetime == 60)
        #expect(Self.freshness(["Date": date, "Expires": Self.http(Self.now + 300)]).lifetime == 300)
        #expect(Self.freshness(["Date": date, "Expires": Self.http(Self.now - 300)]).lifetime == 0)
        #expect(Self.freshness(["Date": date, "Expires": "0"]).lifetime == 0)  // not a date: expired
        // No Date: the time it was received stands in.
        #expect(Self.freshness(["Expires": Self.http(Self.now + 120)]).lifetime == 120)
        let heuristic = Self.freshness(["Date": date, "Last-Modified": Self.http(Self.now - 10_000)])
        #expect(heuristic.lifetime == 1_000)
        #expect(heuristic.isHeuristic)
        #expect(Self.freshness(["Date": date, "Last-Modified": Self.http(Self.now - 10_000_000)]).lifetime == 86_400)
        // 201 and 500 are not heuristically cacheable, unless public.
        #expect(
            Self.freshness(status: 201, ["Date": date, "Last-Modified": Self.http(Self.now - 10_000)]).lifetime == nil)
        #expect(Self.freshness(status: 500, ["Last-Modified": Self.http(Self.now - 10_000)]).lifetime == nil)
        let publicOne = Self.freshness(
            status: 500, ["Cache-Control": "public", "Last-Modified": Self.http(Self.now - 10_000)])
        #expect(publicOne.lifetime == 1_000)
        #expect(Self.freshness(["Date": date]).lifetime == nil)
        // A Last-Modified after Date says nothing.
        #expect(Self.freshness(["Date": date, "Last-Modified": Self.http(Self.now + 50)]).lifetime == nil)
    }

    @Test("age: the larger of Date's apparent age and Age plus the round trip, then the time stored")
    func ages() {
        let requested = Self.now - 2
        let received = Self.now
        func age(_ ageField: String?, _ date: Date?, at now: Date) -> TimeInterval {
            Freshness.age(
                ageField: ageField, dateField: date.map(Self.http), requestedAt: requested, receivedAt: received,
                now: now)
        }
        #expect(age(nil, nil, at: received) == 2)  // only the round trip
        #expect(age("100", Self.now - 10, at: received) == 102)  // Age + round trip beats Date's 10
        #expect(age(nil, Self.now - 30, at: received + 60) == 90)  // Date's 30 beats the round trip, then 60 stored
        #expect(age("x", Self.now + 500, at: received) == 2)  // a Date ahead of the clock counts as 0
    }

    @Test("HTTP dates in the three forms a recipient must accept; anything else is none")
    func httpDates() {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.parse("yesterday") == nil)
        #expect(HTTPDate.parse("") == nil)
        #expect(HTTPDate.parse(nil) == nil)
        // asctime with a two-digit day; RFC 850's two-digit year, never more than 50 years ahead.
        #expect(HTTPDate.parse("Wed Nov 16 08:49:37 1994") == expected.addingTimeInterval(10 * 86_400))
        let in2026 = Date(timeIntervalSince1970: 1_795_600_000)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: in2026) == expected)
        #expect(HTTPDate.parse("Tuesday, 06-Nov-46 08:49:37 GMT", now: in2026).map(Self.year) == 2046)
        #expect(HTTPDate.parse("Friday, 06-Nov-77 08:49:37 GMT", now: in2026).map(Self.year) == 1977)
        // Near misses: a wrong separator, weekday, zone, length or field.
        for value in [
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun 06 Nov 1994 08:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sunday, 06-Foo-94 08:49:37 GMT", "Sunny, 06-Nov-94 08:49:37 GMT", "Sun Nov 6 08:49:37 1994",
            "Sun Nov  6 08:49:37 94", "Sun, 0& Nov\u{1}\0\0\0:49:37 GMT",
        ] {
            #expect(HTTPDate.parse(value) == nil, "\(value)")
        }
    }

    static func year(_ date: Date) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        return calendar.component(.year, from: date)
    }

    @Test("the preferred form, read by hand, agrees with a date formatter from 1900 to 2100, leap days included")
    func imfFixdateAgreesWithAFormatter() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var generator = SystemRandomNumberGenerator()
        let start = -2_208_988_800.0  // 1900-01-01
        let span = 6_311_433_600.0  // to 2100
        var samples = (0..<100).map { _ in (start + Double.random(in: 0..<span, using: &generator)).rounded(.down) }
        // 2000-02-29, 2100-03-01, 2024-02-29 and the epoch's edges.
        samples += [951_782_400, 951_868_799, 4_107_542_400, 1_709_164_800, 0, -1]
        for seconds in samples {
            let date = Date(timeIntervalSince1970: seconds)
            let text = formatter.string(from: date)
            #expect(HTTPDate.imfFixdate(text) == date, "\(text)")
        }
        for bad in [
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 19x4 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:60:37 GMT", "Sun; 06 Nov 1994 08:49:37 GMT",
        ] {
            #expect(HTTPDate.imfFixdate(bad) == nil, "\(bad)")
        }
    }
}

@Suite("Caching: what a stored response may be used for (RFC 9111 §4.2, RFC 5861, RFC 8246)")
struct CacheUseTests {
    /// A stored response with these directives, fresh for `lifetime` seconds (`nil`: none).
    static func stored(_ field: String, lifetime: TimeInterval?) -> (Freshness, CacheControl) {
        let control = CacheControl(field)
        let date = CacheControlTests.http(CacheControlTests.now)
        let fields = ["Date": date, "Cache-Control": field]
            .merging(lifetime.map { ["Expires": CacheControlTests.http(CacheControlTests.now + $0)] } ?? [:]) { a, _ in
                a
            }
        return (Freshness(status: 200, control: control, receivedAt: CacheControlTests.now) { fields[$0] }, control)
    }

    @Test(
        "a table of stored responses, ages and requests",
        arguments: [
            // stored Cache-Control, lifetime, age, request Cache-Control, expected
            ("", 60.0, 10.0, "", CacheUse.serve),
            ("", 60, 60, "", .validate),  // exactly its lifetime: stale
            ("", 60, 90, "", .validate),
            ("", nil, 0, "", .validate),  // no lifetime: validate before each use
            ("no-cache", 60, 1, "", .validate),
            ("", 60, 1, "no-cache", .validate),  // a reload
            ("immutable", 60, 1, "no-cache", .serve),  // immutable and fresh: not even a reload asks
            ("immutable", 60, 61, "no-cache", .validate),
            ("", 60, 30, "max-age=20", .validate),
            ("", 60, 30, "max-age=40", .serve),
            ("", 60, 50, "min-fresh=20", .validate),
            ("", 60, 30, "min-fresh=20", .serve),
            ("", 60, 90, "max-stale=60", .serve),
            ("", 60, 90, "max-stale=10", .validate),
            ("", 60, 90, "max-stale", .serve),
            ("must-revalidate", 60, 90, "max-stale", .validate),
            ("stale-while-revalidate=60", 60, 90, "", .serveAndRevalidate),
            ("stale-while-revalidate=60", 60, 200, "", .validate),
            ("stale-while-revalidate=60, must-revalidate", 60, 90, "", .validate),
        ] as [(String, TimeInterval?, TimeInterval, String, CacheUse)])
    func uses(_ field: String, _ lifetime: TimeInterval?, _ age: TimeInterval, _ request: String, _ expected: CacheUse)
    {
        let (freshness, control) = Self.stored(field, lifetime: lifetime)
        #expect(freshness.use(age: age, stored: control, request: CacheControl(request)) == expected)
    }

    @Test("a stale response answers for a failed server only within stale-if-error, and never past must-revalidate")
    func onError() {
        func usable(_ field: String, age: TimeInterval, request: String = "") -> Bool {
            let (freshness, control) = Self.stored(field, lifetime: 60)
            return freshness.usableOnError(age: age, stored: control, request: CacheControl(request))
        }
        #expect(usable("", age: 30))  // still fresh
        #expect(!usable("", age: 90))
        #expect(usable("stale-if-error=60", age: 90))
        #expect(!usable("stale-if-error=60", age: 200))
        #expect(usable("", age: 90, request: "stale-if-error=100"))
        #expect(!usable("stale-if-error=600", age: 90, request: "stale-if-error=10"))  // the request's window rules
        #expect(!usable("stale-if-error=600, must-revalidate", age: 90))
        #expect(!usable("no-cache, stale-if-error=600", age: 30))
    }
}
