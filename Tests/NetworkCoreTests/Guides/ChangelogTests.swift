import Foundation
import NetworkCore
import Testing

@Suite("CHANGELOG.md: Unreleased on top, a dated section per release, each block once")
struct ChangelogTests {
    /// The sections of the changelog, by heading, with the `###` headings of each.
    static func sections() throws -> [(heading: String, blocks: [String])] {
        let text = try String(contentsOf: DocSamples.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        var sections: [(heading: String, blocks: [String])] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") {
                sections.append((String(line.dropFirst(3)), []))
            } else if line.hasPrefix("### "), !sections.isEmpty {
                sections[sections.count - 1].blocks.append(String(line.dropFirst(4)))
            }
        }
        return sections
    }

    @Test("the newest release is the library's version, and each section names each block once, of four kinds")
    func shape() throws {
        let sections = try Self.sections()
        #expect(sections.count >= 3)
        #expect(sections.first?.heading == "Unreleased")
        let releases = sections.dropFirst()
        // "0.2.0 — 2026-11-27": a version and a date.
        for release in releases {
            let parts = release.heading.components(separatedBy: " — ")
            #expect(parts.count == 2, "\(release.heading)")
            #expect(parts.first?.split(separator: ".").count == 3, "\(release.heading)")
            #expect(parts.last?.count == 10, "\(release.heading)")
        }
        #expect(releases.first?.heading.hasPrefix(LibraryVersion.current + " — ") == true)
        for section in sections {
            #expect(Set(section.blocks).count == section.blocks.count, "\(section.heading) repeats a block")
            #expect(
                section.blocks.allSatisfy { ["Breaking", "Added", "Changed", "Fixed"].contains($0) },
                "\(section.heading): \(section.blocks)")
        }
    }
}
