// swift-tools-version: 6.1
// NetworkCore's benchmarks: a package of their own, so the root package keeps no dependencies.
// Run them with `Benchmarks/run`.
import PackageDescription

let package = Package(
    name: "NetworkCoreBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "NetworkCore", path: ".."),
        .package(name: "NetworkCoreIntegrations", path: "../Integrations"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The websocket suite's peer client.
        .package(url: "https://github.com/vapor/websocket-kit", from: "2.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "NetworkCoreBenchmarks",
            dependencies: [
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "NetworkCoreAsyncHTTPClient", package: "NetworkCoreIntegrations"),
                .product(name: "NetworkCoreNIO", package: "NetworkCoreIntegrations"),
                .product(name: "NetworkCoreInspector", package: "NetworkCoreIntegrations"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "WebSocketKit", package: "websocket-kit"),
                "AllocatedBytes", "ResidentMemory", "ScaleTransport",
            ]),
        // The websocket suite's echo server, in a process of its own.
        .executableTarget(
            name: "WebSocketEcho",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]),
        // The pool suite's transport: tasks that never answer until cancelled, or answered at once.
        .target(name: "ScaleTransport", dependencies: [.product(name: "NetworkCore", package: "NetworkCore")]),
        // Sends registered, looked up and cancelled with 100,000 tracked, for counting each operation's
        // instructions (Benchmarks/pool-instructions).
        .executableTarget(
            name: "PoolOperations",
            dependencies: [.product(name: "NetworkCore", package: "NetworkCore"), "ScaleTransport"]),
        // The process's resident memory, read the same way by the benchmarks and the soak.
        .target(name: "ResidentMemory"),
        .target(name: "AllocatedBytes"),
        // N sends through a stub and nothing else, for counting their cost with outside tools (perf).
        .executableTarget(name: "SendLoop", dependencies: [.product(name: "NetworkCore", package: "NetworkCore")]),
        // N requests through one client and nothing else, for counting their instructions (callgrind).
        // (networkCoreInspected: with the inspector's server, whose views it builds as a page's are.)
        .executableTarget(
            name: "RequestLoop",
            dependencies: [
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "NetworkCoreInspector", package: "NetworkCoreIntegrations"),
                .product(name: "NetworkCoreAsyncHTTPClient", package: "NetworkCoreIntegrations"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        // Many requests through one pool, its resident memory read at every step (Benchmarks/soak).
        .executableTarget(
            name: "Soak",
            dependencies: [
                .product(name: "NetworkCore", package: "NetworkCore"),
                .product(name: "FoundationNetworkingFixes", package: "NetworkCore"),
                .product(name: "NetworkCoreAsyncHTTPClient", package: "NetworkCoreIntegrations"),
                "ResidentMemory",
            ]),
        // Server-Sent Events through the parser, with what the allocator is asked for per event.
        .target(name: "AllocationCounter"),
        .executableTarget(
            name: "EventStream",
            dependencies: [.product(name: "NetworkCore", package: "NetworkCore"), "AllocationCounter"]),
    ],
    swiftLanguageModes: [.v6]
)
