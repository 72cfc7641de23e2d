import Foundation
import InMemoryTracing
import NetworkCore
import NetworkCoreTesting
import NetworkCoreTracing
import Testing
import Tracing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("swift-distributed-tracing: a span per task, a client span per attempt, the context in the request")
struct TracingIntegrationTests {
    @Test(
        "a task retried once has one task span and two attempt spans, children of the caller's span, with HTTP attributes; each request carries its attempt's context"
    )
    func retriedTask() async throws {
        let attempts = Counter()
        let server = try MockServer { _ in
            attempts.increment() == 1
                ? MockResponse(statusCode: 503, body: Data("{}".utf8)) : MockResponse(body: Data(#"{"ok":true}"#.utf8))
        }
        defer { server.stop() }
        let tracer = InMemoryTracer()
        let tracing = RequestTracing(tracer: tracer)
        let pool = TaskPool(
            configuration: TaskPool.Configuration(interceptors: [RetryPolicy(baseDelay: 0.01)]).traced(by: tracing))
        let caller = tracer.startSpan("handler", context: .topLevel)
        try await ServiceContext.withValue(caller.context) {
            _ = try await pool.send(
                TestEndpoint(baseURL: server.baseURL, path: "/items", headers: ["X-Api-Key": "sekrit"]), id: "items")
        }
        caller.end()
        let spans = tracer.finishedSpans
        let task = try #require(spans.first { $0.kind == .internal && $0.operationName == "GET" })
        let clients = spans.filter { $0.kind == .client }
        #expect(clients.count == 2)
        #expect(task.parentSpanID != nil)
        #expect(task.parentSpanID == caller.context.inMemorySpanContext?.spanID)
        #expect(task.traceID == caller.context.inMemorySpanContext?.traceID)
        #expect(clients.allSatisfy { $0.parentSpanID == task.spanID && $0.traceID == task.traceID })
        #expect(task.attributes["networkcore.task.id"]?.toSpanAttribute() == "items")
        #expect(task.attributes["networkcore.service"]?.toSpanAttribute() == "TestEndpoint")
        #expect(task.attributes["networkcore.attempts"]?.toSpanAttribute() == 2)
        #expect(task.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(task.status == nil)
        // In the order the attempts were sent (spans are kept as they end, and two ends may land either way).
        let first = try #require(clients.first { $0.attributes["http.request.resend_count"] == nil })
        let second = try #require(clients.first { $0.attributes["http.request.resend_count"] != nil })
        #expect(first.attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(first.attributes["server.address"]?.toSpanAttribute() == "127.0.0.1")
        #expect(first.attributes["http.response.status_code"]?.toSpanAttribute() == 503)
        #expect(first.attributes["error.type"]?.toSpanAttribute() == "503")
        #expect(first.status?.code == .error)
        #expect(first.attributes["http.request.resend_count"] == nil)
        #expect(second.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
        #expect(second.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        // Each request carried its own attempt's ids; the key did not reach a span.
        let sent = server.requests.map { $0.value(forHTTPHeaderField: InMemoryTracer.spanIDKey) }
        #expect(sent == [first.spanID, second.spanID])
        #expect(!"\(spans.map(\.attributes))".contains("sekrit"))
        #expect(tracing.openTasks == 0)
    }

    @Test("a failed task and a cancelled one end their spans with error.type; nothing stays open")
    func failedAndCancelled() async throws {
        let server = try MockServer { request in
            request.url?.path == "/slow"
                ? MockResponse(StubResponse(body: Data("{}".utf8)), faults: [.delayHead(5)])
                : MockResponse(StubResponse(statusCode: 404, body: Data("{}".utf8)))
        }
        defer { server.kill() }
        let tracer = InMemoryTracer()
        let tracing = RequestTracing(tracer: tracer)
        let logger = InMemoryLogger()
        let pool = TaskPool(configuration: TaskPool.Configuration(logger: logger).traced(by: tracing))
        await #expect(throws: NetworkError.self) {
            try await pool.send(TestEndpoint(baseURL: server.baseURL, path: "/missing"), id: "missing")
        }
        let slow = Task { try await pool.send(TestEndpoint(baseURL: server.baseURL, path: "/slow"), id: "slow") }
        #expect(await eventually { tracing.openTasks == 1 })
        pool.cancel(id: "slow")
        _ = await slow.result
        let tasks = tracer.finishedSpans.filter { $0.kind == .internal }
        #expect(tasks.count == 2)
        let types = tasks.compactMap { $0.attributes["error.type"]?.toSpanAttribute() }
        #expect(types.count == 2)
        #expect(types.contains("404"))
        #expect(types.contains("cancelled"))
        #expect(tracer.finishedSpans.filter { $0.kind == .client }.count == 2)
        #expect(tracing.openTasks == 0)
        #expect(logger.count(.failed) == 1)  // the logger given before `traced` still gets every event
        #expect(logger.count(.cancelled) == 1)
    }
}
