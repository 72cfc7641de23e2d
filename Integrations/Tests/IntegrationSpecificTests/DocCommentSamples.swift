// swift-format-ignore-file
// The samples of the Integrations products' documentation comments (`///`) and DocC catalogs, each in the
// context it takes as given, compiled with the tests and never run (the OpenAPI product's are in
// NetworkCoreIntegrationsTests, beside the generated client). `GuideSamplesTests` (root package) checks that
// each page shows exactly the lines between its `// DOC <path>-BEGIN` and `-END` markers.
import Foundation
import Logging
import NetworkCore
import NetworkCoreAsyncHTTPClient
import NetworkCoreInspector
import NetworkCoreLogging
import NetworkCoreMetrics
import NetworkCoreNIO
import NetworkCoreTracing

/// What the samples take as given: nothing but the products they show.
enum IntegrationsDocCommentSamples {}

// Integrations/Sources/NetworkCoreAsyncHTTPClient/AsyncHTTPClientTransport.swift
extension IntegrationsDocCommentSamples {
    static func asyncHTTPClientTransport() async throws -> TaskPool {
        // DOC Integrations/Sources/NetworkCoreAsyncHTTPClient/AsyncHTTPClientTransport.swift-BEGIN
        let transport = AsyncHTTPClientTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        // … send through the pool …
        try await transport.shutdown()
        // DOC Integrations/Sources/NetworkCoreAsyncHTTPClient/AsyncHTTPClientTransport.swift-END
        return pool
    }
}

// Integrations/Sources/NetworkCoreAsyncHTTPClient/NetworkCoreAsyncHTTPClient.docc/NetworkCoreAsyncHTTPClient.md
extension IntegrationsDocCommentSamples {
    static func asyncHTTPClientCatalog() async throws -> TaskPool {
        // DOC Integrations/Sources/NetworkCoreAsyncHTTPClient/NetworkCoreAsyncHTTPClient.docc/NetworkCoreAsyncHTTPClient.md-BEGIN
        let transport = AsyncHTTPClientTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        // … send through the pool …
        try await transport.shutdown()
        // DOC Integrations/Sources/NetworkCoreAsyncHTTPClient/NetworkCoreAsyncHTTPClient.docc/NetworkCoreAsyncHTTPClient.md-END
        return pool
    }
}

// Integrations/Sources/NetworkCoreInspector/InspectorServer.swift
extension IntegrationsDocCommentSamples {
    static func inspectorServer() async throws -> TaskPool {
        // DOC Integrations/Sources/NetworkCoreInspector/InspectorServer.swift-BEGIN
        let inspector = PoolInspector()
        let pool = TaskPool(configuration: .init(inspector: inspector))
        let server = try await InspectorServer.start(inspector: inspector)
        print("inspector:", server.url)   // http://127.0.0.1:PORT/?token=…
        // … send through the pool …
        try await server.stop()
        // DOC Integrations/Sources/NetworkCoreInspector/InspectorServer.swift-END
        return pool
    }
}

// Integrations/Sources/NetworkCoreInspector/NetworkCoreInspector.docc/NetworkCoreInspector.md
extension IntegrationsDocCommentSamples {
    static func inspectorCatalog() async throws -> (TaskPool, InspectorServer) {
        // DOC Integrations/Sources/NetworkCoreInspector/NetworkCoreInspector.docc/NetworkCoreInspector.md-BEGIN
        let inspector = PoolInspector()
        let pool = TaskPool(configuration: .init(inspector: inspector))
        let server = try await InspectorServer.start(inspector: inspector)
        print("inspector:", server.url)
        // DOC Integrations/Sources/NetworkCoreInspector/NetworkCoreInspector.docc/NetworkCoreInspector.md-END
        return (pool, server)
    }
}

// Integrations/Sources/NetworkCoreLogging/SwiftLogNetworkLogger.swift
extension IntegrationsDocCommentSamples {
    static func swiftLog() -> TaskPool {
        // DOC Integrations/Sources/NetworkCoreLogging/SwiftLogNetworkLogger.swift-BEGIN
        let logger = SwiftLogNetworkLogger(logger: Logger(label: "com.example.catalog"))
        let pool = TaskPool(configuration: .init(logger: logger))
        // DOC Integrations/Sources/NetworkCoreLogging/SwiftLogNetworkLogger.swift-END
        return pool
    }
}

