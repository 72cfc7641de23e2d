import Foundation

/// The Swift samples a Markdown page of the repository shows, and the lines test files compile for them
/// between `// NAME-BEGIN` and `// NAME-END`: a page's samples are compiled, and shown as compiled.
///
/// A sample whose first line is `// Package.swift` is a manifest's `dependencies:` and `targets:`, checked
/// by resolving it in a scratch package (`GuideManifestTests`), not compiled with the tests.
enum DocSamples {
    /// The repository's root (this file is in Tests/NetworkCoreTests/Shared/Support, which the
    /// Integrations package's tests reach through a symbolic link).
    static let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The first line of a sample that is a manifest's fragment.
    static let manifestMarker = "// Package.swift"

    /// The lines of `text`, trimmed, blank ones dropped.
    static func lines(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The text of each ```swift block of the page at `path` (from the repository's root), in order. A Swift
    /// source file's page is its documentation comments (`///`).
    static func samples(inPage path: String) throws -> [Substring] {
        var page = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        if path.hasSuffix(".swift") { page = documentation(ofSource: page) }
        var samples: [Substring] = []
        var rest = page[...]
        while let start = rest.range(of: "```swift\n"), let end = rest[start.upperBound...].range(of: "```") {
            samples.append(rest[start.upperBound..<end.lowerBound])
            rest = rest[end.upperBound...]
        }
        return samples
    }

    /// The text of a Swift source's documentation comments, each `///` line without its marker, every other
    /// line left empty (so a block never runs from one comment into the next).
    static func documentation(ofSource source: String) -> String {
        source.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("///") else { return "" }
            let text = trimmed.dropFirst(3)
            return String(text.first == " " ? text.dropFirst() : text)
        }.joined(separator: "\n")
    }

    /// The Swift sources under `folder` (from the repository's root) whose documentation shows a Swift sample,
    /// and the pages of DocC catalogs there that show one, as paths from the root, sorted.
    static func documentedSources(under folder: String) -> [String] {
        let base = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(atPath: base.path) else { return [] }
        var found: [String] = []
        while let path = walker.nextObject() as? String {
            guard path.hasSuffix(".swift") || (path.hasSuffix(".md") && path.contains(".docc/")),
                !path.contains(".build/")
            else { continue }
            let file = "\(folder)/\(path)"
            if let samples = try? self.samples(inPage: file), !samples.isEmpty { found.append(file) }
        }
        return found.sorted()
    }

    /// The lines of each ```swift block of the page at `path` that is code, not a manifest, in order.
    static func blocks(inPage path: String) throws -> [[String]] {
        try samples(inPage: path).map(lines).filter { $0.first != manifestMarker }
    }

    /// The manifest fragments of the page at `path`, as written.
    static func manifests(inPage path: String) throws -> [String] {
        try samples(inPage: path).filter { lines($0).first == manifestMarker }.map(String.init)
    }

    /// The lines between each `// NAME-BEGIN` and the `// NAME-END` after it in the source file at `file`
    /// (a path), the regions one after another; `nil` when there is none.
    static func compiled(in file: String, marker name: String) throws -> [String]? {
        let source = try String(contentsOf: URL(fileURLWithPath: file), encoding: .utf8)
        var regions: [String] = []
        var found = false
        var rest = source[...]
        while let begin = rest.range(of: "// \(name)-BEGIN\n"),
            let end = rest[begin.upperBound...].range(of: "// \(name)-END")
        {
            regions += lines(rest[begin.upperBound..<end.lowerBound])
            found = true
            rest = rest[end.upperBound...]
        }
        return found ? regions : nil
    }
}
