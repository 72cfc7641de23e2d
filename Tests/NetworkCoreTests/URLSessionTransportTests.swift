import Foundation
import LoopbackServer
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Answers every request in-process with a JSON echo of its method and headers, in three chunks.
final class EchoURLProtocol: URLProtocol {
    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        let headers = request.allHTTPHeaderFields ?? [:]
        let echo: [String: Any] = [
            "method": request.httpMethod ?? "", "headers": headers, "padding": String(repeating: "x", count: 3000),
        ]
        let body = (try? JSONSerialization.data(withJSONObject: echo, options: [.sortedKeys])) ?? Data()
        let response = HTTPURLResponse(
            url: request.url!, statusCode: request.url!.path.hasSuffix("missing") ? 404 : 200, httpVersion: "HTTP/1.1",
            headerFields: ["Content-Type": "application/json"])!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        let third = body.count / 3
        for chunk in [body.prefix(third), body.dropFirst(third).prefix(third), body.dropFirst(2 * third)] {
            client?.urlProtocol(self, didLoad: Data(chunk))
        }
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

@Suite("URLSessionTransport (URLProtocol stub)")
struct URLSessionTransportTests {
    func transport() -> URLSessionTransport {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [EchoURLProtocol.self]
        return URLSessionTransport(configuration: configuration)
    }

    struct Echo: Decodable, Sendable {
        let method: String
        let headers: [String: String]
        let padding: String
    }

    @Test("requests go through the session with the pool's headers; the body arrives whole")
    func roundTrip() async throws {
        let pool = TaskPool(configuration: .init(transport: transport()))
        let echo = try await pool.send(
            TestEndpoint(method: .put, headers: ["X-Custom": "yes"]), parser: DecodableParser<Echo>())
        #expect(echo.method == "PUT")
        #expect(echo.headers["X-Custom"] == "yes")
        #expect(echo.headers["User-Agent"] == "NetworkCore/\(LibraryVersion.current)")
        #expect(echo.headers["Accept"] == "application/json")
        #expect(echo.padding.count == 3000)
    }

    @Test("bytes are counted as chunks arrive, by the session's delegate")
    func countsBytes() async throws {
        let chunks = Locked<[Int]>([])
        let request = try TestEndpoint().urlRequest()
        let responses = Counter()
        let context = TransportContext(taskID: "t") { progress in
            switch progress {
            case .bytes(let count): chunks.withLock { $0.append(count) }
            case .response: responses.increment()
            case .redirect: Issue.record("no redirect expected")
            }
        }
        let (body, response) = try await transport().send(request, context: context)
        #expect(response.statusCode == 200)
        let counted = chunks.withLock { $0 }
        #expect(counted.reduce(0, +) == body.count)
        #expect(counted.count >= 1)
        #expect(responses.count == 1)
    }

    @Test("the pool validates statuses from the session")
    func status() async throws {
        let pool = TaskPool(configuration: .init(transport: transport()))
        await #expect(throws: NetworkError.self) { try await pool.send(TestEndpoint(path: "missing")) }
    }
}

@Suite("URLSessionTransport (loopback HTTP server)")
struct URLSessionTransportLoopbackTests {
    @Test(
        "a 401 with a WWW-Authenticate challenge arrives as that 401, body and all, and does not hang",
        arguments: [
            #"Basic realm="api""#, #"Bearer realm="api", error="invalid_token""#, #"Bearer error="invalid_token""#,
        ]
    )
    func challengeArrivesAsResponse(challenge: String) async throws {
        let body = Data(#"{"status_code":7,"status_message":"Invalid API key"}"#.utf8)
        let server = try LoopbackServer { _ in
            StubResponse(
                statusCode: 401, headers: ["WWW-Authenticate": challenge, "Content-Type": "application/json"],
                body: body)
        }
        defer { server.stop() }
        // The deadline only bounds the test: without the fix the task never ends.
        let pool = TaskPool(
            configuration: .init(transport: URLSessionTransport(configuration: .ephemeral), resourceTimeout: 10))
        let started = Date()
        await #expect {
            _ = try await pool.send(TestEndpoint(baseURL: server.baseURL, path: "/secret"))
        } throws: { error in
            guard case NetworkError.httpStatus(let response) = error else { return false }
            return response.statusCode == 401 && response.body == body && response.serverCode == 7
        }
        #expect(isSlowRun || Date().timeIntervalSince(started) < 5)
        #expect(pool.activeTasks.isEmpty)
    }
}
