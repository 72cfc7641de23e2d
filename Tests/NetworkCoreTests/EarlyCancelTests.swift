import Foundation
import NetworkCoreTesting
import TestSupport
import Testing

/// Cancels sends at every point of their life over real loopback HTTP, in a child process (`cancel-probe`,
/// `Tests/CancelProbe`): FoundationNetworking traps the whole process when it mishandles a cancel, so a
/// crash there must be a failed test, not a dead suite.
@Suite("early cancel, in a child process", .serialized, .enabled(if: OwnPass.enabled, OwnPass.reason))
struct EarlyCancelTests {
    /// The probe's ways of cancelling and how many sends each makes: 11,500 in all (a fifth of that in a
    /// sanitizer run, which is several times slower); the `upload` ways send a 4 MiB file each.
    static let ways: [(String, Int)] = [
        ("task", 3_000), ("id", 2_000), ("replace", 1_500), ("deadline", 1_000), ("all", 1_500), ("retry", 1_000),
        ("retry-after", 50), ("upload", 1_000), ("upload-chunked", 500),
    ]

    @Test("no crash, and every send ends exactly once, however it is cancelled", arguments: ways)
    func cancelAtEveryPoint(way: String, sends: Int) async throws {
        let count = isSlowRun ? max(sends / 5, 10) : sends
        let run = try await ChildProcess.run("CancelProbe", [way, String(count)], timeout: 300)
        #expect(run.status == 0, "cancel-probe \(way) \(count) exited \(run.status): \(run.errors.suffix(600))")
        let line = try #require(run.output.split(separator: "\n").last { $0.hasPrefix("way=") })
        let fields = Dictionary(
            uniqueKeysWithValues: line.split(separator: " ").compactMap { pair -> (String, String)? in
                let parts = pair.split(separator: "=", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            })
        #expect(fields["sends"] == String(count))
        #expect(fields["endedOnce"] == String(count))
        #expect(fields["endedTwice"] == "0")
        #expect(fields["left"] == "0")
        // Most sends are cancelled (or run out of time) before their answer: the probe reached them early.
        let stopped = Int(fields[way == "deadline" ? "failed" : "cancelled"] ?? "") ?? 0
        #expect(stopped > count / 2, "\(line)")
    }

    @Test(
        "a stream's pause never reaches its transport after the resume decided next: 4,000 streams paused and resumed on two threads, none stalls"
    )
    func pauseAndResumeInOrder() async throws {
        // Without the order kept, about 1 stream in 800 stalled here (the pause, decided on the transport's
        // thread, told after the consumer's resume).
        let streams = isSlowRun ? 800 : 4_000
        let run = try await ChildProcess.run("CancelProbe", ["stream-pause", String(streams)], timeout: 300)
        #expect(run.status == 0, "cancel-probe stream-pause exited \(run.status): \(run.output.suffix(600))")
        let line = try #require(run.output.split(separator: "\n").last { $0.hasPrefix("way=stream-pause") })
        #expect(line == "way=stream-pause streams=\(streams) whole=\(streams) stalls=0")
    }

    @Test("a queued send that leaves the queue on the session's own queue starts there without a crash")
    func dequeuedOnTheSessionQueue() async throws {
        let rounds = isSlowRun ? 20 : 100
        let run = try await ChildProcess.run("CancelProbe", ["dequeue", String(rounds)], timeout: 300)
        #expect(run.status == 0, "cancel-probe dequeue exited \(run.status): \(run.errors.suffix(600))")
        let line = try #require(run.output.split(separator: "\n").last { $0.hasPrefix("way=dequeue") })
        #expect(line.hasPrefix("way=dequeue rounds=\(rounds) joinedSucceeded=\(rounds) queuedSucceeded=\(rounds) "))
        // The path is taken when the first caller has left before the answer (30 ms after the request).
        let early = line.split(separator: " ").last { $0.hasPrefix("firstLeftEarly=") }?.split(separator: "=").last
        #expect((early.flatMap { Int($0) } ?? 0) > rounds / 2, "\(line)")
    }
}
