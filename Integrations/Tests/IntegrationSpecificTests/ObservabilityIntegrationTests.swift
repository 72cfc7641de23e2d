import Foundation
import InMemoryLogging
import Logging
import MetricsTestKit
import NetworkCore
import NetworkCoreLogging
import NetworkCoreMetrics
import NetworkCoreTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A service's endpoints against the loopback server, for events with a service name.
enum Shelf: Endpoint {
    case book(Int, key: String)
    case missing

    var baseURL: String { "http://127.0.0.1:1" }  // replaced by `on(_:)`
    var path: String {
        switch self {
        case .book(let id, _): "books/\(id)"
        case .missing: "missing"
        }
    }
    var task: HTTPTask {
        if case .book(_, let key) = self { return .urlParameters(["api_key": key]) }
        return .plain
    }
    var service: String { "ShelfService" }
}

/// `endpoint` sent to `server` instead of its own base URL.
struct OnServer<Base: Endpoint>: Endpoint {
    let base: Base
    let baseURL: String
    var path: String { base.path }
    var task: HTTPTask { base.task }
    var service: String { base.service }
}

@Suite("swift-log and swift-metrics: what a pool's tasks write and count")
struct ObservabilityIntegrationTests {
    static func server() throws -> MockServer {
        try MockServer { request in
            request.url?.path == "/missing"
                ? MockResponse(statusCode: 404, body: Data(#"{"message":"no such shelf"}"#.utf8))
                : MockResponse(body: Data(#"{"title":"Dune"}"#.utf8))
        }
    }

    @Test("each event is a record at its level with structured metadata; the API key never reaches the log")
    func swiftLog() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "test") { _ in handler }
        logger.logLevel = .debug
        let pool = TaskPool(configuration: .init(logger: SwiftLogNetworkLogger(logger: logger)))
        _ = try await pool.send(OnServer(base: Shelf.book(7, key: "sekrit-key"), baseURL: server.baseURL), id: "book-7")
        await #expect(throws: NetworkError.self) {
            try await pool.send(OnServer(base: Shelf.missing, baseURL: server.baseURL), id: "missing")
        }
        // A task's last event is logged as it leaves the table, which may be just after its caller has it.
        #expect(await eventually { handler.entries.count == 4 })
        let entries = handler.entries
        #expect(entries.map(\.level) == [.debug, .info, .debug, .error])
        #expect(entries.map { $0.metadata["task.event"]?.description } == ["started", "finished", "started", "failed"])
        let finished = try #require(entries.dropFirst().first)
        #expect(finished.metadata["task.id"] == "book-7")
        #expect(finished.metadata["task.service"] == "ShelfService")
        #expect(finished.metadata["http.method"] == "GET")
        #expect(finished.metadata["http.status"] == "200")
        #expect(finished.metadata["task.attempt"] == "1")
        #expect(finished.metadata["http.response.bytes"] == "16")
        #expect(finished.metadata["task.duration_ms"] != nil)
        let failed = try #require(entries.last)
        #expect(failed.metadata["http.status"] == "404")
        #expect(failed.metadata["error"] != nil)
        let everything = entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        #expect(!everything.contains("sekrit-key"))
        #expect(everything.contains("books/7"))

        // Below the logger's level, nothing is written.
        let quiet = InMemoryLogHandler()
        let warnings = Logger(label: "quiet") { _ in quiet }  // InMemoryLogHandler's level: info
        var warningsOnly = warnings
        warningsOnly.logLevel = .warning
        let calm = TaskPool(configuration: .init(logger: SwiftLogNetworkLogger(logger: warningsOnly)))
        _ = try await calm.send(OnServer(base: Shelf.book(8, key: "k"), baseURL: server.baseURL))
        #expect(quiet.entries.isEmpty)
    }

    @Test("a stall is a warning record with the task's phase and how long nothing moved")
    func swiftLogStall() async throws {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "test") { _ in handler }
        logger.logLevel = .warning
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport(delay: 1.5) { _, _ in .json("{}") },
                logger: SwiftLogNetworkLogger(logger: logger), stallThreshold: 0.2))
        _ = try await pool.send(OnServer(base: Shelf.book(9, key: "k"), baseURL: "https://stub.example"), id: "slow")
        let stall = try #require(handler.entries.first)
        #expect(handler.entries.count == 1)
        #expect(stall.level == .warning)
        #expect(stall.metadata["task.event"] == "stalled")
        #expect(stall.metadata["task.phase"] == "sending")
        let silence = try #require(stall.metadata["task.silence_ms"].flatMap { Int($0.description) })
        #expect(silence >= 200 && silence < 1_500, "\(silence) ms")
    }

    @Test(
        "requests, durations, bytes, failures by kind, retries and tasks in flight are counted by service, method and status class"
    )
    func swiftMetrics() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let metrics = TestMetrics()
        let recorder = NetworkMetrics(factory: metrics)
        let logs = InMemoryLogger()
        let pool = TaskPool(
            configuration: .init(
                logger: CombinedLogger([recorder, logs]),
                interceptors: [RetryPolicy(maximumAttempts: 2, baseDelay: 0.01, statusCodes: [404])]))
        for id in 1...3 { _ = try await pool.send(OnServer(base: Shelf.book(id, key: "k"), baseURL: server.baseURL)) }
        await #expect(throws: NetworkError.self) {
            try await pool.send(OnServer(base: Shelf.missing, baseURL: server.baseURL))
        }
        // The last task's end is logged (to `recorder` first) as it leaves the table, maybe just after its caller has it.
        #expect(await eventually { logs.count(.failed) == 1 })
        let service = ("service", "ShelfService")
        let method = ("method", "GET")
        let ok = try metrics.expectCounter(
            "networkcore_requests_total", [service, method, ("status_class", "2xx"), ("outcome", "finished")])
        #expect(ok.totalValue == 3)
        let notFound = try metrics.expectCounter(
            "networkcore_requests_total", [service, method, ("status_class", "4xx"), ("outcome", "failed")])
        #expect(notFound.totalValue == 1)
        let durations = try metrics.expectTimer(
            "networkcore_request_duration", [service, method, ("status_class", "2xx"), ("outcome", "finished")])
        #expect(durations.values.count == 3)
        #expect(durations.values.allSatisfy { $0 > 0 })
        #expect(try metrics.expectCounter("networkcore_response_bytes_total", [service, method]).totalValue > 48)
        #expect(
            try metrics.expectCounter("networkcore_failures_total", [service, method, ("error", "http_status")])
                .totalValue == 1)
        #expect(try metrics.expectCounter("networkcore_retries_total", [service, method]).totalValue == 1)
        let inFlight = try metrics.expectMeter("networkcore_tasks_in_flight", [service])
        #expect(inFlight.values.max() == 1)
        #expect(inFlight.lastValue == 0)
        // The same events reached the other logger.
        #expect(logs.count(.finished) == 3)
        #expect(logs.count(.retrying) == 1)
    }

    @Test("tasks cancelled in flight end the in-flight count at zero, counted as cancelled with no status")
    func cancelledInFlight() async throws {
        let server = try MockServer { _ in MockResponse(StubResponse(body: Data("{}".utf8)), faults: [.delayHead(5)]) }
        defer { server.kill() }
        let metrics = TestMetrics()
        let pool = TaskPool(configuration: .init(logger: NetworkMetrics(prefix: "shelf", factory: metrics)))
        let sends = (0..<5).map { index in
            Task {
                try await pool.send(
                    OnServer(base: Shelf.book(index, key: "k"), baseURL: server.baseURL), id: "s\(index)")
            }
        }
        let inFlight = try await {
            for _ in 0..<400 {
                if let meter = try? metrics.expectMeter("shelf_tasks_in_flight", [("service", "ShelfService")]),
                    meter.lastValue == 5
                {
                    return meter
                }
                try await Task.sleep(nanoseconds: 5_000_000)
            }
            return try metrics.expectMeter("shelf_tasks_in_flight", [("service", "ShelfService")])
        }()
        #expect(inFlight.lastValue == 5)
        for index in 0..<5 { pool.cancel(id: "s\(index)") }
        for send in sends { _ = await send.result }
        #expect(inFlight.lastValue == 0)
        let cancelled = try metrics.expectCounter(
            "shelf_requests_total",
            [("service", "ShelfService"), ("method", "GET"), ("status_class", "none"), ("outcome", "cancelled")])
        #expect(cancelled.totalValue == 5)
    }

    @Test("tasks waiting in a paused pool count as queued, not in flight; a cancel and a resume bring both to zero")
    func queuedTasks() async throws {
        let server = try MockServer { _ in MockResponse(StubResponse(body: Data("{}".utf8))) }
        defer { server.kill() }
        let metrics = TestMetrics()
        let pool = TaskPool(configuration: .init(logger: NetworkMetrics(prefix: "shelf", factory: metrics)))
        pool.pause()
        let sends = (0..<3).map { index in
            Task {
                try await pool.send(
                    OnServer(base: Shelf.book(index, key: "k"), baseURL: server.baseURL), id: "q\(index)")
            }
        }
        var queued = try? metrics.expectMeter("shelf_tasks_queued", [("service", "ShelfService")])
        for _ in 0..<400 where queued?.lastValue != 3 {
            try await Task.sleep(nanoseconds: 5_000_000)
            queued = try? metrics.expectMeter("shelf_tasks_queued", [("service", "ShelfService")])
        }
        #expect(queued?.lastValue == 3)
        #expect(pool.cancel(id: "q1"))
        #expect(queued?.lastValue == 2)
        pool.resume()
        for send in sends { _ = await send.result }
        #expect(queued?.lastValue == 0)
        let inFlight = try metrics.expectMeter("shelf_tasks_in_flight", [("service", "ShelfService")])
        #expect(inFlight.lastValue == 0)
        #expect(server.requests.count == 2)
    }
}
