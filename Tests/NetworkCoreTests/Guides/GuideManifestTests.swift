import Foundation
import NetworkCoreTesting
import TestSupport
import Testing

/// A manifest fragment a page shows (a `// Package.swift` sample): the `dependencies:` and `targets:` of a
/// user's package.
struct GuideManifest: Sendable, CustomTestStringConvertible {
    let page: String
    let fragment: String
    var testDescription: String { "\(page): \(fragment.split(separator: "\n").dropFirst().first ?? "")" }

    /// Every manifest fragment of the pages `GuideSamplesTests` lists, read once.
    static let all: [GuideManifest] = GuideSamplesTests.pages.flatMap { guide in
        ((try? DocSamples.manifests(inPage: guide.page)) ?? []).map { GuideManifest(page: guide.page, fragment: $0) }
    }

    /// The targets the fragment declares, by kind and name.
    var targets: [(kind: String, name: String)] {
        var found: [(String, String)] = []
        for kind in ["target", "executableTarget", "testTarget"] {
            for piece in fragment.components(separatedBy: ".\(kind)(name: \"").dropFirst() {
                found.append((kind, String(piece.prefix { $0 != "\"" })))
            }
        }
        return found
    }
}

@Suite(
    "The guides' package manifests resolve as a user's would, beside a checkout named NetworkCore",
    .enabled(if: OwnPass.enabled, OwnPass.reason))
struct GuideManifestTests {
    @Test("the pages show manifests: the README, getting started (2), testing, the integrations, the live inspector")
    func pagesShowManifests() {
        #expect(GuideManifest.all.count == 6)
        #expect(GuideManifest.all.allSatisfy { !$0.targets.isEmpty })
    }

    /// A scratch folder holds `NetworkCore`, a link to this repository, and for each fragment a package whose
    /// manifest is the fragment inside `Package(name:platforms:…)`, with a source file per target. `swift
    /// package show-dependencies` loads its graph: a dependency that does not resolve, or a product or
    /// package name that does not exist, fails it. The fragments run one after another with one build folder,
    /// so that the sibling package's dependencies are checked out once.
    @Test("every manifest a page shows resolves, with every product it names; a product that does not exist fails")
    func resolves() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        try FileManager.default.createSymbolicLink(at: scratch.file("NetworkCore"), withDestinationURL: DocSamples.root)
        var resolved = 0
        for (index, manifest) in GuideManifest.all.enumerated() {
            let result = try await Self.resolve(manifest, as: "App\(index)", in: scratch)
            #expect(result.status == 0, "\(manifest.testDescription): \(result.errors.suffix(2_000))")
            if result.status == 0 { resolved += 1 }
        }
        #expect(resolved == GuideManifest.all.count)
        // The same check of a manifest with a misspelt product.
        let misspelt = GuideManifest(
            page: "none",
            fragment: """
                dependencies: [.package(path: "../NetworkCore")],
                targets: [.target(name: "App", dependencies: [.product(name: "NetworkCor", package: "NetworkCore")])]
                """)
        let refused = try await Self.resolve(misspelt, as: "Misspelt", in: scratch)
        #expect(refused.status != 0)
        #expect(refused.errors.contains("product 'NetworkCor'"))
    }

    private static func resolve(
        _ manifest: GuideManifest, as name: String, in scratch: ScratchDirectory
    ) async throws
        -> ChildProcess
    {
        let files = FileManager.default
        let app = scratch.file(name)
        for target in manifest.targets {
            let folder = app.appendingPathComponent(
                "\(target.kind == "testTarget" ? "Tests" : "Sources")/\(target.name)")
            try files.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent(
                target.kind == "executableTarget" ? "main.swift" : "\(target.name).swift")
            try Data("import NetworkCore\n".utf8).write(to: file)
        }
        let package = """
            // swift-tools-version: 6.1
            import PackageDescription

            let package = Package(
                name: "App",
                platforms: [.macOS(.v13), .iOS(.v16)],
            \(manifest.fragment)
            )

            """
        try Data(package.utf8).write(to: app.appendingPathComponent("Package.swift"))
        let swift = try #require(
            toolchainEnvironment["PATH"]?.split(separator: ":").map { "\($0)/swift" }
                .first { files.isExecutableFile(atPath: $0) })
        return try await ChildProcess.run(
            at: URL(fileURLWithPath: swift),
            ["package", "--package-path", app.path, "--scratch-path", scratch.file("build").path, "show-dependencies"],
            // SwiftPM's lock files go to the temporary directory: the scratch folder's, removed with it.
            environment: toolchainEnvironment.merging(["TMPDIR": scratch.url.path]) { $1 }, timeout: 300)
    }
}
