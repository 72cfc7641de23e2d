// swift-tools-version: 6.1
// NetworkCore's integrations with the server-side Swift ecosystem: a package of their own, depending on
// NetworkCore by path, so that the root package keeps no dependencies. One product per integration.
import PackageDescription

let package = Package(
    name: "NetworkCoreIntegrations",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "NetworkCoreAsyncHTTPClient", targets: ["NetworkCoreAsyncHTTPClient"])
    ],
    dependencies: [
        .package(name: "NetworkCore", path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        .target(
            name: "NetworkCoreAsyncHTTPClient",
            dependencies: [
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        // NetworkCore's HTTP/1.1 test server on 127.0.0.1, the root package's own sources.
        .target(name: "LoopbackServer", dependencies: [.product(name: "NetworkCore", package: "NetworkCore")]),
        .testTarget(
            name: "NetworkCoreIntegrationsTests",
            dependencies: [
                "NetworkCoreAsyncHTTPClient", "LoopbackServer",
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
