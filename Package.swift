// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "NetworkCore",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "NetworkCore", targets: ["NetworkCore"]),
        .library(name: "MovieDB", targets: ["MovieDB"]),
        // For test targets: a real HTTP/1.1 server on the loopback address with scripted answers and faults.
        .library(name: "NetworkCoreTesting", targets: ["NetworkCoreTesting"]),
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
        .target(name: "NetworkCoreTesting", dependencies: ["NetworkCore"]),
        // Runs executables built beside the tests (crash and race tests in child processes); not a product.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        // Cancels sends at every point of their life, in a child process of `EarlyCancelTests`.
        .executableTarget(
            name: "CancelProbe", dependencies: ["NetworkCore", "NetworkCoreTesting"], path: "Tests/CancelProbe"),
        // Sends a load through a faulty network, inside a network namespace made by Scripts/netfaults. With the
        // opt-in fixes, as a server would link them: FoundationNetworking's, unfixed, keeps a processor busy
        // through every slow transfer.
        .executableTarget(
            name: "FaultLoad", dependencies: ["NetworkCore", "FoundationNetworkingFixes"], path: "Tests/FaultLoad"),
        // Coverage-guided fuzz targets (libFuzzer, built by Scripts/fuzz); in a plain build, a replayer of their
        // corpora, which FuzzTests runs. Not a product.
        .executableTarget(
            name: "Fuzzers", dependencies: ["NetworkCore", "MovieDB"], path: "Tests/Fuzzers", exclude: ["Corpus", "Crashes"]),
        .testTarget(
            name: "NetworkCoreTests",
            dependencies: [
                "NetworkCore", "NetworkCoreTesting", "TestSupport", "FoundationNetworkingFixes", "CancelProbe", "Fuzzers",
            ]),
        .testTarget(
            name: "MovieDBTests", dependencies: [
                "MovieDB", "NetworkCore", "NetworkCoreTesting", "TestSupport", "Playground",
            ],
            resources: [.copy("Resources/Captures")]),
    ],
    swiftLanguageModes: [.v6]
)
