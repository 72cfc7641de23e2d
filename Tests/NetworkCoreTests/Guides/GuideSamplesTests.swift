import Foundation
import Testing

/// A page of the repository that shows Swift samples, and the source files that compile them (in the root
/// package's tests, MovieDB's, or the sibling package's), in the page's order.
struct GuidePage: Sendable, CustomTestStringConvertible {
    let page: String
    let files: [String]
    /// The name of the markers around its samples in those files: `// GUIDE-BEGIN` … `// GUIDE-END` for a page
    /// that has files of its own, `// DOC <page>-BEGIN` … for one whose samples share a file with others'.
    var marker = "GUIDE"
    var testDescription: String { page }

    /// A page whose samples are compiled in files shared with other pages', each between markers of its own.
    static func sharing(_ page: String, files: [String]) -> GuidePage {
        GuidePage(page: page, files: files, marker: "DOC \(page)")
    }
}

@Suite("The README, Docs/ and the DocC catalog: every Swift sample is compiled, and shown as compiled")
struct GuideSamplesTests {
    static let pages: [GuidePage] =
        [
            GuidePage(page: "README.md", files: ["Tests/NetworkCoreTests/Guides/ReadmeSamples.swift"]),
            GuidePage(
                page: "Docs/GettingStarted.md", files: ["Tests/NetworkCoreTests/Guides/GettingStartedSamples.swift"]),
            GuidePage(
                page: "Docs/Authentication.md", files: ["Tests/NetworkCoreTests/Guides/AuthenticationSamples.swift"]),
            GuidePage(
                page: "Docs/CachingAndScheduling.md",
                files: ["Tests/NetworkCoreTests/Guides/CachingAndSchedulingSamples.swift"]),
            GuidePage(page: "Docs/Transfers.md", files: ["Tests/NetworkCoreTests/Guides/TransfersSamples.swift"]),
            GuidePage(
                page: "Docs/WorkingOffline.md", files: ["Tests/NetworkCoreTests/Guides/WorkingOfflineSamples.swift"]),
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
                page: "Docs/WebSockets.md",
                files: ["Integrations/Tests/IntegrationSpecificTests/WebSocketGuideSamples.swift"]),
            GuidePage(
                page: "Docs/Pinning.md",
                files: ["Integrations/Tests/IntegrationSpecificTests/PinningGuideSamples.swift"]),
            GuidePage(
                page: "Sources/NetworkCore/NetworkCore.docc/NetworkCore.md",
                files: ["Tests/NetworkCoreTests/Guides/DocCSamples.swift"]),
        ]
        + integrationsDocumented.filter { $0.hasSuffix(".md") }
        .map { .sharing($0, files: integrationsSampleFiles) }

    /// The files that compile the samples of the documentation comments and of the Integrations products' DocC
    /// catalogs, each page's between markers of its own (`// DOC <path>-BEGIN`).
    static let rootSampleFiles = [
        "Tests/NetworkCoreTests/Guides/DocCommentSamples.swift", "Tests/MovieDBTests/DocCommentSamples.swift",
    ]
    static let integrationsSampleFiles = [
        "Integrations/Tests/IntegrationSpecificTests/DocCommentSamples.swift",
        "Integrations/Tests/NetworkCoreIntegrationsTests/DocCommentSamples.swift",
    ]

    /// The sibling package's sources and catalog pages that show a Swift sample, found once for both tables.
    static let integrationsDocumented = DocSamples.documentedSources(under: "Integrations/Sources")

    /// Every Swift source whose documentation comments show a Swift sample: the samples are compiled there.
    static let documentedSources: [GuidePage] =
        DocSamples.documentedSources(under: "Sources").filter { $0.hasSuffix(".swift") }
        .map { .sharing($0, files: rootSampleFiles) }
        + integrationsDocumented.filter { $0.hasSuffix(".swift") }
        .map { .sharing($0, files: integrationsSampleFiles) }

    @Test("the page shows exactly the lines its sample files compile", arguments: pages + documentedSources)
    func pageShowsWhatIsCompiled(_ guide: GuidePage) throws {
        let shown = try DocSamples.blocks(inPage: guide.page).flatMap { $0 }
        var compiled: [String] = []
        var marked = false
        for file in guide.files {
            let path = DocSamples.root.appendingPathComponent(file).path
            let regions = try DocSamples.compiled(in: path, marker: guide.marker)
            // A page of its own files has its markers in each; a shared one in at least one of them.
            if guide.marker == "GUIDE" { _ = try #require(regions, "no GUIDE markers in \(file)") }
            marked = marked || regions != nil
            compiled += regions ?? []
        }
        #expect(marked, "no «\(guide.marker)» markers in \(guide.files)")
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
        // The Integrations products' catalogs, whose samples are compiled with the sibling package's tests.
        let integrations = DocSamples.root.appendingPathComponent("Integrations/Sources")
        for module in try files.contentsOfDirectory(atPath: integrations.path) {
            let catalog = integrations.appendingPathComponent("\(module)/\(module).docc")
            guard let names = try? files.contentsOfDirectory(atPath: catalog.path) else { continue }
            pages += names.filter { $0.hasSuffix(".md") }.map { "Integrations/Sources/\(module)/\(module).docc/\($0)" }
        }
        #expect(pages.filter { $0.hasPrefix("Integrations/") }.count >= 7)
        let listed = Set(Self.pages.map(\.page))
        for page in pages where try !DocSamples.samples(inPage: page).isEmpty {
            #expect(listed.contains(page), "\(page) shows Swift samples that no test compiles")
        }
        for page in listed { #expect(pages.contains(page), "\(page) is not a page of the repository") }
    }
}
