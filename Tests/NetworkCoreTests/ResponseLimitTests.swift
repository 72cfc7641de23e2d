import Foundation
import LoopbackServer
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response larger than the limit ends its task with a typed error, without reading the rest.
@Suite("Response size limits")
struct ResponseLimitTests {
    static func limited(_ error: NetworkError?) -> Int? {
        guard case .responseTooLarge(let limit)? = error else { return nil }
        return limit
    }

    static func failure(_ send: () async throws(NetworkError) -> Response) async -> NetworkError? {
        do {
            _ = try await send()
            return nil
        } catch {
            return error
        }
    }

    @Test("over URLSession: an announced length past the limit, and a body that grows past it, both stop")
    func overURLSession() async throws {
        let big = Data(repeating: 0x61, count: 3 << 20)
        let server = try LoopbackServer { request in
            request.url?.path == "/trickle"
                ? .trickled(StubResponse(body: big), pieces: 48, interval: 0.001)
                : .respond(StubResponse(body: request.url?.path == "/small" ? Data("ok".utf8) : big))
        }
        defer { server.stop() }
        let pool = TaskPool(configuration: .init(maximumResponseBytes: 1 << 20))
        for path in ["big", "trickle"] {
            let error = await Self.failure { () async throws(NetworkError) in
                try await pool.send(TestEndpoint(baseURL: server.baseURL, path: path))
            }
            #expect(Self.limited(error) == 1 << 20, "\(path): \(String(describing: error))")
            #expect(error?.localizedDescription.contains("larger than the limit of 1048576 bytes") == true)
        }
        #expect(try await pool.send(TestEndpoint(baseURL: server.baseURL, path: "small")).body == Data("ok".utf8))
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("an endpoint's limit wins over the pool's; any transport's answer is checked by the pool")
    func endpointLimitAndStub() async throws {
        struct Tight: Endpoint {
            var baseURL: String { "https://api.example.com" }
            var path: String { "x" }
            var maximumResponseBytes: Int? { 10 }
        }
        let pool = TaskPool(configuration: .init(transport: StubTransport { _, _ in .json(#"{"twelve": 12}"#) }))
        let error = await Self.failure { () async throws(NetworkError) in try await pool.send(Tight()) }
        #expect(Self.limited(error) == 10)
        #expect(try await pool.send(TestEndpoint()).statusCode == 200)
    }

    @Test("the default limit is 32 MiB")
    func defaultLimit() {
        #expect(TaskPool.Configuration().maximumResponseBytes == 32 << 20)
    }
}
