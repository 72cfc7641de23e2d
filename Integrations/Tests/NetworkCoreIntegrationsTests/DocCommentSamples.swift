// swift-format-ignore-file
// The samples of NetworkCoreOpenAPI's documentation comments (`///`) and DocC catalog, in the context they take
// as given (the client generated in PetsClient/), compiled with the tests and never run. `GuideSamplesTests`
// (root package) checks that each page shows exactly the lines between its `// DOC <path>-BEGIN` and `-END`
// markers.
import Foundation
import NetworkCore
import NetworkCoreAsyncHTTPClient
import NetworkCoreOpenAPI

/// What the samples take as given: the generated client.
enum OpenAPIDocCommentSamples {}

// Integrations/Sources/NetworkCoreOpenAPI/TaskPoolClientTransport.swift
extension OpenAPIDocCommentSamples {
    static func client() async throws -> Components.Schemas.Pet {
        // DOC Integrations/Sources/NetworkCoreOpenAPI/TaskPoolClientTransport.swift-BEGIN
        let pool = TaskPool(configuration: .init(transport: AsyncHTTPClientTransport(), interceptors: [RetryPolicy()]))
        let client = Client(serverURL: try Servers.Server1.url(), transport: TaskPoolClientTransport(pool: pool))
        let pet = try await client.getPet(path: .init(petId: 7)).ok.body.json
        // DOC Integrations/Sources/NetworkCoreOpenAPI/TaskPoolClientTransport.swift-END
        return pet
    }
}

// Integrations/Sources/NetworkCoreOpenAPI/NetworkCoreOpenAPI.docc/NetworkCoreOpenAPI.md
extension OpenAPIDocCommentSamples {
    static func catalog(pool: TaskPool) throws -> Client {
        // DOC Integrations/Sources/NetworkCoreOpenAPI/NetworkCoreOpenAPI.docc/NetworkCoreOpenAPI.md-BEGIN
        let client = Client(serverURL: try Servers.Server1.url(), transport: TaskPoolClientTransport(pool: pool))
        // DOC Integrations/Sources/NetworkCoreOpenAPI/NetworkCoreOpenAPI.docc/NetworkCoreOpenAPI.md-END
        return client
    }
}
