// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "NetworkCore",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "NetworkCore", targets: ["NetworkCore"])
    ],
    targets: [
        .target(name: "NetworkCore"),
        .testTarget(name: "NetworkCoreTests", dependencies: ["NetworkCore"]),
    ],
    swiftLanguageModes: [.v6]
)
