import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A loopback server whose answers carry the caching headers a test names, counting the requests it gets:
/// `/r/<case>` answers with a body naming the request's number, and a 304 when the request's validator
/// matches the answer's.
final class CachingServer: @unchecked Sendable {
    // @unchecked Sendable: `count` and `failing` are guarded by `lock`.
    let server: MockServer
    private let lock = NSLock()
    private var count = 0
    private var failing = false
    /// Headers of the answer by path; a 304 carries `notModified` headers as well.
    let headers: @Sendable (String) -> [String: String]
    let notModified: [String: String]

    /// Seconds each answer waits.
    let delay: TimeInterval
    /// Called on the connection's thread before a 304 is sent: a test holds the validation there.
    let beforeNotModified: @Sendable () -> Void

    init(
        notModified: [String: String] = [:], delay: TimeInterval = 0,
        beforeNotModified: @escaping @Sendable () -> Void = {},
        headers: @escaping @Sendable (String) -> [String: String]
    ) throws {
        self.headers = headers
        self.notModified = notModified
        self.delay = delay
        self.beforeNotModified = beforeNotModified
        let box = Box()
        server = try MockServer(port: 0, keepsAlive: true) { request in box.server!.answer(request.urlRequest) }
        box.server = self
    }

    private final class Box: @unchecked Sendable { weak var server: CachingServer? }

    var requests: Int { lock.withLock { count } }
    var baseURL: String { server.baseURL }
    /// Answers 503 from now on.
    func fail() { lock.withLock { failing = true } }

    private func answer(_ request: URLRequest) -> MockResponse {
        let (number, failing) = lock.withLock { () -> (Int, Bool) in
            count += 1
            return (count, self.failing)
        }
        if failing { return MockResponse(StubResponse(statusCode: 503, body: Data("down".utf8))) }
        let path = request.url?.path ?? "/"
        var headers = headers(path)
        let tag = headers["ETag"]
        let modified = headers["Last-Modified"]
        if let tag, request.value(forHTTPHeaderField: "If-None-Match") == tag {
            beforeNotModified()
            return MockResponse(
                StubResponse(statusCode: 304, headers: headers.merging(notModified) { _, new in new }),
                faults: [.delayHead(delay)])
        }
        if tag == nil, let modified, request.value(forHTTPHeaderField: "If-Modified-Since") == modified {
            return MockResponse(StubResponse(statusCode: 304, headers: headers.merging(notModified) { _, new in new }))
        }
        headers["Content-Type"] = "text/plain"
        return MockResponse(
            StubResponse(headers: headers, body: Data("answer \(number)".utf8)), faults: [.delayHead(delay)])
    }

    func stop() { server.stop() }
    /// Stops at once, every open connection closed: no answer is still on its way.
    func kill() { server.kill() }
}

struct CachedGet: Endpoint {
    let baseURL: String
    var path = "r"
    var headers: [String: String] = [:]
    var method: HTTPMethod = .get
    var cachePolicy: CachePolicy?
}

@Suite("Caching: RFC 9111 over a loopback server that counts requests", .serialized)
struct CachingTests {
    static func date(_ offset: TimeInterval) -> String { httpDate(Date().addingTimeInterval(offset)) }

