import Foundation
import Testing

/// A page of the repository that shows Swift samples, and the source files that compile them (in the root
/// package's tests, MovieDB's, or the sibling package's), in the page's order.
struct GuidePage: Sendable, CustomTestStringConvertible {
    let page: String
    let files: [String]
    var testDescription: String { page }
}

@Suite("The README, Docs/ and the DocC catalog: every Swift sample is compiled, and shown as compiled")
struct GuideSamplesTests {
    static let pages: [GuidePage] = [
        GuidePage(page: "README.md", files: ["Tests/NetworkCoreTests/Guides/ReadmeSamples.swift"]),
        GuidePage(page: "Docs/GettingStarted.md", files: ["Tests/NetworkCoreTests/Guides/GettingStartedSamples.swift"]),
        GuidePage(page: "Docs/Authentication.md", files: ["Tests/NetworkCoreTests/Guides/AuthenticationSamples.swift"]),
        GuidePage(
            page: "Docs/CachingAndScheduling.md",
            files: ["Tests/NetworkCoreTests/Guides/CachingAndSchedulingSamples.swift"]),
        GuidePage(page: "Docs/Transfers.md", files: ["Tests/NetworkCoreTests/Guides/TransfersSamples.swift"]),
        GuidePage(page: "Docs/MovieDB.md", files: ["Tests/MovieDBTests/MovieDBGuideSamples.swift"]),
        GuidePage(page: "Docs/Testing.md", files: ["Tests/MovieDBTests/TestingGuideSamples.swift"]),
        GuidePage(
            page: "Docs/Debugging.md",
            files: ["Integrations/Tests/NetworkCoreIntegrationsTests/DebuggingGuideSamples.swift"]),
        GuidePage(
            page: "Docs/Integrations.md",
            files: ["Integrations/Tests/NetworkCoreIntegrationsTests/IntegrationsGuideTests.swift"]),
        GuidePage(
            page: "Docs/LiveInspector.md",
            files: ["Integrations/Tests/IntegrationSpecificTests/InspectorGuideTests.swift"]),
        GuidePage(
            page: "Sources/NetworkCore/NetworkCore.docc/NetworkCore.md",
            files: ["Tests/NetworkCoreTests/Guides/DocCSamples.swift"]),
    ]

    @Test("the page shows exactly the lines its sample files compile", arguments: pages)
    func pageShowsWhatIsCompiled(_ guide: GuidePage) throws {
        let shown = try DocSamples.blocks(inPage: guide.page).flatMap { $0 }
        var compiled: [String] = []
        for file in guide.files {
            let path = DocSamples.root.appendingPathComponent(file).path
            compiled += try #require(try DocSamples.compiled(in: path, marker: "GUIDE"), "no GUIDE markers in \(file)")
        }
        #expect(!shown.isEmpty)
        #expect(shown.count == compiled.count, "lines shown \(shown.count), compiled \(compiled.count)")
        // The first line that differs, rather than both pages of lines.
        if let index = zip(shown, compiled).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            Issue.record("line \(index) of the samples: shown «\(shown[index])», compiled «\(compiled[index])»")
        }
    }

    @Test("every page with a Swift sample is in the table, and every page of the table exists")
    func everyPageListed() throws {
        let files = FileManager.default
        var pages = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"]
        pages += try files.contentsOfDirectory(atPath: DocSamples.root.appendingPathComponent("Docs").path)
            .filter { $0.hasSuffix(".md") }.map { "Docs/\($0)" }
        let sources = DocSamples.root.appendingPathComponent("Sources")
        for module in try files.contentsOfDirectory(atPath: sources.path) {
            let modulePath = sources.appendingPathComponent(module).path
            for catalog in (try? files.contentsOfDirectory(atPath: modulePath)) ?? [] where catalog.hasSuffix(".docc") {
                pages += try files.contentsOfDirectory(atPath: "\(modulePath)/\(catalog)")
                    .filter { $0.hasSuffix(".md") }.map { "Sources/\(module)/\(catalog)/\($0)" }
            }
        }
        #expect(pages.count >= 14)
        let listed = Set(Self.pages.map(\.page))
        for page in pages where try !DocSamples.samples(inPage: page).isEmpty {
            #expect(listed.contains(page), "\(page) shows Swift samples that no test compiles")
        }
        for page in listed { #expect(pages.contains(page), "\(page) is not a page of the repository") }
    }
}
