import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A deadline is a promise: it holds while the session is busy cancelling everything else.
@Suite("Deadlines under load", .enabled(if: OwnPass.enabled, OwnPass.reason))
struct DeadlineTests {
    @Test("256 sends in flight to a server that never answers in time all end at their deadline, none late")
    func deadlinesHoldUnderLoad() async throws {
        // Every sixteenth answer carries 5,000 headers, which FoundationNetworking parses on the session's one
        // queue, keeping it busy for seconds; the rest are held until every caller has returned (a minute at
        // most), so a caller that returns was ended by its deadline, never by an answer. Every send has the
        // same deadline.
        let headers = Dictionary(
            uniqueKeysWithValues: (0..<5_000).map { ("X-Filler-\($0)", String(repeating: "v", count: 20)) })
        let callersReturned = DispatchSemaphore(value: 0)
        let lateAnswers = Tally()
        let server = try MockServer(port: 0, recordsRequests: false, keepsAlive: true) { request in
            if request.url?.path.hasPrefix("/heavy") == true {
                return MockResponse(StubResponse(headers: headers, body: Data("heavy".utf8)))
            }
            _ = callersReturned.wait(timeout: .now() + 60)
            lateAnswers.increment()
            return MockResponse(StubResponse(body: Data("late".utf8)))
        }
        defer {
            for _ in 0..<256 { callersReturned.signal() }
            server.kill()
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 64
        let deadline = 0.4
        let logger = InMemoryLogger()
        let pool = TaskPool(
            configuration: .init(
                // Every send in flight at once, as the session allows: the deadlines must hold inside it.
                transport: URLSessionTransport(configuration: configuration), logger: logger,
                resourceTimeout: deadline, maximumConcurrentTasks: 256, maximumTasksPerHost: 256))
        let outcomes = await withTaskGroup(of: (any Error)?.self) { group in
            for index in 0..<256 {
                group.addTask {
                    do {
                        let path = index % 16 == 0 ? "heavy/\(index)" : "slow/\(index)"
                        _ = try await pool.send(TestEndpoint(baseURL: server.baseURL, path: path))
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.count == 256)
        // A heavy answer may come in time; a slow one never does.
        let errors = outcomes.compactMap { $0 }
        let missed = errors.filter {
            guard case .deadlineExceeded(let seconds)? = $0 as? NetworkError else { return true }
            return seconds != deadline
        }
        #expect(missed.isEmpty, "\(missed.prefix(3))")
        #expect(errors.count >= 240)
        // Each ended at its deadline by the pool's own clock: its timer fired then, whatever the session was
        // doing (a margin for the timer's thread, stretched in a sanitizer run).
        let ended = logger.events.filter { $0.kind == .failed }.compactMap(\.duration)
        #expect(ended.count == errors.count)
        let latest = ended.max() ?? 0
        #expect(latest < deadline + 0.3 * slowRunScale, "the latest task ended after \(latest) s")
        // Every caller returned while the server still held every slow answer.
        #expect(lateAnswers.count == 0)
        #expect(pool.activeTasks.isEmpty)
    }
}
