import Foundation

/// The Swift samples a Markdown page of the repository shows, and the lines a test file compiles for
/// them between `// NAME-BEGIN` and `// NAME-END`: a page's samples are compiled, and shown as compiled.
enum DocSamples {
    /// The repository's root (this file is in Tests/NetworkCoreTests/Shared/Support, which the
    /// Integrations package's tests reach through a symbolic link).
    static let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The lines of `text`, trimmed, blank ones dropped.
    static func lines(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The lines of each ```swift block of the page at `path` (from the repository's root), in order.
    static func blocks(inPage path: String) throws -> [[String]] {
        let page = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        var blocks: [[String]] = []
        var rest = page[...]
        while let start = rest.range(of: "```swift\n"), let end = rest[start.upperBound...].range(of: "```") {
            blocks.append(lines(rest[start.upperBound..<end.lowerBound]))
            rest = rest[end.upperBound...]
        }
        return blocks
    }

    /// The lines between `// NAME-BEGIN` and `// NAME-END` of the source file at `file` (a `#filePath`);
    /// `nil` when the markers are missing.
    static func compiled(in file: String, marker name: String) throws -> [String]? {
        let source = try String(contentsOf: URL(fileURLWithPath: file), encoding: .utf8)
        guard let begin = source.range(of: "// \(name)-BEGIN\n"),
            let end = source[begin.upperBound...].range(of: "// \(name)-END")
        else { return nil }
        return lines(source[begin.upperBound..<end.lowerBound])
    }
}
