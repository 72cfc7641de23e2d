// swift-tools-version: 6.1
// NetworkCore's integrations with the server-side Swift ecosystem: a package of their own, depending on
// NetworkCore by path, so that the root package keeps no dependencies. One product per integration.
import PackageDescription

let package = Package(
    name: "NetworkCoreIntegrations",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "NetworkCoreAsyncHTTPClient", targets: ["NetworkCoreAsyncHTTPClient"]),
        .library(name: "NetworkCoreNIO", targets: ["NetworkCoreNIO"]),
        .library(name: "NetworkCoreLogging", targets: ["NetworkCoreLogging"]),
        .library(name: "NetworkCoreMetrics", targets: ["NetworkCoreMetrics"]),
        .library(name: "NetworkCoreTracing", targets: ["NetworkCoreTracing"]),
        .library(name: "NetworkCoreOpenAPI", targets: ["NetworkCoreOpenAPI"]),
        .library(name: "NetworkCoreInspector", targets: ["NetworkCoreInspector"]),
        // MovieDB's offline stand-in, slowed, under the inspector: `swift run inspector-demo`.
        .executable(name: "inspector-demo", targets: ["InspectorDemo"]),
        // Drives the Autobahn|Testsuite fuzzing server with NetworkCore's WebSocket client: `Scripts/autobahn`.
        .executable(name: "autobahn-client", targets: ["AutobahnClient"]),
    ],
    dependencies: [
        .package(name: "NetworkCore", path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "NetworkCoreAsyncHTTPClient",
            dependencies: [
                "NetworkCoreNIOSupport",
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        .target(
            name: "NetworkCoreNIO",
            dependencies: [
                "NetworkCoreNIOSupport",
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]),
        // What the SwiftNIO transports share: request bodies read as the connection takes them, response
        // heads, error translation. Not a product.
        .target(
            name: "NetworkCoreNIOSupport",
            dependencies: [
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
            ]),
        .target(
            name: "NetworkCoreLogging",
            dependencies: [
                .product(name: "NetworkCore", package: "NetworkCore"), .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "NetworkCoreMetrics",
            dependencies: [
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]),
        .target(
            name: "NetworkCoreTracing",
            dependencies: [
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),
        .target(
            name: "NetworkCoreOpenAPI",
            dependencies: [
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]),
        // The live inspector: a page served on SwiftNIO's HTTP/1.1 server, on 127.0.0.1 only.
        .target(
            name: "NetworkCoreInspector",
            dependencies: [
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            resources: [.copy("Resources/inspector.html")]),
        .executableTarget(
            name: "AutobahnClient",
            dependencies: ["NetworkCoreNIO", .product(name: "NetworkCore", package: "NetworkCore")]),
        .executableTarget(
            name: "InspectorDemo",
            dependencies: [
                "NetworkCoreInspector",
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "MovieDB", package: "NetworkCore"),
            ]),
        // The root package's child-process runner for tests, its own sources.
        .target(name: "TestSupport"),
        // The root package's shared integration suite (Shared/) over AsyncHTTPClient and NIOTransport, the
        // OpenAPI client over both, and the samples of the guides to debugging and to the integrations.
        .testTarget(
            name: "NetworkCoreIntegrationsTests",
            dependencies: [
                "NetworkCoreAsyncHTTPClient", "NetworkCoreNIO", "NetworkCoreLogging", "NetworkCoreMetrics",
                "NetworkCoreTracing", "NetworkCoreOpenAPI", "TestSupport",
                .product(name: "NetworkCoreTesting", package: "NetworkCore"),
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            // The OpenAPI document the client in PetsClient/ was generated from, and the generator's settings.
            exclude: ["PetsClient/openapi.yaml", "PetsClient/openapi-generator-config.yaml"]),
        // Each integration's own tests: the two transports', the inspector's (and its guide's samples),
        // logging, metrics and tracing. A target of its own, so that it compiles beside the one above: in CI
        // each is one compiler process, and the two are among the last steps of the build.
        .testTarget(
            name: "IntegrationSpecificTests",
            dependencies: [
                "NetworkCoreAsyncHTTPClient", "NetworkCoreNIO", "NetworkCoreNIOSupport", "NetworkCoreLogging",
                "NetworkCoreMetrics", "NetworkCoreTracing", "NetworkCoreInspector", "TestSupport",
                .product(name: "NetworkCoreTesting", package: "NetworkCore"),
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
