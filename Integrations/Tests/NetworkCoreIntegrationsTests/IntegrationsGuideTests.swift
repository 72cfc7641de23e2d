// swift-format-ignore-file
// The samples are shown in Docs/Integrations.md as written here (GuideSamplesTests), so they keep its layout.
import AsyncHTTPClient
import Foundation
import Logging
import NIOPosix
import NIOSSL
import NetworkCore
import NetworkCoreAsyncHTTPClient
import NetworkCoreLogging
import NetworkCoreMetrics
import NetworkCoreNIO
import NetworkCoreOpenAPI
import NetworkCoreTracing
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The samples of Docs/Integrations.md, compiled with the tests (never run: they name a server that does
/// not exist). `GuideSamplesTests` (root package) checks that the guide's Swift blocks show exactly these lines.
func integrationsGuide() async throws {
    // GUIDE-BEGIN
    enum Catalog: Endpoint {
        case item(id: Int)
        case export

        var baseURL: String { "https://catalog.example.com/v1" }
        var path: String {
            switch self {
            case .item(let id): "items/\(id)"
            case .export: "exports/latest.csv"
            }
        }
    }

    let transport = AsyncHTTPClientTransport()
    let pool = TaskPool(configuration: .init(transport: transport, interceptors: [RetryPolicy()]))

    let answer = try await pool.send(Catalog.item(id: 42), id: "item-42")
    print(answer.statusCode)

    let destination = FileManager.default.temporaryDirectory.appendingPathComponent("export.csv")
    try await pool.download(Catalog.export, to: destination, id: "export")

    // Once the pools that use it are done: its connections close.
    try await transport.shutdown()

    var configuration = AsyncHTTPClientTransport.defaultConfiguration
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
    configuration.httpVersion = .http1Only
    let busy = AsyncHTTPClientTransport(configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton)

    let files = NIOTransport()
    let filePool = TaskPool(configuration: .init(transport: files, interceptors: [RetryPolicy()]))
    try await filePool.download(Catalog.export, to: destination, id: "export-nio")
    await files.shutdown()

    var tls = TLSConfiguration.makeClientConfiguration()
    tls.minimumTLSVersion = .tlsv12
    let tuned = NIOTransport(configuration: .init(tls: tls, maximumReadSize: 4 << 20, maximumIdleConnectionsPerHost: 8))

    var http1Only = NIOTransport.Configuration(tls: tls)
    http1Only.http2 = false
    let legacy = NIOTransport(configuration: http1Only)

    var catalogLog = Logger(label: "com.example.catalog")
    catalogLog.logLevel = .info
    let observed = TaskPool(
        configuration: .init(logger: CombinedLogger([SwiftLogNetworkLogger(logger: catalogLog), NetworkMetrics()])))

    let traced = TaskPool(
        configuration: TaskPool.Configuration(logger: ConsoleLogger(minimumLevel: .warning), interceptors: [RetryPolicy()])
            .traced(by: RequestTracing()))

    let petsPool = TaskPool(configuration: .init(transport: AsyncHTTPClientTransport(), interceptors: [RetryPolicy()]))
    let pets = Client(
        serverURL: URL(string: "https://pets.example.com/v1")!, transport: TaskPoolClientTransport(pool: petsPool))
    let rex = try await pets.getPet(path: .init(petId: 7)).ok.body.json
    print(rex.name, petsPool.task(id: "getPet") == nil)
    // GUIDE-END
    try await busy.shutdown()
    print(
        observed.activeTasks.count, traced.activeTasks.count, tuned.configuration.maximumReadSize,
        legacy.configuration.http2)
}

@Suite("Docs/Integrations.md")
struct IntegrationsGuideTests {
    @Test("the guide names every product of the package")
    func guideNamesProducts() throws {
        let guide = try String(contentsOf: DocSamples.root.appendingPathComponent("Docs/Integrations.md"), encoding: .utf8)
        let manifest = try String(
            contentsOf: DocSamples.root.appendingPathComponent("Integrations/Package.swift"), encoding: .utf8)
        let products = manifest.components(separatedBy: ".library(name: \"").dropFirst().map {
            String($0.prefix { $0 != "\"" })
        }
        #expect(
            products == [
                "NetworkCoreAsyncHTTPClient", "NetworkCoreNIO", "NetworkCoreLogging", "NetworkCoreMetrics",
                "NetworkCoreTracing", "NetworkCoreOpenAPI", "NetworkCoreInspector",
            ])
        for product in products { #expect(guide.contains("`\(product)`"), "\(product)") }
    }
}
