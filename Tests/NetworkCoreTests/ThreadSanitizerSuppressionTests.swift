import Foundation
import TestSupport
import Testing

/// Tests/tsan-suppressions.txt holds one suppression, for a report ThreadSanitizer makes about Swift's own
/// `withUnsafeContinuation`. This shows the report with a short program that does not use the pool
/// (`cancel-probe unsafe-continuation`, a continuation resumed from another thread as soon as it is made),
/// and that the suppression silences it, and only in the standard library's code. Only under
/// ThreadSanitizer (`NETWORKCORE_TSAN=1`, the first pass of CI), where the probe is built with it.
@Suite(
    "ThreadSanitizer: the one suppression is a report about withUnsafeContinuation itself, without the pool",
    .serialized,
    .enabled(
        if: OwnPass.enabled && ProcessInfo.processInfo.environment["NETWORKCORE_TSAN"] == "1",
        "ThreadSanitizer runs only"))
struct ThreadSanitizerSuppressionTests {
    static let symbol = "ss22withUnsafeContinuation9isolation_xScA_pSgYi_ySccyxs5NeverOGXEtYalFTY0_"
    static let rounds = "20000"

    @Test("without the suppressions the probe is reported, always in withUnsafeContinuation; with them it is not")
    func reportIsTheRuntimes() async throws {
        let suppressions = DocSamples.root.appendingPathComponent("Tests/tsan-suppressions.txt").path
        // Without suppressions: a report, at most three runs of 20,000 rounds (one run has always shown it).
        var reports: [Substring] = []
        for _ in 0..<3 where reports.isEmpty {
            let run = try await ChildProcess.run(
                "CancelProbe", ["unsafe-continuation", Self.rounds],
                environment: ["TSAN_OPTIONS": "halt_on_error=0 exitcode=0"], timeout: 120)
            #expect(run.status == 0, "\(run.errors.suffix(1_000))")
            #expect(run.output.contains("unsafe-continuation=done rounds=\(Self.rounds)"))
            reports = run.errors.components(separatedBy: "WARNING: ThreadSanitizer: ").dropFirst().map { $0[...] }
        }
        #expect(!reports.isEmpty, "ThreadSanitizer no longer reports the probe: the suppression may go")
        for report in reports {
            // The race is between the task's frame written in `withUnsafeContinuation`'s code after the await
            // and `resume(returning:)` reading it: the first frame of the report's first access.
            let firstFrame = report.split(separator: "\n").first { $0.contains("#0 ") } ?? ""
            #expect(report.hasPrefix("data race"))
            #expect(firstFrame.contains(Self.symbol), "\(report.prefix(1_500))")
            #expect(!report.contains("TaskPool"), "\(report.prefix(1_500))")
        }
        // With the suppressions CI uses: nothing reported, and the probe still ran to its end.
        let suppressed = try await ChildProcess.run(
            "CancelProbe", ["unsafe-continuation", Self.rounds],
            environment: ["TSAN_OPTIONS": "halt_on_error=0 exitcode=0 suppressions=\(suppressions)"], timeout: 120)
        #expect(suppressed.status == 0)
        #expect(suppressed.output.contains("unsafe-continuation=done rounds=\(Self.rounds)"))
        #expect(!suppressed.errors.contains("WARNING: ThreadSanitizer"), "\(suppressed.errors.suffix(1_500))")
    }
}
