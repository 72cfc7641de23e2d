import Foundation
import HTTPTypes
import NetworkCore
import NetworkCoreAsyncHTTPClient
import NetworkCoreOpenAPI
import NetworkCoreTesting
import OpenAPIRuntime
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The client in PetsClient/, generated from PetsClient/openapi.yaml, against the loopback server.
@Suite("OpenAPI: a generated client sends through a TaskPool")
struct OpenAPIIntegrationTests {
    /// Pets 1–9 exist; `POST /v1/pets` stores the pet it is sent, after one 503 when the name is "Flaky".
    static func server() throws -> MockServer {
        let flaky = Counter()
        return try MockServer { request in
            let path = request.url?.path ?? ""
            if request.httpMethod == "POST", path == "/v1/pets" {
                let body = request.httpBody ?? Data()
                if String(decoding: body, as: UTF8.self).contains("Flaky"), flaky.increment() == 1 {
                    return MockResponse(StubResponse(statusCode: 503, body: Data(#"{"message":"busy"}"#.utf8)))
                }
                return MockResponse(
                    StubResponse(statusCode: 201, headers: ["Content-Type": "application/json"], body: body))
            }
            if path.hasPrefix("/v1/pets/"), let id = Int(path.dropFirst("/v1/pets/".count)) {
                guard (1...9).contains(id) else {
                    return MockResponse(
                        StubResponse(
                            statusCode: 404, headers: ["Content-Type": "application/json"],
                            body: Data(#"{"message":"no pet \#(id)"}"#.utf8)))
                }
                let name = request.url?.query == "verbose=true" ? "Rex the \(id)th" : "Rex"
                return MockResponse(.json(#"{"id":\#(id),"name":"\#(name)"}"#))
            }
            if path == "/v1/slow" { return MockResponse(.json("{}"), faults: [.delayHead(5)]) }
            return MockResponse(StubResponse(statusCode: 400))
        }
    }

    @Test(
        "operations are pool tasks under their ids: a 200 and a documented 404 arrive typed, a body is sent, a 503 is retried",
        arguments: TransportUnderTest.all)
    func operations(_ transport: TransportUnderTest) async throws {
        let server = try Self.server()
        defer { server.stop() }
        let logger = InMemoryLogger()
        let pool = transport.pool(
            .init(logger: logger, interceptors: [RetryPolicy(baseDelay: 0.01, methods: [.get, .post])]))
        let client = Client(
            serverURL: URL(string: server.baseURL + "/v1")!, transport: TaskPoolClientTransport(pool: pool))

        let pet = try await client.getPet(path: .init(petId: 7), query: .init(verbose: true)).ok.body.json
        #expect(pet.id == 7)
        #expect(pet.name == "Rex the 7th")

        let missing = try await client.getPet(path: .init(petId: 42))
        guard case .notFound(let notFound) = missing else {
            Issue.record("a 404 arrived as \(missing)")
            return
        }
        #expect(try notFound.body.json.message == "no pet 42")

        let created = try await client.createPet(body: .json(.init(id: 3, name: "Flaky"))).created.body.json
        #expect(created.id == 3)
        #expect(created.name == "Flaky")
        let posted = try #require(server.requests.last { $0.httpMethod == "POST" })
        #expect(posted.value(forHTTPHeaderField: "Content-Type") == "application/json; charset=utf-8")

        // Every operation was a task of the pool, named by its operation id; the POST was retried once.
        #expect(logger.events(.started).map(\.taskID) == ["getPet", "getPet", "createPet"])
        #expect(logger.events(.started).map(\.service) == ["getPet", "getPet", "createPet"])
        #expect(logger.count(.retrying) == 1)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test(
        "a call in flight is in the task table under its operation id and is cancelled by it",
        arguments: TransportUnderTest.all)
    func cancelByOperationID(_ transport: TransportUnderTest) async throws {
        // Answered only once the test lets it (60 s at most, should the test fail first), so the cancel cannot
        // come after the answer however long the call takes to start.
        let release = DispatchSemaphore(value: 0)
        let server = try MockServer { _ in
            _ = release.wait(timeout: .now() + 60)
            return MockResponse(.json(#"{"id":1,"name":"Late"}"#))
        }
        defer { server.kill() }
        defer { release.signal() }
        let pool = transport.pool()
        let client = Client(
            serverURL: URL(string: server.baseURL + "/v1")!, transport: TaskPoolClientTransport(pool: pool))
        let call = Task { try await client.getPet(path: .init(petId: 1)) }
        #expect(await eventually { pool.task(id: "getPet") != nil })
        #expect(pool.task(id: "getPet")?.snapshot.url.hasSuffix("/v1/pets/1") == true)
        #expect(pool.cancel(id: "getPet"))
        do {
            _ = try await call.value
            Issue.record("the cancelled call answered")
        } catch let error as ClientError {
            #expect((error.underlyingError as? NetworkError)?.isCancelled == true, "\(error.underlyingError)")
            #expect(error.operationID == "getPet")
        }
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("no answer at all is the pool's typed error inside the client's; a body over the limit is not sent")
    func failures() async throws {
        let pool = TaskPool(configuration: .init(requestTimeout: 5))
        let unreachable = Client(
            serverURL: URL(string: "http://127.0.0.1:1/v1")!, transport: TaskPoolClientTransport(pool: pool))
        do {
            _ = try await unreachable.getPet(path: .init(petId: 1))
            Issue.record("a closed port answered")
        } catch let error as ClientError {
            #expect((error.underlyingError as? NetworkError)?.urlError?.code == .cannotConnectToHost)
        }
        let server = try Self.server()
        defer { server.stop() }
        let tiny = Client(
            serverURL: URL(string: server.baseURL + "/v1")!,
            transport: TaskPoolClientTransport(pool: pool, maximumRequestBytes: 8))
        do {
            _ = try await tiny.createPet(body: .json(.init(id: 1, name: "A name longer than eight bytes")))
            Issue.record("an oversized body was sent")
        } catch let error as ClientError {
            guard case .encodingFailed? = error.underlyingError as? NetworkError else {
                Issue.record("\(error.underlyingError)")
                return
            }
        }
        #expect(server.requests.isEmpty)
    }
}
