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

    /// The orders in which a retried task's adaptations and events can reach the tracing: the pool logs the
    /// retry on the thread that decided it, and after a short back-off the next attempt can be adapted first.
    enum RetryOrder: String, CaseIterable, CustomTestStringConvertible {
        case retryThenAdapt, adaptThenRetry, endThenRetry
        var testDescription: String { rawValue }
    }

    @Test(
        "each attempt's span ends with its own status, in every order of the retry's event and the next adaptation",
        arguments: RetryOrder.allCases)
    func retryOrders(order: RetryOrder) async throws {
        let tracer = InMemoryTracer()
        let tracing = RequestTracing(tracer: tracer)
        let request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:9/items")))
        func adapt(_ attempt: Int) async throws {
            let context = AttemptContext(taskID: "items", attempt: attempt, method: .get)
            _ = try await tracing.adapt(request, context: context)
        }
        func log(_ kind: TaskEvent.Kind, attempt: Int, status: Int) {
            tracing.log(
                TaskEvent(
                    kind: kind, taskID: "items", method: "GET", url: "http://127.0.0.1:9/items", attempt: attempt,
                    statusCode: status))
        }
        try await adapt(1)
        if order == .retryThenAdapt { log(.retrying, attempt: 2, status: 503) }
        try await adapt(2)
        if order == .adaptThenRetry { log(.retrying, attempt: 2, status: 503) }
        log(.finished, attempt: 2, status: 200)
        if order == .endThenRetry { log(.retrying, attempt: 2, status: 503) }

        let clients = tracer.finishedSpans.filter { $0.kind == .client }
        #expect(clients.count == 2)
        let first = try #require(clients.first { $0.attributes["http.request.resend_count"] == nil })
        let second = try #require(clients.first { $0.attributes["http.request.resend_count"] != nil })
        // The retry's event came after the task ended only in the last order: the first span ended then,
        // without the status it never learnt.
        let firstStatus = first.attributes["http.response.status_code"]?.toSpanAttribute()
        #expect(firstStatus == (order == .endThenRetry ? nil : 503))
        #expect(second.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(second.status == nil)
        let task = try #require(tracer.finishedSpans.first { $0.kind == .internal })
        #expect(task.attributes["networkcore.attempts"]?.toSpanAttribute() == 2)
        #expect(tracer.finishedSpans.count == 3)
        #expect(tracing.openTasks == 0)
    }

    @Test("an attempt adapted again (a credential renewed meanwhile) ends the span of the request that never went out")
    func readaptedAttempt() async throws {
        let tracer = InMemoryTracer()
        let tracing = RequestTracing(tracer: tracer)
        let request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:9/items")))
        var context = AttemptContext(taskID: "items", attempt: 1, method: .get)
        let unsent = try await tracing.adapt(request, context: context)
        context.adaptation = 2
        let sent = try await tracing.adapt(request, context: context)
        #expect(tracer.finishedSpans.filter { $0.kind == .client }.count == 1)
        tracing.log(
            TaskEvent(
                kind: .finished, taskID: "items", method: "GET", url: "http://127.0.0.1:9/items", attempt: 1,
                statusCode: 200))
        let clients = tracer.finishedSpans.filter { $0.kind == .client }
        #expect(clients.count == 2)
        let spanIDs = [unsent, sent].map { $0.value(forHTTPHeaderField: InMemoryTracer.spanIDKey) }
        #expect(clients.map(\.spanID) == spanIDs)
        #expect(clients.map { $0.attributes["http.response.status_code"]?.toSpanAttribute() } == [nil, 200])
        let task = try #require(tracer.finishedSpans.first { $0.kind == .internal })
        #expect(task.attributes["networkcore.attempts"]?.toSpanAttribute() == 1)
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
