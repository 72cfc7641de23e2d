import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Redirects over real loopback HTTP, between two servers on different ports (two origins).
@Suite("Redirects")
struct RedirectTests {
    /// A server that redirects `/to/STATUS/URL-ENCODED-TARGET` with that status, and answers anything else
    /// with the request's method, credential headers and body.
    static func server() throws -> MockServer {
        try MockServer { request in
            let parts = request.url?.path.split(separator: "/", maxSplits: 2).map(String.init) ?? []
            if parts.count == 3, parts[0] == "to", let status = Int(parts[1]) {
                let target = parts[2].removingPercentEncoding ?? parts[2]
                return MockResponse(statusCode: status, headers: ["Location": target])
            }
            let echoed: [String: String] = [
                "method": request.httpMethod ?? "-",
                "authorization": request.value(forHTTPHeaderField: "Authorization") ?? "-",
                "cookie": request.value(forHTTPHeaderField: "Cookie") ?? "-",
                "apiKey": request.value(forHTTPHeaderField: "X-Api-Key") ?? "-",
                "trace": request.value(forHTTPHeaderField: "X-Trace") ?? "-",
                "body": String(decoding: request.httpBody ?? Data(), as: UTF8.self),
            ]
            return MockResponse(body: try! JSONSerialization.data(withJSONObject: echoed))
        }
    }

