import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response larger than the limit ends its task with a typed error, without reading the rest.
@Suite("Response size limits")
struct ResponseLimitTests {
    @Test("an endpoint's limit wins over the pool's; any transport's answer is checked by the pool")
    func endpointLimitAndStub() async throws {
        struct Tight: Endpoint {
            var baseURL: String { "https://api.example.com" }
            var path: String { "x" }
            var maximumResponseBytes: Int? { 10 }
        }
        let pool = TaskPool(configuration: .init(transport: StubTransport { _, _ in .json(#"{"twelve": 12}"#) }))
        let error = await networkFailure { () async throws(NetworkError) in try await pool.send(Tight()) }
        #expect(responseLimit(of: error) == 10)
        #expect(try await pool.send(TestEndpoint()).statusCode == 200)
    }

    @Test("the default limit is 32 MiB")
    func defaultLimit() {
        #expect(TaskPool.Configuration().maximumResponseBytes == 32 << 20)
    }
}