// Integrations/Sources/NetworkCoreLogging/NetworkCoreLogging.docc/NetworkCoreLogging.md
extension IntegrationsDocCommentSamples {
    static func swiftLogCatalog() -> TaskPool {
        // DOC Integrations/Sources/NetworkCoreLogging/NetworkCoreLogging.docc/NetworkCoreLogging.md-BEGIN
        let pool = TaskPool(configuration: .init(logger: SwiftLogNetworkLogger(logger: Logger(label: "api"))))
        // DOC Integrations/Sources/NetworkCoreLogging/NetworkCoreLogging.docc/NetworkCoreLogging.md-END
        return pool
    }
}

// Integrations/Sources/NetworkCoreMetrics/NetworkMetrics.swift
extension IntegrationsDocCommentSamples {
    static func metrics() -> TaskPool {
        // DOC Integrations/Sources/NetworkCoreMetrics/NetworkMetrics.swift-BEGIN
        let pool = TaskPool(configuration: .init(logger: NetworkMetrics()))
        // DOC Integrations/Sources/NetworkCoreMetrics/NetworkMetrics.swift-END
        return pool
    }
}

// Integrations/Sources/NetworkCoreMetrics/NetworkCoreMetrics.docc/NetworkCoreMetrics.md
extension IntegrationsDocCommentSamples {
    static func metricsCatalog() -> TaskPool {
        // DOC Integrations/Sources/NetworkCoreMetrics/NetworkCoreMetrics.docc/NetworkCoreMetrics.md-BEGIN
        let pool = TaskPool(configuration: .init(logger: NetworkMetrics()))
        // DOC Integrations/Sources/NetworkCoreMetrics/NetworkCoreMetrics.docc/NetworkCoreMetrics.md-END
        return pool
    }
}

// Integrations/Sources/NetworkCoreNIO/NIOTransport.swift
extension IntegrationsDocCommentSamples {
    static func nioTransport() async -> TaskPool {
        // DOC Integrations/Sources/NetworkCoreNIO/NIOTransport.swift-BEGIN
        let transport = NIOTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        // … send through the pool …
        await transport.shutdown()
        // DOC Integrations/Sources/NetworkCoreNIO/NIOTransport.swift-END
        return pool
    }
}

// Integrations/Sources/NetworkCoreNIO/NetworkCoreNIO.docc/NetworkCoreNIO.md
extension IntegrationsDocCommentSamples {
    static func nioCatalog() async -> TaskPool {
        // DOC Integrations/Sources/NetworkCoreNIO/NetworkCoreNIO.docc/NetworkCoreNIO.md-BEGIN
        let transport = NIOTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        // … send through the pool …
        await transport.shutdown()
        // DOC Integrations/Sources/NetworkCoreNIO/NetworkCoreNIO.docc/NetworkCoreNIO.md-END
        return pool
    }
}

// Integrations/Sources/NetworkCoreTracing/RequestTracing.swift
extension IntegrationsDocCommentSamples {
    static func tracing() -> TaskPool {
        // DOC Integrations/Sources/NetworkCoreTracing/RequestTracing.swift-BEGIN
        let pool = TaskPool(configuration: TaskPool.Configuration(interceptors: [RetryPolicy()]).traced())
        // DOC Integrations/Sources/NetworkCoreTracing/RequestTracing.swift-END
        return pool
    }
}

// Integrations/Sources/NetworkCoreTracing/NetworkCoreTracing.docc/NetworkCoreTracing.md
extension IntegrationsDocCommentSamples {
    static func tracingCatalog() -> TaskPool {
        // DOC Integrations/Sources/NetworkCoreTracing/NetworkCoreTracing.docc/NetworkCoreTracing.md-BEGIN
        let pool = TaskPool(configuration: TaskPool.Configuration().traced())
        // DOC Integrations/Sources/NetworkCoreTracing/NetworkCoreTracing.docc/NetworkCoreTracing.md-END
        return pool
    }
}