    /// One case: the first answer's headers, the second request's headers, and what the second send
    /// must see: the server's request count after both and the second answer's source.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let answer: [String: String]
        var second: [String: String] = [:]
        let requests: Int
        let source: Response.Source
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "max-age=600: fresh, from the cache", answer: ["Cache-Control": "max-age=600"], requests: 1,
            source: .cache),
        Case(
            name: "no-store: never stored", answer: ["Cache-Control": "no-store, max-age=600"], requests: 2,
            source: .network),
        Case(
            name: "private: a client's cache stores it", answer: ["Cache-Control": "private, max-age=600"], requests: 1,
            source: .cache),
        Case(
            name: "max-age=0 with an ETag: validated, 304 merged",
            answer: ["Cache-Control": "max-age=0", "ETag": "\"v1\""],
            requests: 2, source: .revalidated),
        Case(
            name: "no-cache with Last-Modified: validated with If-Modified-Since",
            answer: ["Cache-Control": "no-cache, max-age=600", "Last-Modified": date(-3_600)], requests: 2,
            source: .revalidated),
        Case(
            name: "Expires in the future: fresh", answer: ["Expires": date(600), "Date": date(0)], requests: 1,
            source: .cache),
        Case(
            name: "Expires in the past, no validator: fetched again", answer: ["Expires": date(-60), "Date": date(0)],
            requests: 2, source: .network),
        Case(
            name: "an Expires that is not a date has expired", answer: ["Expires": "0", "Date": date(0)], requests: 2,
            source: .network),
        Case(
            name: "heuristic: Last-Modified ten days ago makes a day of freshness",
            answer: ["Last-Modified": date(-864_000), "Date": date(0)], requests: 1, source: .cache),
        Case(name: "no freshness at all, no validator: fetched again", answer: [:], requests: 2, source: .network),
        Case(
            name: "Age past max-age: stale, fetched again", answer: ["Cache-Control": "max-age=600", "Age": "700"],
            requests: 2, source: .network),
        Case(
            name: "must-revalidate once stale: fetched again", answer: ["Cache-Control": "max-age=0, must-revalidate"],
            requests: 2, source: .network),
        Case(
            name: "the request's no-cache asks the server", answer: ["Cache-Control": "max-age=600", "ETag": "\"a\""],
            second: ["Cache-Control": "no-cache"], requests: 2, source: .revalidated),
        Case(
            name: "immutable stays served to a reload", answer: ["Cache-Control": "max-age=600, immutable"],
            second: ["Cache-Control": "no-cache"], requests: 1, source: .cache),
        Case(
            name: "the request's max-age=0 refuses a stored answer", answer: ["Cache-Control": "max-age=600"],
            second: ["Cache-Control": "max-age=0"], requests: 2, source: .network),
        Case(
            name: "the request's max-stale takes a stale answer",
            answer: ["Cache-Control": "max-age=600", "Age": "700"],
            second: ["Cache-Control": "max-stale=600"], requests: 1, source: .stale),
        Case(
            name: "Pragma: no-cache without Cache-Control asks the server", answer: ["Cache-Control": "max-age=600"],
            second: ["Pragma": "no-cache"], requests: 2, source: .network),
        Case(
            name: "Vary: the same Accept-Language is served",
            answer: ["Cache-Control": "max-age=600", "Vary": "Accept-Language"],
            requests: 1, source: .cache),
        Case(
            name: "Vary: another Accept-Language is not",
            answer: ["Cache-Control": "max-age=600", "Vary": "Accept-Language"],
            second: ["Accept-Language": "fr"], requests: 2, source: .network),
        Case(
            name: "Vary: * is never stored", answer: ["Cache-Control": "max-age=600", "Vary": "*"], requests: 2,
            source: .network),
        Case(
            name: "another Authorization never gets the stored answer",
            answer: ["Cache-Control": "private, max-age=600"],
            second: ["Authorization": "Bearer other"], requests: 2, source: .network),
        Case(
            name: "a request with its own validator bypasses the cache", answer: ["Cache-Control": "max-age=600"],
            second: ["If-None-Match": "\"x\""], requests: 2, source: .network),
    ]

    @Test("a second request is answered as RFC 9111 says", arguments: cases)
    func table(_ test: Case) async throws {
        let server = try CachingServer { _ in test.answer }
        defer { server.stop() }
        let pool = TaskPool(configuration: .init(cache: MemoryCacheStore()))
        let first = try await pool.send(
            CachedGet(baseURL: server.baseURL, headers: ["Accept-Language": "de", "Authorization": "Bearer me"]))
        #expect(first.source == .network && first.age == nil)
        #expect(String(decoding: first.body, as: UTF8.self) == "answer 1")
        var headers = ["Accept-Language": "de", "Authorization": "Bearer me"]
        headers.merge(test.second) { _, new in new }
        let second = try await pool.send(CachedGet(baseURL: server.baseURL, headers: headers))
        #expect(server.requests == test.requests)
        #expect(second.source == test.source)
        #expect(second.statusCode == 200)
        let expected = test.source == .network ? "answer 2" : "answer 1"
        #expect(String(decoding: second.body, as: UTF8.self) == expected)
        if test.source != .network { #expect(second.age != nil) }
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("a 304 sends the stored validators, and its headers update the stored answer")
    func notModifiedMerges() async throws {
        let server = try CachingServer(notModified: ["Cache-Control": "max-age=600", "X-Version": "2"]) { _ in
            ["Cache-Control": "max-age=0", "ETag": "\"v1\"", "X-Version": "1"]
        }
        defer { server.stop() }
        let pool = TaskPool(configuration: .init(cache: MemoryCacheStore()))
        _ = try await pool.send(CachedGet(baseURL: server.baseURL))
        let second = try await pool.send(CachedGet(baseURL: server.baseURL))
        #expect(server.server.requests.last?.value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
        #expect(second.source == .revalidated && second.header("X-Version") == "2")
        #expect(String(decoding: second.body, as: UTF8.self) == "answer 1")
        // The 304's max-age=600 made the stored answer fresh: the third send asks nobody.
        let third = try await pool.send(CachedGet(baseURL: server.baseURL))
        #expect(server.requests == 2)
        #expect(third.source == .cache && third.header("X-Version") == "2")
    }

    @Test("stale-while-revalidate answers at once and validates in a task of its own")
    func staleWhileRevalidate() async throws {
        let server = try CachingServer(notModified: ["Age": "0"]) { _ in
            ["Cache-Control": "max-age=60, stale-while-revalidate=600", "Age": "100", "ETag": "\"v1\""]
        }
        defer { server.stop() }
        let logger = InMemoryLogger()
        let pool = TaskPool(configuration: .init(logger: logger, cache: MemoryCacheStore()))
        _ = try await pool.send(CachedGet(baseURL: server.baseURL), id: "list")
        let second = try await pool.send(CachedGet(baseURL: server.baseURL), id: "list")
        #expect(second.source == .stale)
        #expect(String(decoding: second.body, as: UTF8.self) == "answer 1")
        let deadline = Date().addingTimeInterval(10)
        while server.requests < 2 || !pool.activeTasks.isEmpty, Date() < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(server.requests == 2)
        #expect(server.server.requests.last?.value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
        #expect(pool.activeTasks.isEmpty)
        // The task leaves the table as it ends; its last event may be logged a moment later.
        #expect(
            await eventually {
                logger.events.contains { $0.taskID == "list (revalidation)" && $0.kind == .finished }
            })
    }

    @Test("stale-if-error: a 503 gets the stored answer; past the window, the 503")
    func staleIfError() async throws {
        let server = try CachingServer { _ in ["Cache-Control": "max-age=0, stale-if-error=600", "ETag": "\"v1\""] }
        defer { server.stop() }
        let pool = TaskPool(configuration: .init(cache: MemoryCacheStore()))
        _ = try await pool.send(CachedGet(baseURL: server.baseURL))
        server.fail()
        let second = try await pool.send(CachedGet(baseURL: server.baseURL))
        #expect(second.source == .stale && String(decoding: second.body, as: UTF8.self) == "answer 1")
        #expect(server.requests == 2)

        let strict = try CachingServer { _ in ["Cache-Control": "max-age=0", "ETag": "\"v1\""] }
        defer { strict.stop() }
        _ = try await pool.send(CachedGet(baseURL: strict.baseURL))
        strict.fail()
        await #expect(throws: NetworkError.self) { try await pool.send(CachedGet(baseURL: strict.baseURL)) }
        do {
            _ = try await pool.send(CachedGet(baseURL: strict.baseURL))
        } catch {
            #expect(error.statusCode == 503)
        }
    }

    @Test("network first falls back to the stored answer, however old, when the server is gone")
    func networkFirstOffline() async throws {
        let server = try CachingServer { _ in ["Cache-Control": "no-cache"] }
        let pool = TaskPool(configuration: .init(cache: MemoryCacheStore(), cachePolicy: .networkFirst))
        let first = try await pool.send(CachedGet(baseURL: server.baseURL))
        let second = try await pool.send(CachedGet(baseURL: server.baseURL))
        #expect(first.source == .network && second.source == .network && server.requests == 2)
        server.kill()
        let offline = try await pool.send(CachedGet(baseURL: server.baseURL))
        #expect(offline.source == .stale, "\(offline.source), \(server.requests) requests")
        #expect(String(decoding: offline.body, as: UTF8.self) == "answer 2")
        // Without a stored answer, the failure is the network's.
        await #expect(throws: NetworkError.self) {
            try await pool.send(CachedGet(baseURL: server.baseURL, path: "other"))
        }
        // Under the protocol, the same stored answer (no-cache, no stale-if-error) does not stand in.
        do {
            _ = try await pool.send(CachedGet(baseURL: server.baseURL, cachePolicy: .followProtocol))
            Issue.record("answered without the server")
        } catch {
            #expect(error.urlError != nil)
        }
    }

    @Test("cache only answers from the store or fails typed; cache first takes any answer young enough")
    func cacheOnlyAndFirst() async throws {
        let server = try CachingServer { _ in ["Cache-Control": "max-age=0"] }
        defer { server.stop() }
        let pool = TaskPool(configuration: .init(cache: MemoryCacheStore()))
        let endpoint = CachedGet(baseURL: server.baseURL)
        do {
            _ = try await pool.send(endpoint.caching(.cacheOnly))
            Issue.record("answered with nothing stored")
        } catch {
            guard case .notCached(let url) = error else { Issue.record("\(error)"); return }
            #expect(url.hasSuffix("/r"))
            #expect(error.localizedDescription.contains("No stored answer"))
        }
        #expect(server.requests == 0)
        _ = try await pool.send(endpoint.caching(.networkOnly))
        let cached = try await pool.send(endpoint.caching(.cacheOnly))
        #expect(cached.source == .stale && server.requests == 1)
        let first = try await pool.send(endpoint.caching(.cacheFirst(maxAge: 3_600)))
        #expect(first.source == .stale && server.requests == 1)
        let protocolSend = try await pool.send(endpoint)
        #expect(protocolSend.source == .network && server.requests == 2)
        // The request's only-if-cached: a stale answer that needs validation is not enough.
        await #expect(throws: NetworkError.self) {
            try await pool.send(CachedGet(baseURL: server.baseURL, headers: ["Cache-Control": "only-if-cached"]))
        }
        #expect(server.requests == 2)
    }

    @Test("cache only never reaches the network where no cache can answer: no store, or a download")
    func cacheOnlyWithoutCache() async throws {
        let server = try CachingServer { _ in ["Cache-Control": "max-age=600"] }
        defer { server.stop() }
        let plain = TaskPool()
        await #expect(throws: NetworkError.self) {
            try await plain.send(CachedGet(baseURL: server.baseURL).caching(.cacheOnly))
        }
        let cached = TaskPool(configuration: .init(cache: MemoryCacheStore(), cachePolicy: .cacheOnly))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("cache-only-\(UUID())")
        do {
            _ = try await cached.download(CachedGet(baseURL: server.baseURL), to: file)
            Issue.record("downloaded")
        } catch {
            guard case .notCached = error else { Issue.record("\(error)"); return }
        }
        #expect(server.requests == 0 && !FileManager.default.fileExists(atPath: file.path))
    }

    @Test("a successful POST forgets the stored answer for its URL, and only for it")
    func unsafeMethodsInvalidate() async throws {
        let server = try CachingServer { _ in ["Cache-Control": "max-age=600"] }
        defer { server.stop() }
        let pool = TaskPool(configuration: .init(cache: MemoryCacheStore()))
        _ = try await pool.send(CachedGet(baseURL: server.baseURL))
        _ = try await pool.send(CachedGet(baseURL: server.baseURL))
        #expect(server.requests == 1)
        _ = try await pool.send(CachedGet(baseURL: server.baseURL, method: .post))
        #expect(server.requests == 2)
        let after = try await pool.send(CachedGet(baseURL: server.baseURL))
        #expect(after.source == .network && server.requests == 3)
        // Another URL's POST leaves it alone.
        _ = try await pool.send(CachedGet(baseURL: server.baseURL, path: "elsewhere", method: .post))
        #expect(try await pool.send(CachedGet(baseURL: server.baseURL)).source == .cache)
    }

    @Test("a disk store answers a second pool, in another run, with the server stopped")
    func diskAcrossPools() async throws {
        let directory = CacheStoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try CachingServer { _ in ["Cache-Control": "max-age=600", "Set-Cookie": "session=secret"] }
        // A session without a cookie jar: the shared one would send the cookie to every loopback test.
        let jarless = URLSessionConfiguration.default
        jarless.httpCookieStorage = nil
        jarless.httpShouldSetCookies = false
        jarless.httpCookieAcceptPolicy = .never
        let first = TaskPool(
            configuration: .init(
                transport: URLSessionTransport(configuration: jarless), cache: try DiskCacheStore(directory: directory))
        )
        _ = try await first.send(CachedGet(baseURL: server.baseURL, path: "r?api_key=SECRETKEY"))
        server.kill()
        let second = TaskPool(configuration: .init(cache: try DiskCacheStore(directory: directory)))
        let answer = try await second.send(CachedGet(baseURL: server.baseURL, path: "r?api_key=SECRETKEY"))
        #expect(answer.source == .cache && String(decoding: answer.body, as: UTF8.self) == "answer 1")
        #expect(answer.header("Set-Cookie") == nil)
        // Another key is another entry: the stored answer is not theirs.
        await #expect(throws: NetworkError.self) {
            try await second.send(CachedGet(baseURL: server.baseURL, path: "r?api_key=OTHER"))
        }
        // No credential in clear on disk.
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let text = String(decoding: try Data(contentsOf: directory.appendingPathComponent(name)), as: UTF8.self)
            #expect(!text.contains("SECRETKEY") && !text.contains("session=secret"))
        }
    }

    @Test("callers joining a validation share it: one request, the same answer for each")
    func joinedValidation() async throws {
        // The validation's 304 waits until both callers are on it (30 s at most, should the join fail).
        let release = DispatchSemaphore(value: 0)
        let server = try CachingServer(beforeNotModified: { _ = release.wait(timeout: .now() + 30) }) { _ in
            ["Cache-Control": "max-age=0", "ETag": "\"v1\""]
        }
        defer { server.stop() }
        let pool = TaskPool(configuration: .init(cache: MemoryCacheStore()))
        _ = try await pool.send(CachedGet(baseURL: server.baseURL))
        async let one = pool.send(CachedGet(baseURL: server.baseURL))
        async let two = pool.send(CachedGet(baseURL: server.baseURL))
        #expect(await eventually(within: 30) { pool.activeTasks.first?.waiterCount == 2 })
        #expect(pool.activeTaskSnapshots.first?.phase.hasSuffix(", validating a stored answer") == true)
        release.signal()
        let (a, b) = try await (one, two)
        #expect(server.requests == 2)
        #expect(a.source == .revalidated && b.source == .revalidated)
        #expect(a === b)
    }

    @Test("a HAR recorder given as the logger too records answers from the cache, saying so, with no credential")
    func harRecordsCacheAnswers() async throws {
        let server = try CachingServer { _ in ["Cache-Control": "max-age=600"] }
        defer { server.stop() }
        let recorder = HARRecorder()
        let pool = TaskPool(
            configuration: .init(
                transport: RecordingTransport(URLSessionTransport(), recorder: recorder), logger: recorder,
                cache: MemoryCacheStore()))
        let endpoint = CachedGet(baseURL: server.baseURL, path: "r?api_key=SECRETKEY")
        _ = try await pool.send(endpoint)
        _ = try await pool.send(endpoint)
        let entries = recorder.har.log.entries
        #expect(entries.count == 2 && server.requests == 1)
        #expect(entries[0].cache.comment == nil && entries[0].time > 0)
        #expect(entries[1].cache.comment?.hasPrefix("answered from the cache: fresh, ") == true)
        #expect(entries[1].response.status == 200 && entries[1].response.content.text == "answer 1")
        let json = String(decoding: try recorder.data(), as: UTF8.self)
        #expect(!json.contains("SECRETKEY"))
    }

    @Test("an answer from the cache is logged as a task that started and finished, its source in the event")
    func eventsAndJoins() async throws {
        let server = try CachingServer { _ in ["Cache-Control": "max-age=600"] }
        defer { server.stop() }
        let logger = InMemoryLogger()
        let pool = TaskPool(configuration: .init(logger: logger, cache: MemoryCacheStore()))
        _ = try await pool.send(CachedGet(baseURL: server.baseURL), id: "a")
        let hit = try await pool.send(CachedGet(baseURL: server.baseURL), id: "b")
        #expect(hit.source == .cache)
        let kinds = logger.events.filter { $0.taskID == "b" }.map(\.kind)
        #expect(kinds == [.started, .finished])
        #expect(logger.events.last { $0.taskID == "b" }?.source == .cache)
        #expect(logger.events.last { $0.taskID == "a" }?.source == .network)
        #expect(logger.events.last { $0.taskID == "b" }?.response === hit)
        #expect(hit.description.contains("from cache"))
    }
}
