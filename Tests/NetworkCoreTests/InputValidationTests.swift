import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Bad input gets a typed error before anything is sent, never a request somewhere else or a trap.
@Suite("Input that must not be sent")
struct InputValidationTests {
    /// The reason of an `invalidEndpoint` error, or `nil` for any other outcome.
    static func invalidReason(_ send: () async throws(NetworkError) -> Response) async -> String? {
        do {
            _ = try await send()
            return nil
        } catch {
            guard case .invalidEndpoint(_, let reason) = error else { return nil }
            return reason
        }
    }

    @Test(
        "a dot segment in the path is an invalidEndpoint error, and nothing reaches the server",
        arguments: [
            "files/../../admin", "files/..", "./x", "a/./b", "files/%2e%2e/admin", "files/%2E./x", "a/.%2e", "/../x",
            "..?q=1", "a/.",
        ])
    func dotSegments(path: String) async throws {
        let server = try MockServer { _ in MockResponse(body: Data("ok".utf8)) }
        defer { server.stop() }
        let pool = TaskPool()
        let reason = await Self.invalidReason { () async throws(NetworkError) in
            try await pool.send(TestEndpoint(baseURL: server.baseURL, path: path))
        }
        #expect(reason?.contains("dot segments are not sent") == true, "\(path): \(reason ?? "sent")")
        #expect(server.requests.isEmpty)
    }

    @Test("a dot segment in the base URL is refused too; dots inside names and the query are data")
    func dotsThatAreData() throws {
        for base in ["https://h.com/v1/../admin", "https://h.com/v1/..", "https://user@h.com:8/./v1"] {
            #expect(throws: NetworkError.self, "\(base)") { try TestEndpoint(baseURL: base, path: "x").urlRequest() }
        }
        for path in ["...", ".hidden", "a..b/c.d", "v1.2/x", "x?path=../y", "%2e%2e%2e"] {
            #expect(throws: Never.self, "\(path)") { try TestEndpoint(path: path).urlRequest() }
        }
    }

    @Test(
        "a method that is not an HTTP token is an invalidEndpoint error, and nothing reaches the server",
        arguments: ["GET /x HTTP/1.1\r\nX-Injected: yes\r\nX-Pad:", "GET X", "", "PO\nST", "G(E)T"])
    func methods(method: String) async throws {
        let server = try MockServer { _ in MockResponse(body: Data("ok".utf8)) }
        defer { server.stop() }
        let pool = TaskPool()
        let reason = await Self.invalidReason { () async throws(NetworkError) in
            try await pool.send(TestEndpoint(baseURL: server.baseURL, method: HTTPMethod(rawValue: method)))
        }
        #expect(reason?.contains("is not a valid HTTP method") == true, "\(reason ?? "sent")")
        // The reason quotes the method with its control characters escaped: no line of its own in a log.
        #expect(reason?.contains("\r") == false && reason?.contains("\n") == false)
        // Give a request that slipped through time to arrive.
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(server.requests.isEmpty)
    }

    @Test("custom token methods are sent as they are")
    func customMethod() async throws {
        let server = try MockServer { _ in MockResponse(body: Data("ok".utf8)) }
        defer { server.stop() }
        let response = try await TaskPool().send(
            TestEndpoint(baseURL: server.baseURL, method: HTTPMethod(rawValue: "purge")))
        #expect(response.statusCode == 200)
        #expect(server.requests.first?.httpMethod == "PURGE")
    }

    static let badSeconds: [Double] = [-1, 0, .nan, .infinity, -.infinity]

    @Test(
        "a timeout that is not a positive, finite number of seconds is refused, wherever it is set",
        arguments: badSeconds)
    func timeouts(seconds: Double) async throws {
        let stub = StubTransport { _, _ in .json("{}") }
        let cases: [(TaskPool, TestEndpoint, String)] = [
            (TaskPool(configuration: .init(transport: stub)), TestEndpoint(timeout: seconds), "timeout"),
            (TaskPool(configuration: .init(transport: stub, requestTimeout: seconds)), TestEndpoint(), "timeout"),
            (
                TaskPool(configuration: .init(transport: stub, resourceTimeout: seconds)), TestEndpoint(),
                "resource timeout"
            ),
        ]
        for (pool, endpoint, setting) in cases {
            let reason = await Self.invalidReason { () async throws(NetworkError) in try await pool.send(endpoint) }
            #expect(
                reason?.contains("the \(setting) must be a positive") == true,
                "\(setting) \(seconds): \(reason ?? "sent")")
            #expect(pool.activeTasks.isEmpty)
        }
        struct Deadlined: Endpoint {
            let resourceTimeout: TimeInterval?
            var baseURL: String { "https://api.example.com" }
            var path: String { "x" }
        }
        let pool = TaskPool(configuration: .init(transport: stub))
        let reason = await Self.invalidReason { () async throws(NetworkError) in
            try await pool.send(Deadlined(resourceTimeout: seconds))
        }
        #expect(reason?.contains("the resource timeout must be a positive") == true)
    }

    @Test("times converted for waits and timers are clamped, NaN and infinity included")
    func clampedTimes() {
        #expect(MonotonicClock.nanoseconds(.nan) == 0)
        #expect(MonotonicClock.nanoseconds(-5) == 0)
        #expect(MonotonicClock.nanoseconds(1.5) == 1_500_000_000)
        #expect(MonotonicClock.nanoseconds(.infinity) == 1_000_000_000_000_000_000)
        #expect(MonotonicClock.nanoseconds(2.5e11) == 1_000_000_000_000_000_000)
        let huge = RetryPolicy(baseDelay: .infinity, maximumDelay: .infinity, random: { $0.upperBound })
        #expect(huge.delay(beforeAttempt: 2) == 1e9)
        #expect(RetryPolicy(baseDelay: .nan).delay(beforeAttempt: 2) == 0)
    }
}
