import Foundation
import NetworkCore
import NetworkCoreTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The cache's RFC 9111 details through a pool over each transport and a real server: each point once
/// (the cases in full are CacheRFCTests, on the cache stage alone).
@Suite("Caching over each transport: Age, fields never stored, Content-Range, codings a transport does not know")
struct CacheRFCIntegrationTests {
    /// Sends GET `path` twice through a pool with a memory cache over `transport`: both outcomes, and how
    /// many requests reached `server`.
    static func twice(
        _ path: String, to server: MockServer, over transport: TransportUnderTest
    ) async -> (first: Result<Response, NetworkError>, second: Result<Response, NetworkError>, requests: Int) {
        let pool = transport.pool(.init(requestTimeout: 15, cache: MemoryCacheStore()))
        let endpoint = TestEndpoint(baseURL: server.baseURL, path: path)
        func send() async -> Result<Response, NetworkError> {
            do { return .success(try await pool.send(endpoint)) } catch { return .failure(error) }
        }
        let first = await send()
        let second = await send()
        return (first, second, server.count(.get, path))
    }

    static func body(_ text: String, _ headers: [String: String]) -> MockResponse {
        MockResponse(headers: headers, body: Data(text.utf8))
    }

    @Test(
        "Age: 7200, 0 is read as 7200: a max-age=3600 answer is stale, and the second send reaches the server",
        arguments: TransportUnderTest.all)
    func ageList(_ transport: TransportUnderTest) async throws {
        try await withMockServer { server in
            try server.route(
                .get, "/aged", respond: Self.body("old", ["Cache-Control": "max-age=3600", "Age": "7200, 0"]))
            let (first, second, requests) = await Self.twice("/aged", to: server, over: transport)
            #expect(try first.get().source == .network && second.get().source == .network)
            #expect(requests == 2)
        }
    }

    @Test(
        "an answer from the cache carries its current age, not the Age it was stored with",
        arguments: TransportUnderTest.all)
    func servedAge(_ transport: TransportUnderTest) async throws {
        try await withMockServer { server in
            // Made 100 s before it is sent by its Date, though it says 30: its age is 100 (RFC 9111 §4.2.3), plus
            // the time the exchange and the store took, which the test measures rather than assumes.
            try server.route(.get, "/page") { _ in
                Self.body(
                    "page",
                    ["Cache-Control": "max-age=600", "Age": "30", "Date": httpDate(Date().addingTimeInterval(-100))])
            }
            let started = Date()
            let (first, second, requests) = await Self.twice("/page", to: server, over: transport)
            let elapsed = Int(Date().timeIntervalSince(started).rounded(.up))
            #expect(try first.get().header("Age") == "30")
            let served = try second.get()
            #expect(served.source == .cache && requests == 1)
            let age = try #require(served.header("Age").flatMap { Int($0) })
            // An HTTP date has whole seconds: the Date may read up to a second older than the moment it was made.
            #expect((100...(101 + elapsed)).contains(age), "Age: \(age), \(elapsed) s for both sends")
            #expect(served.age.map { Int($0) } == age)
        }
    }

    @Test(
        "Connection and the fields it names are not stored: the answer from the cache lacks them",
        arguments: TransportUnderTest.all)
    func connectionFields(_ transport: TransportUnderTest) async throws {
        try await withMockServer { server in
            try server.route(
                .get, "/hop",
                respond: Self.body(
                    "hop",
                    ["Cache-Control": "max-age=600", "Connection": "x-a, X-B", "X-A": "1", "X-B": "2", "X-C": "3"]))
            let (first, second, requests) = await Self.twice("/hop", to: server, over: transport)
            let network = try first.get()
            #expect(network.header("X-A") == "1" && network.header("Connection")?.contains("x-a") == true)
            let served = try second.get()
            #expect(served.source == .cache && requests == 1)
            #expect(served.header("X-A") == nil && served.header("X-B") == nil && served.header("Connection") == nil)
            #expect(served.header("X-C") == "3" && served.body == Data("hop".utf8))
        }
    }

    @Test("a 200 that carries Content-Range is stored and served with it", arguments: TransportUnderTest.all)
    func contentRangeOn200(_ transport: TransportUnderTest) async throws {
        try await withMockServer { server in
            try server.route(
                .get, "/whole",
                respond: Self.body("hello", ["Cache-Control": "max-age=600", "Content-Range": "bytes 0-4/5"]))
            let (_, second, requests) = await Self.twice("/whole", to: server, over: transport)
            let served = try second.get()
            #expect(served.source == .cache && requests == 1)
            #expect(served.header("Content-Range") == "bytes 0-4/5" && served.body == Data("hello".utf8))
        }
    }

    @Test(
        "a Content-Encoding or Transfer-Encoding the transport does not know: stored as sent, or a typed error and nothing stored",
        arguments: TransportUnderTest.all)
    func unknownCodings(_ transport: TransportUnderTest) async throws {
        try await withMockServer { server in
            let control = ["Cache-Control": "max-age=600"]
            try server.route(
                .get, "/content", respond: Self.body("coded", control.merging(["Content-Encoding": "x-custom"]) { $1 }))
            try server.route(
                .get, "/transfer",
                respond: MockResponse(
                    headers: control, body: Data("coded".utf8), framing: .untilClose(transferEncoding: "x-custom")))
            let cases: [(path: String, field: String, code: URLError.Code)] = [
                ("/content", "Content-Encoding", .cannotDecodeContentData),
                ("/transfer", "Transfer-Encoding", .cannotParseResponse),
            ]
            for (path, field, code) in cases {
                let (first, second, requests) = await Self.twice(path, to: server, over: transport)
                if transport.readsUnknownCodings {
                    #expect(try first.get().body == Data("coded".utf8), "\(path)")
                    let served = try second.get()
                    #expect(served.source == .cache && served.body == Data("coded".utf8) && requests == 1, "\(path)")
                    if field == "Content-Encoding" { #expect(served.header(field) == "x-custom") }
                } else {
                    for outcome in [first, second] {
                        guard case .failure(let error) = outcome else {
                            Issue.record("\(path) succeeded")
                            continue
                        }
                        #expect(error.urlError?.code == code, "\(path): \(error)")
                        #expect(error.description.contains("\(field) \"x-custom\""), "\(error)")
                    }
                    #expect(requests == 2, "\(path): something was stored")
                }
            }
            // A body its (known) Content-Encoding does not describe fails typed on every transport.
            try server.route(
                .get, "/corrupt", respond: Self.body("not gzip", control.merging(["Content-Encoding": "gzip"]) { $1 }))
            let (first, _, requests) = await Self.twice("/corrupt", to: server, over: transport)
            guard case .failure(let error) = first else {
                Issue.record("a corrupt gzip body was read")
                return
            }
            #expect(error.urlError?.code == URLError.Code.cannotDecodeContentData, "\(error)")
            #expect(error.description.contains("Content-Encoding"), "\(error)")
            #expect(requests == 2)
        }
    }
}
