import Foundation
import NetworkCore

/// An endpoint whose every part a test can set.
struct TestEndpoint: Endpoint {
    var baseURL = "https://api.example.com/v1"
    var path = "items"
    var method: HTTPMethod = .get
    var task: HTTPTask = .plain
    var headers: [String: String] = [:]
    var timeout: TimeInterval?
    var sampleData: Data?
}

extension InMemoryLogger {
    /// How many events of this kind were logged.
    func count(_ kind: TaskEvent.Kind) -> Int { events(kind).count }
}

/// Counts how often something happened, from any thread.
final class Counter: @unchecked Sendable {  // `lock` guards `value`.
    private let lock = NSLock()
    private var value = 0

    @discardableResult
    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

extension TaskPool {
    /// A pool over a stub transport, with a recording logger.
    static func stubbed(
        delay: TimeInterval = 0, policy: DuplicatePolicy = .join, logger: InMemoryLogger = InMemoryLogger(),
        responder: @escaping StubTransport.Responder = { _, _ in .json(#"{"ok": true}"#) }
    ) -> TaskPool {
        TaskPool(
            configuration: .init(
                transport: StubTransport(delay: delay, responder: responder), logger: logger, duplicatePolicy: policy))
    }
}

/// Waits until `condition` holds or `seconds` (times ``slowRunScale``) pass; returns whether it held.
/// A wait, not a bound on the behaviour, so it stretches in a slow run. If the calling task is
/// cancelled, it stops waiting and answers with the condition as it is then, rather than polling
/// without pause until the deadline.
func eventually(within seconds: Double = 2, _ condition: () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds * slowRunScale)
    while Date() < deadline {
        if await condition() { return true }
        do { try await Task.sleep(nanoseconds: 5_000_000) } catch { break }
    }
    return await condition()
}

/// How much longer wall-clock bounds may be in this run: 6 under a sanitizer (`NETWORKCORE_SLOW_RUN`
/// is set by `.ci/run` for its ThreadSanitizer pass), else 1. Under ThreadSanitizer, with every test
/// running at once on 2 cores, suites took 4 to 10 times as long as in the normal run, which keeps
/// the tight bounds. Used only where a bound is not what tells the behaviour apart.
let slowRunScale: Double = ProcessInfo.processInfo.environment["NETWORKCORE_SLOW_RUN"] == nil ? 1 : 6

/// Whether this is a sanitizer run, where wall-clock bounds that must stay tight to mean anything
/// (shorter than a server's delay) are not checked; the normal run checks them.
let isSlowRun = slowRunScale > 1
