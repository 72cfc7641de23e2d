import Foundation
import NetworkCoreTesting
import TestSupport
import Testing

@Suite(
    "Scripts/check-api: a break of the public API fails the test command unless the changelog lists it",
    .enabled(if: OwnPass.enabled, OwnPass.reason))
struct APICheckTests {
    /// The folder of the modules this test was built with (`.build/<triple>/debug/Modules`).
    static var modules: URL? {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        for _ in 0..<4 {
            folder.deleteLastPathComponent()
            let modules = folder.appendingPathComponent("Modules")
            if FileManager.default.fileExists(atPath: modules.appendingPathComponent("NetworkCore.swiftmodule").path) {
                return modules
            }
        }
        return nil
    }

    /// Today's API as a baseline (written by `Scripts/check-api --write-baseline`), with the given cases of
    /// `NetworkError` taken out: against it, today's API has "added" them, as a change that adds cases
    /// would, and nothing else (whatever the Unreleased section breaks besides).
    static func plantedBaseline(
        in scratch: ScratchDirectory, modules: URL, removing cases: Set<String> = ["notCached"]
    ) async throws -> URL {
        let folder = scratch.file("API")
        let written = try await ChildProcess.run(
            at: DocSamples.root.appendingPathComponent("Scripts/check-api"),
            ["--modules", modules.path, "--baseline", folder.path, "--write-baseline"],
            environment: toolchainEnvironment, timeout: 120)
        #expect(written.status == 0, "\(written.errors.suffix(2_000))")
        let data = try Data(contentsOf: folder.appendingPathComponent("NetworkCore.json"))
        var removed = 0
        func prune(_ node: Any) -> Any {
            if let array = node as? [Any] { return array.map(prune) }
            guard var object = node as? [String: Any] else { return node }
            if object["name"] as? String == "NetworkError", object["declKind"] as? String == "Enum",
                var children = object["children"] as? [Any]
            {
                let before = children.count
                children.removeAll { cases.contains(($0 as? [String: Any])?["name"] as? String ?? "") }
                removed += before - children.count
                object["children"] = children
            }
            return object.mapValues(prune)
        }
        let planted = prune(try JSONSerialization.jsonObject(with: data))
        #expect(removed == cases.count)
        try JSONSerialization.data(withJSONObject: planted).write(to: folder.appendingPathComponent("NetworkCore.json"))
        return folder
    }

    static func check(
        baseline: URL, changelog: String, modules: URL, in scratch: ScratchDirectory
    ) async throws
        -> ChildProcess
    {
        let file = scratch.file("CHANGELOG-\(UUID().uuidString).md")
        try Data(changelog.utf8).write(to: file)
        return try await ChildProcess.run(
            at: DocSamples.root.appendingPathComponent("Scripts/check-api"),
            ["--modules", modules.path, "--baseline", baseline.path, "--changelog", file.path],
            environment: toolchainEnvironment, timeout: 120)
    }

    @Test("today's API against the last release's: no break the changelog does not list")
    func currentAPI() async throws {
        let modules = try #require(Self.modules)
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let changelog = try String(contentsOf: DocSamples.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let result = try await Self.check(
            baseline: DocSamples.root.appendingPathComponent("API"), changelog: changelog, modules: modules, in: scratch
        )
        #expect(result.status == 0, "\(result.errors.suffix(2_000))")
    }

    @Test("a new NetworkError case fails the check until the Unreleased section's Breaking block names NetworkError")
    func plantedBreak() async throws {
        let modules = try #require(Self.modules)
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let baseline = try await Self.plantedBaseline(in: scratch, modules: modules)
        let unlisted = try await Self.check(
            baseline: baseline,
            // Listed as an addition, and named under an earlier release's Breaking: neither counts.
            changelog: """
                # Changelog

                ## Unreleased

                ### Added
                - `NetworkError.notCached(url:)`.

                ## 0.2.0 — 2026-11-27

                ### Breaking
                - `NetworkError` has new cases.

                """,
            modules: modules, in: scratch)
        #expect(unlisted.status == 1)
        #expect(unlisted.errors.contains("NOT listed under Breaking"))
        #expect(unlisted.errors.contains("NetworkError.notCached has been added as a new enum case"))
        #expect(unlisted.errors.contains("1 change(s) break users' code"))
        let listed = try await Self.check(
            baseline: baseline,
            changelog:
                "# Changelog\n\n## Unreleased\n\n### Breaking\n- `NetworkError` has a new case, `notCached(url:)`.\n",
            modules: modules, in: scratch)
        #expect(listed.status == 0, "\(listed.errors.suffix(2_000))")
        #expect(listed.errors.contains("1 breaking change(s) since the last release, each listed"))
    }

    @Test("a second break of a type the Breaking block already names fails the check: a line per declaration")
    func secondBreakOfListedType() async throws {
        let modules = try #require(Self.modules)
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let baseline = try await Self.plantedBaseline(
            in: scratch, modules: modules, removing: ["notCached", "fileAccessFailed"])
        let oneListed = try await Self.check(
            baseline: baseline,
            changelog: """
                # Changelog

                ## Unreleased

                ### Breaking
                - `NetworkError` has a new case, `notCached(url:)`; code that switches over
                  `NetworkError` must handle it.

                """,
            modules: modules, in: scratch)
        #expect(oneListed.status == 1)
        #expect(oneListed.errors.contains("listed under Breaking: NetworkCore: EnumElement NetworkError.notCached"))
        #expect(
            oneListed.errors.contains(
                "NOT listed under Breaking in CHANGELOG.md's Unreleased section: NetworkCore: EnumElement NetworkError.fileAccessFailed"
            ))
        #expect(oneListed.errors.contains("1 change(s) break users' code"))
        let bothListed = try await Self.check(
            baseline: baseline,
            changelog: """
                # Changelog

                ## Unreleased

                ### Breaking
                - `NetworkError.notCached(url:)` is a new case.
                - `NetworkError` has a new case, `fileAccessFailed(path:reason:)`.

                """,
            modules: modules, in: scratch)
        #expect(bothListed.status == 0, "\(bothListed.errors.suffix(2_000))")
        #expect(bothListed.errors.contains("2 breaking change(s) since the last release, each listed"))
    }
}
