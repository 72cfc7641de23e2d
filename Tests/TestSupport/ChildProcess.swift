import Foundation

/// Runs an executable built next to the tests and collects what it printed: for tests of what must not
/// take the test process down with it (a crash is the child's exit status, not a dead suite).
public struct ChildProcess: Sendable {
    /// The exit status, or the signal that ended it (e.g. 4 for SIGILL, a Swift trap); -1 if it was killed
    /// for running past its time.
    public let status: Int32
    /// Standard output.
    public let output: String
    /// Standard error.
    public let errors: String

    /// Where the executable `name` was built: beside the test bundle, or `nil`.
    public static func binary(_ name: String) -> URL? {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ].map { $0.appendingPathComponent(name) }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Runs `name` with `arguments` and only `environment` (plus PATH), for at most `timeout` seconds, on
    /// a thread of its own: waiting for a process must not hold one of Swift concurrency's few threads.
    public static func run(
        _ name: String, _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 60
    ) async throws -> ChildProcess {
        guard let binary = binary(name) else { throw MissingBinary(name: name) }
        return try await run(at: binary, arguments, environment: environment, timeout: timeout)
    }

    /// Runs the executable at `binary`, as ``run(_:_:environment:timeout:)`` does.
    public static func run(
        at binary: URL, _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 60
    ) async throws -> ChildProcess {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        try runBlocking(binary, arguments, environment: environment, timeout: timeout)
                    })
            }
        }
    }

    private static func runBlocking(
        _ binary: URL, _ arguments: [String], environment: [String: String], timeout: TimeInterval
    ) throws -> ChildProcess {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        // A sanitizer's settings go along, so that a child built with the same sanitizer runs as its parent does.
        let sanitizers = ProcessInfo.processInfo.environment.filter {
            ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"].contains($0.key)
        }
        process.environment = environment.merging(["PATH": "/usr/bin:/bin"].merging(sanitizers) { $1 }) { mine, _ in
            mine
        }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Both pipes are read while it runs, each on its own thread, so that neither fills up and blocks it.
        let collected = Collected()
        let readers = DispatchGroup()
        for (pipe, isOutput) in [(output, true), (errors, false)] {
            readers.enter()
            Thread.detachNewThread {
                collected.set(pipe.fileHandleForReading.readDataToEndOfFile(), isOutput: isOutput)
                readers.leave()
            }
        }
        var killed = false
        if readers.wait(timeout: .now() + timeout) == .timedOut {
            killed = true
            process.terminate()
            _ = readers.wait(timeout: .now() + 5)
        }
        process.waitUntilExit()
        let (out, err) = collected.both
        return ChildProcess(
            status: killed ? -1 : process.terminationStatus, output: String(decoding: out, as: UTF8.self),
            errors: String(decoding: err, as: UTF8.self))
    }

    /// The two pipes' bytes, set from the reading threads.
    private final class Collected: @unchecked Sendable {  // `lock` guards both.
        private let lock = NSLock()
        private var output = Data()
        private var errors = Data()

        func set(_ data: Data, isOutput: Bool) {
            lock.withLock { if isOutput { output = data } else { errors = data } }
        }

        var both: (Data, Data) { lock.withLock { (output, errors) } }
    }

    /// The executable was not built next to the tests.
    public struct MissingBinary: Error, CustomStringConvertible {
        /// The executable's name.
        public let name: String
        /// What to do about it.
        public var description: String { "\(name) was not built next to the tests: run Scripts/test or swift build" }
    }
}
