// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "NetworkCore",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "NetworkCore", targets: ["NetworkCore"]),
        .library(name: "MovieDB", targets: ["MovieDB"]),
        // Opt-in, for an executable on Linux: replaces FoundationNetworking's host check, which leaks and
        // fails IPv6 literals up to Swift 6.3, for every URLSession in the process (see Docs/Reliability.md).
        .library(name: "FoundationNetworkingFixes", targets: ["FoundationNetworkingFixes"]),
        .executable(name: "playground", targets: ["Playground"]),
    ],
    targets: [
        .target(name: "NetworkCore"),
        // C: replaces a FoundationNetworking function that leaks and fails IPv6 literals (Linux only); opt-in.
        .target(name: "FoundationNetworkingFixes"),
        .target(name: "MovieDB", dependencies: ["NetworkCore"], resources: [.copy("Fixtures")]),
        .executableTarget(name: "Playground", dependencies: ["MovieDB", "NetworkCore"], path: "Playground"),
        // An HTTP/1.1 server on 127.0.0.1 for integration tests; not a product.
        .target(name: "LoopbackServer", dependencies: ["NetworkCore"], path: "Tests/LoopbackServer"),
        // Cancels sends at every point of their life, in a child process of `EarlyCancelTests`.
        .executableTarget(
            name: "CancelProbe", dependencies: ["NetworkCore", "LoopbackServer"], path: "Tests/CancelProbe"),
        // Sends a load through a faulty network, inside a network namespace made by Scripts/netfaults.
        .executableTarget(name: "FaultLoad", dependencies: ["NetworkCore"], path: "Tests/FaultLoad"),
        // Coverage-guided fuzz targets (libFuzzer, built by Scripts/fuzz); in a plain build, a replayer of their
        // corpora, which FuzzTests runs. Not a product.
        .executableTarget(
            name: "Fuzzers", dependencies: ["NetworkCore", "MovieDB"], path: "Tests/Fuzzers", exclude: ["Corpus", "Crashes"]),
        .testTarget(
            name: "NetworkCoreTests",
            dependencies: ["NetworkCore", "LoopbackServer", "FoundationNetworkingFixes", "CancelProbe", "Fuzzers"]),
        .testTarget(
            name: "MovieDBTests", dependencies: ["MovieDB", "NetworkCore", "LoopbackServer", "Playground"],
            resources: [.copy("Resources/Captures")]),
    ],
    swiftLanguageModes: [.v6]
)
