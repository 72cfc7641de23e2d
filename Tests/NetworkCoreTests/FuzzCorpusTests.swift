import Foundation
import NetworkCoreTesting
import TestSupport
import Testing

/// The fuzz targets' seed corpora and every input that once crashed one (`Tests/Fuzzers`), run through
/// their targets by the replaying build of `Fuzzers`, in a child process: a crash is a failed test.
@Suite("Fuzz corpora: every seed and every crash kept, replayed")
struct FuzzCorpusTests {
    static let targets = [
        "status", "models", "har", "request", "sse", "multipart", "headers", "cacheEntry", "webSocket",
        "durableWrite",
    ]
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzzers")

    @Test("each target takes its seeds and its past crashes without crashing", arguments: targets)
    func replay(target: String) async throws {
        let files = FileManager.default
        let seeds = try files.contentsOfDirectory(
            at: Self.folder.appendingPathComponent("Corpus/\(target)"), includingPropertiesForKeys: nil)
        let crashes =
            (try? files.contentsOfDirectory(
                at: Self.folder.appendingPathComponent("Crashes"), includingPropertiesForKeys: nil)) ?? []
        let inputs = seeds + crashes.filter { $0.lastPathComponent.hasPrefix(target + "-") }
        #expect(!seeds.isEmpty)
        let run = try await ChildProcess.run("Fuzzers", [target] + inputs.map(\.path), timeout: 120)
        #expect(run.status == 0, "\(target): \(run.errors.suffix(800))")
        #expect(run.output.contains("\(target): \(inputs.count) input(s), no crash"))
    }

    @Test("the replayer refuses a target it does not have, naming those it has")
    func unknownTarget() async throws {
        let run = try await ChildProcess.run("Fuzzers", ["nothing"], timeout: 60)
        #expect(run.status == 2)
        #expect(run.errors.contains(Self.targets.sorted().joined(separator: "|")))
    }
}
