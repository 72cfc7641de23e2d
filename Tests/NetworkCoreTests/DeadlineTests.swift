import Foundation
import LoopbackServer
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A deadline is a promise: it holds while the session is busy cancelling everything else.
@Suite("Deadlines under load")
struct DeadlineTests {
    @Test("256 sends in flight to a server that never answers in time all end at their deadline, none late")
    func deadlinesHoldUnderLoad() async throws {
        // Every sixteenth answer carries 5,000 headers, which FoundationNetworking parses on the session's one
        // queue, keeping it busy for seconds; the rest come too late. Every send has the same deadline.
        let headers = Dictionary(
            uniqueKeysWithValues: (0..<5_000).map { ("X-Filler-\($0)", String(repeating: "v", count: 20)) })
        let server = try LoopbackServer(port: 0, recordsRequests: false, keepsAlive: true) { request in
            request.url?.path.hasPrefix("/heavy") == true
                ? .respond(StubResponse(headers: headers, body: Data("heavy".utf8)))
                : .delayed(3, StubResponse(body: Data("late".utf8)))
        }
        defer { server.kill() }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 64
        let deadline = 0.4
        let logger = InMemoryLogger()
        let pool = TaskPool(
            configuration: .init(
                // Every send in flight at once, as the session allows: the deadlines must hold inside it.
                transport: URLSessionTransport(configuration: configuration), logger: logger,
                resourceTimeout: deadline, maximumConcurrentTasks: 256, maximumTasksPerHost: 256))
        let ends = await withTaskGroup(of: (TimeInterval, NetworkError?).self) { group in
            for index in 0..<256 {
                group.addTask {
                    let start = Date()
                    do {
                        let path = index % 16 == 0 ? "heavy/\(index)" : "slow/\(index)"
                        _ = try await pool.send(TestEndpoint(baseURL: server.baseURL, path: path))
                        return (Date().timeIntervalSince(start), nil)
                    } catch {
                        return (Date().timeIntervalSince(start), error as? NetworkError)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(ends.count == 256)
        // A heavy answer may come in time; a slow one never does.
        let missed = ends.filter {
            guard let error = $0.1 else { return false }
            guard case .deadlineExceeded(let seconds) = error else { return true }
            return seconds != deadline
        }
        #expect(missed.isEmpty, "\(missed.prefix(3))")
        #expect(ends.filter { $0.1 != nil }.count >= 240)
        // Each ended at its deadline by the pool's own clock: its timer fired then, whatever the session was
        // doing (a margin for the timer's thread, stretched in a sanitizer run).
        let ended = logger.events.filter { $0.kind == .failed }.compactMap(\.duration)
        #expect(ended.count == ends.filter { $0.1 != nil }.count)
        let latest = ended.max() ?? 0
        #expect(latest < deadline + 0.3 * slowRunScale, "the latest task ended after \(latest) s")
        // Its caller resumed when a thread was free: before the server's 3 s answer, however busy this machine.
        #expect((ends.map(\.0).max() ?? 0) < 3)
        #expect(pool.activeTasks.isEmpty)
    }
}
