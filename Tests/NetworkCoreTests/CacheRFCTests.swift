import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The cache stage alone, no network: an answer goes through a transaction into a store, and a later
/// request is looked up at a given moment. Each case runs over a `MemoryCacheStore` and a `DiskCacheStore`.
@Suite("Caching: Age, fields never stored and partial content (RFC 9111 §3.1, §3.3, §4, §5.1), on the stage alone")
struct CacheRFCTests {
    /// The store a case runs over.
    enum Store: String, CaseIterable, CustomTestStringConvertible {
        case memory, disk
        var testDescription: String { rawValue }

        /// A new store of this kind; a disk store in `directory`, which the caller removes.
        func make(in directory: URL) throws -> any CacheStore {
            switch self {
            case .memory: MemoryCacheStore()
            case .disk: try DiskCacheStore(directory: directory)
            }
        }
    }

    /// One case: the first answer (its status and fields), then a second request `later` seconds on.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        var status = 200
        let fields: [String: String]
        /// Whether the answer is stored.
        var stored = true
        /// Fields the stored entry and a served answer must have (name → value) or lack (name → nil).
        var kept: [String: String?] = [:]
        /// Seconds between the answer and the second request.
        var later: TimeInterval = 10
        /// The second request's `Cache-Control`, if any.
        var requestControl: String?
        /// How the second request is answered: the store's source and the `Age` field it carries, or `nil`
        /// when it goes to the network.
        var served: (source: Response.Source, age: String)?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "Age: 7200, 0 (one line, or two joined): the first member counts; two hours old is stale",
            fields: ["Cache-Control": "max-age=3600", "Age": "7200, 0"], served: nil),
        Case(
            name: "Age: 0, 7200: the first member counts; fresh, served 10 s older",
            fields: ["Cache-Control": "max-age=3600", "Age": "0, 7200"], served: (.cache, "10")),
        Case(
            name: "Age: 7200 alone: stale", fields: ["Cache-Control": "max-age=3600", "Age": "7200"], served: nil),
        Case(
            name: "an Age whose first member is not delta-seconds is ignored",
            fields: ["Cache-Control": "max-age=3600", "Age": "soon, 7200"], served: (.cache, "10")),
        Case(
            name: "a stored Age: 30 is served as its current age, 40, replacing it",
            fields: ["Cache-Control": "max-age=600", "age": "30"], kept: ["age": "30"], served: (.cache, "40")),
        Case(
            name: "a stale answer the request's max-stale takes carries its age too",
            fields: ["Cache-Control": "max-age=60", "Age": "100"], later: 5.5, requestControl: "max-stale=600",
            served: (.stale, "105")),
        Case(
            name: "an answer with no Age is served with one",
            fields: ["Cache-Control": "max-age=600"], later: 0, served: (.cache, "0")),
        Case(
            name: "Connection and the fields it names are not stored; other fields are",
            fields: [
                "Cache-Control": "max-age=600", "Connection": "X-A, x-b", "X-A": "1", "x-B": "2", "X-C": "3",
            ],
            kept: ["Connection": nil, "X-A": nil, "x-B": nil, "X-C": "3"], served: (.cache, "10")),
        Case(
            name: "fields meant for one hop or one proxy are not stored",
            fields: [
                "Cache-Control": "max-age=600", "Keep-Alive": "timeout=5", "Transfer-Encoding": "chunked",
                "Upgrade": "h2c", "Proxy-Authenticate": "Basic", "Proxy-Connection": "keep-alive", "TE": "trailers",
                "Set-Cookie": "s=1", "ETag": "\"e\"",
            ],
            kept: [
                "Keep-Alive": nil, "Transfer-Encoding": nil, "Upgrade": nil, "Proxy-Authenticate": nil,
                "Proxy-Connection": nil, "TE": nil, "Set-Cookie": nil, "ETag": "\"e\"",
            ], served: (.cache, "10")),
        Case(
            name: "a 200 that carries Content-Range is stored with it",
            fields: ["Cache-Control": "max-age=600", "Content-Range": "bytes 0-4/5"],
            kept: ["Content-Range": "bytes 0-4/5"], served: (.cache, "10")),
        Case(
            name: "a 206 is not stored", status: 206,
            fields: ["Cache-Control": "max-age=600", "Content-Range": "bytes 0-4/10"], stored: false, served: nil),
    ]

    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let request = URLRequest(url: URL(string: "http://cache.example/r")!)

    /// The network's answer with `status`, `fields` and the body "hello", sent and received at `now`.
    static func answer(_ status: Int, _ fields: [String: String], to request: URLRequest = request) -> Response {
        Response(
            request: request,
            httpResponse: HTTPURLResponse(
                url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)!,
            body: Data("hello".utf8), duration: 0)
    }

    /// The transaction `lookup` makes for a request that goes to the network.
    static func sending(_ request: URLRequest, in store: any CacheStore, at now: Date) -> CacheTransaction? {
        guard
            case .send(let transaction) = CacheTransaction.lookup(request, in: store, policy: .followProtocol, now: now)
        else { return nil }
        return transaction
    }

    @Test("an answer is stored, kept and served as RFC 9111 says", arguments: cases, Store.allCases)
    func table(_ test: Case, _ kind: Store) throws {
        let directory = CacheStoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try kind.make(in: directory)
        let transaction = try #require(Self.sending(Self.request, in: store, at: Self.now))
        let first = transaction.resolve(Self.answer(test.status, test.fields), request: Self.request, now: Self.now)
        #expect(first.source == .network && first.statusCode == test.status)
        let key = CacheTransaction.key(for: Self.request, method: "GET")
        let entry = store.response(forKey: key)
        #expect((entry != nil) == test.stored)
        for (name, value) in test.kept { #expect(entry?.header(name) == value, "stored \(name)") }

        var second = Self.request
        second.setValue(test.requestControl, forHTTPHeaderField: "Cache-Control")
        let later = Self.now.addingTimeInterval(test.later)
        switch CacheTransaction.lookup(second, in: store, policy: .followProtocol, now: later) {
        case .answer(let stored, let source, let age, _):
            let served = CacheTransaction.response(stored, for: second, source: source, age: age)
            #expect(source == test.served?.source)
            #expect(served.header("Age") == test.served?.age)
            #expect(served.headers.keys.filter { $0.lowercased() == "age" }.count == 1)
            #expect(served.age.map { Int($0) }.map(String.init) == test.served?.age)
            for (name, value) in test.kept where name.lowercased() != "age" {
                #expect(served.header(name) == value, "served \(name)")
            }
            #expect(served.body == Data("hello".utf8))
        case .send:
            #expect(test.served == nil, "went to the network")
        case .notCached:
            Issue.record("not cached under followProtocol")
        }
    }

    @Test(
        "a 304 updates the stored answer but for the fields its Connection names; its Age replaces the stored one",
        arguments: Store.allCases)
    func notModified(_ kind: Store) throws {
        let directory = CacheStoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try kind.make(in: directory)
        let stored = ["Cache-Control": "max-age=0", "ETag": "\"v1\"", "Age": "30", "X-A": "old"]
        let first = try #require(Self.sending(Self.request, in: store, at: Self.now))
        _ = first.resolve(Self.answer(200, stored), request: Self.request, now: Self.now)
        let key = CacheTransaction.key(for: Self.request, method: "GET")

        // A 304 without Age: the stored answer is as old as its new round trip, and is not served with an Age.
        let later = Self.now.addingTimeInterval(5)
        let validation = try #require(Self.sending(Self.request, in: store, at: later))
        #expect(validation.conditional(Self.request).value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
        let fields = ["Connection": "x-a, keep-alive", "X-A": "hop", "X-B": "new", "Keep-Alive": "timeout=5"]
        let revalidated = validation.resolve(Self.answer(304, fields), request: Self.request, now: later)
        #expect(revalidated.source == .revalidated && revalidated.statusCode == 200)
        #expect(revalidated.body == Data("hello".utf8))
        #expect(revalidated.header("Age") == nil && revalidated.age == 0)
        #expect(revalidated.header("X-A") == "old" && revalidated.header("X-B") == "new")
        let entry = try #require(store.response(forKey: key))
        #expect(entry.header("Age") == nil && entry.header("Connection") == nil && entry.header("Keep-Alive") == nil)
        #expect(entry.header("X-A") == "old" && entry.header("X-B") == "new" && entry.header("ETag") == "\"v1\"")

        // A 304 with Age: 3 (from a cache on the way): that is the stored answer's age from now.
        let again = Self.now.addingTimeInterval(8)
        let second = try #require(Self.sending(Self.request, in: store, at: again))
        let aged = second.resolve(Self.answer(304, ["Age": "3"]), request: Self.request, now: again)
        #expect(aged.source == .revalidated && aged.age == 3 && aged.header("Age") == "3")
        #expect(store.response(forKey: key)?.header("Age") == "3")
    }

    @Test("Age fields read as RFC 9111 §5.1 says, and the field a cache sends is whole seconds")
    func ageFields() {
        let read: [(String?, Int?)] = [
            (nil, nil), ("0", 0), ("7200", 7200), ("7200, 0", 7200), ("0,7200", 0), (" 15 , 3", 15), ("", nil),
            ("-1", nil), ("1.5", nil), ("x, 5", nil), (", 5", nil), ("99999999999", CacheControl.largestDelta),
        ]
        for (field, seconds) in read { #expect(Freshness.statedAge(field) == seconds, "Age: \(field ?? "none")") }
        let sent: [(TimeInterval, String)] = [
            (0, "0"), (0.999, "0"), (40.5, "40"), (-3, "0"), (1e12, "2147483648"), (.infinity, "2147483648"),
            (.nan, "2147483648"),
        ]
        for (age, field) in sent { #expect(Freshness.ageField(age) == field, "age \(age)") }
    }
}