    static func path(_ status: Int, to target: String) -> String {
        "to/\(status)/" + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    /// Expects `send` to end with the 302 itself: the redirect was not followed.
    static func expectNotFollowed(
        _ send: () async throws(NetworkError) -> Response, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        do {
            _ = try await send()
            Issue.record("the redirect was followed", sourceLocation: sourceLocation)
        } catch {
            #expect(error.statusCode == 302, sourceLocation: sourceLocation)
        }
    }

    static func echo(_ response: Response) throws -> [String: String] {
        try #require(JSONSerialization.jsonObject(with: response.body) as? [String: String])
    }

    static let credentials = [
        "Authorization": "Bearer secret-token", "Cookie": "sid=secret-cookie", "X-Api-Key": "secret-key",
        "X-Trace": "t-1",
    ]

    @Test(
        "credentials stay behind when a redirect goes to another origin; other headers follow",
        arguments: TransportUnderTest.all)
    func crossOriginStripsCredentials(_ transport: TransportUnderTest) async throws {
        let (a, b) = (try Self.server(), try Self.server())
        defer { a.stop(); b.stop() }
        let logger = InMemoryLogger()
        let pool = transport.pool(.init(logger: logger))
        let response = try await pool.send(
            TestEndpoint(baseURL: a.baseURL, path: Self.path(302, to: b.baseURL + "/echo"), headers: Self.credentials))
        let echo = try Self.echo(response)
        #expect(echo["authorization"] == "-")
        #expect(echo["cookie"] == "-")
        #expect(echo["apiKey"] == "-")
        #expect(echo["trace"] == "t-1")
        #expect(b.requests.count == 1)
        #expect(logger.count(.redirected) == 1)
        #expect(logger.events(.redirected).first?.redirectURL == b.baseURL + "/echo")
    }

    @Test("within one origin, credentials follow", arguments: TransportUnderTest.all)
    func sameOriginKeepsCredentials(_ transport: TransportUnderTest) async throws {
        let a = try Self.server()
        defer { a.stop() }
        let response = try await transport.pool().send(
            TestEndpoint(baseURL: a.baseURL, path: Self.path(302, to: a.baseURL + "/echo"), headers: Self.credentials))
        let echo = try Self.echo(response)
        #expect(echo["authorization"] == "Bearer secret-token")
        #expect(echo["cookie"] == "sid=secret-cookie")
        #expect(echo["apiKey"] == "secret-key")
    }

    @Test(
        "after a hop to another origin, credentials do not come back on a hop home", arguments: TransportUnderTest.all)
    func strippedForTheRestOfTheChain(_ transport: TransportUnderTest) async throws {
        let (a, b) = (try Self.server(), try Self.server())
        defer { a.stop(); b.stop() }
        let logger = InMemoryLogger()
        let back = b.baseURL + "/" + Self.path(302, to: a.baseURL + "/echo")
        let response = try await transport.pool(.init(logger: logger)).send(
            TestEndpoint(baseURL: a.baseURL, path: Self.path(302, to: back), headers: Self.credentials))
        #expect(try Self.echo(response)["authorization"] == "-")
        #expect(logger.count(.redirected) == 2)
    }

    @Test(
        "307 and 308 keep the method and the body; 301, 302 and 303 turn a POST into a GET without body",
        arguments: TransportUnderTest.all,
        [
            (307, "POST", "payload=1"), (308, "POST", "payload=1"), (301, "GET", ""), (302, "GET", ""),
            (303, "GET", ""),
        ])
    func methodAndBody(
        _ transport: TransportUnderTest, expected: (status: Int, method: String, body: String)
    )
        async throws
    {
        let (status, method, body) = expected
        let a = try Self.server()
        defer { a.stop() }
        let response = try await transport.pool().send(
            TestEndpoint(
                baseURL: a.baseURL, path: Self.path(status, to: a.baseURL + "/echo"), method: .post,
                task: .data(Data("payload=1".utf8), contentType: "text/plain")))
        let echo = try Self.echo(response)
        #expect(echo["method"] == method)
        #expect(echo["body"] == body)
    }

    @Test("never: the task ends with the 3xx, and the target sees nothing", arguments: TransportUnderTest.all)
    func never(_ transport: TransportUnderTest) async throws {
        let (a, b) = (try Self.server(), try Self.server())
        defer { a.stop(); b.stop() }
        let pool = transport.pool(.init(redirectPolicy: .never))
        await Self.expectNotFollowed { () async throws(NetworkError) in
            try await pool.send(TestEndpoint(baseURL: a.baseURL, path: Self.path(302, to: b.baseURL + "/echo")))
        }
        #expect(b.requests.isEmpty)
    }

    @Test(
        "same origin: followed at home, not to another origin; an endpoint's policy wins over the pool's",
        arguments: TransportUnderTest.all)
    func sameOrigin(_ transport: TransportUnderTest) async throws {
        let (a, b) = (try Self.server(), try Self.server())
        defer { a.stop(); b.stop() }
        struct Home: Endpoint {
            let baseURL: String
            let path: String
            var redirectPolicy: RedirectPolicy? { .sameOrigin }
        }
        let pool = transport.pool()
        let home = try await pool.send(Home(baseURL: a.baseURL, path: Self.path(302, to: a.baseURL + "/echo")))
        #expect(try Self.echo(home)["method"] == "GET")
        await Self.expectNotFollowed { () async throws(NetworkError) in
            try await pool.send(Home(baseURL: a.baseURL, path: Self.path(302, to: b.baseURL + "/echo")))
        }
        #expect(b.requests.isEmpty)
    }

    @Test("a chain longer than the policy allows stops after its hops, with the 3xx", arguments: TransportUnderTest.all)
    func loop(_ transport: TransportUnderTest) async throws {
        let a = try Self.server()
        defer { a.stop() }
        let logger = InMemoryLogger()
        let pool = transport.pool(.init(logger: logger, redirectPolicy: .follow(maximumHops: 3)))
        // Five redirects before the answer: the fourth is one too many.
        var target = a.baseURL + "/echo"
        for _ in 0..<4 { target = a.baseURL + "/" + Self.path(302, to: target) }
        await Self.expectNotFollowed { () async throws(NetworkError) in
            try await pool.send(TestEndpoint(baseURL: a.baseURL, path: Self.path(302, to: target)))
        }
        #expect(logger.count(.redirected) == 3)
    }
}
