import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Pool inspector: what a live view sees", .serialized)
struct InspectorTests {
    static let apiKey = "k3y-SECRET-4pi"
    static let token = "t0ken-SECRET-bearer"
    static let password = "pa55-SECRET-word"

    /// A login-like request carrying all three secrets: the key in the query, the token in a header,
    /// the password in a form body.
    static var secretEndpoint: TestEndpoint {
        TestEndpoint(
            path: "login", method: .post,
            task: .parameters(
                url: ["api_key": apiKey, "page": "1"], body: ["username": "ann", "password": password],
                bodyEncoder: FormBodyEncoder()),
            headers: ["Authorization": "Bearer \(token)"])
    }

    /// Answers with what it was sent, as httpbin's `/anything` does: an echo of every secret.
    static let echo: StubTransport.Responder = { request, _ in
        let body = String(decoding: request.httpBody ?? Data(), as: UTF8.self)
        let echoed: [String: Any] = [
            "url": request.url?.absoluteString ?? "", "form": body,
            "headers": request.allHTTPHeaderFields ?? [:], "token": token,
        ]
        let data = try JSONSerialization.data(withJSONObject: echoed, options: [.sortedKeys])
        return StubResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: data)
    }

    @Test("ended tasks are kept newest first, up to the history limit; every end is counted")
    func boundedHistory() async throws {
        let inspector = PoolInspector(historyLimit: 3)
        let pool = TaskPool(
            configuration: .init(transport: StubTransport { _, _ in .json("{}") }, inspector: inspector))
        for index in 1...5 { _ = try await pool.send(TestEndpoint(path: "items/\(index)"), id: "t\(index)") }
        let inspection = inspector.inspection
        #expect(inspection.recent.map(\.id) == ["t5", "t4", "t3"])
        #expect(inspection.recent.allSatisfy { $0.state == .finished && $0.statusCode == 200 })
        #expect(inspection.endedCount == 5)
        #expect(inspection.active.isEmpty)
        #expect(inspector.task(id: "t1") == nil)
        #expect(inspector.task(id: "t4")?.url == "https://api.example.com/v1/items/4")
        #expect(inspector.changeCount == 10)  // started and finished, for each of the five
    }

    @Test("a task's protocol is the one its answer came in: shown while it runs and once it has ended")
    func protocolVersion() async throws {
        let inspector = PoolInspector()
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport, inspector: inspector))
        let ended = Latch()
        pool.send(TestEndpoint(path: "h2"), id: "h2") { _ in ended.open() }
        #expect(inspector.inspection.active.map(\.protocolVersion) == [nil])
        let events = try #require(transport.events(0))
        #expect(events.receive(head: ResponseHead(statusCode: 200, httpVersion: "HTTP/2.0", fields: [], url: nil)))
        #expect(inspector.inspection.active.map(\.protocolVersion) == ["HTTP/2.0"])
        events.finish()
        #expect(await ended.wait(upTo: 5))
        #expect(inspector.inspection.recent.map(\.protocolVersion) == ["HTTP/2.0"])
        #expect(inspector.task(id: "h2")?.protocolVersion == "HTTP/2.0")
    }

    @Test("running and waiting tasks are listed oldest first, with their state and place in the queue")
    func activeAndQueued() async throws {
        let inspector = PoolInspector()
        let transport = HoldingTransport()
        let pool = TaskPool(
            configuration: .init(transport: transport, maximumConcurrentTasks: 1, inspector: inspector))
        for id in ["a", "b", "c"] { pool.send(TestEndpoint(path: id), id: id) { _ in } }
        #expect(inspector.inspection.active.first?.phase == "sending")
        let active = inspector.inspection.active
        #expect(active.map(\.id) == ["a", "b", "c"])
        #expect(active.map(\.state) == [.running, .queued, .queued])
        #expect(active.map(\.queuePosition) == [nil, 1, 2])
        #expect(active[0].timings.started != nil)
        #expect(active[1].timings.started == nil)
        #expect(inspector.task(id: "b")?.details?.cURL.contains("https://api.example.com/v1/b") == true)
        #expect(inspector.cancel(id: "b"))
        #expect(!inspector.cancel(id: "nothing"))
        #expect(pool.cancelAll() == 2)
        let recent = inspector.inspection.recent
        #expect(Set(recent.map(\.id)) == ["a", "b", "c"])
        #expect(recent.allSatisfy { $0.state == .cancelled && $0.error != nil })
        #expect(inspector.inspection.active.isEmpty)
    }

    @Test("retries are marked on the task's timeline, with each attempt's timings")
    func retriesMarked() async throws {
        let script = Script.failing(2)
        let inspector = PoolInspector()
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { request, _ in script.respond(request) }, interceptors: [fastRetry()],
                inspector: inspector))
        _ = try await pool.send(TestEndpoint(), id: "r")
        let task = try #require(inspector.inspection.recent.first)
        #expect(task.state == .finished)
        #expect(task.attempts == 3)
        #expect(task.marks.map(\.kind) == [.retry, .retry])
        #expect(task.marks.map(\.attempt) == [1, 2])
        #expect(task.marks.allSatisfy { $0.detail.hasPrefix("503, retry in") })
        #expect(task.timings.attempts.map(\.statusCode) == [503, 503, 200])
        // Each mark falls after the attempt it ended began.
        for mark in task.marks { #expect(mark.at >= task.timings.attempts[mark.attempt - 1].start) }
    }

    @Test("no API key, bearer token or password in the inspection, the details or the HAR")
    func nothingSecret() async throws {
        let inspector = PoolInspector()
        let pool = TaskPool(configuration: .init(transport: StubTransport(responder: Self.echo), inspector: inspector))
        _ = try await pool.send(Self.secretEndpoint, id: "login")
        let failing = TaskPool(
            configuration: .init(
                transport: StubTransport.failing(with: URLError(.notConnectedToInternet)), inspector: inspector))
        _ = try? await failing.send(Self.secretEndpoint, id: "offline")

        let details = try #require(inspector.task(id: "login")?.details)
        #expect(details.requestHeaders.contains(InspectedTask.Header(name: "Authorization", value: "<redacted>")))
        #expect(
            details.requestBody == "password=<redacted>&username=ann"
                || details.requestBody == "username=ann&password=<redacted>")
        #expect(details.responseBody?.contains("ann") == true)
        #expect(details.cURL.contains("api_key=<redacted>"))
        let encoder = JSONEncoder()
        let surfaces = [
            try encoder.encode(inspector.inspection), try encoder.encode(inspector.task(id: "login")),
            try encoder.encode(inspector.task(id: "offline")), try encoder.encode(inspector.har),
        ].map { String(decoding: $0, as: UTF8.self) }
        for text in surfaces {
            for secret in [Self.apiKey, Self.token, Self.password] { #expect(!text.contains(secret)) }
        }
        #expect(inspector.har.log.entries.count == 2)
        #expect(inspector.inspection.recent.map(\.state) == [.failed, .finished])
    }

    @Test("a body over the preview limit: JSON is withheld, text is cut, the size is kept")
    func previews() async throws {
        let inspector = PoolInspector(bodyPreviewLimit: 16)
        let json = #"{"results": [1, 2, 3, 4, 5, 6, 7, 8, 9]}"#
        let text = String(repeating: "line of text\n", count: 4)
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { request, _ in
                    request.url?.path.hasSuffix("json") == true
                        ? .json(json) : StubResponse(headers: ["Content-Type": "text/plain"], body: Data(text.utf8))
                }, inspector: inspector))
        _ = try await pool.send(TestEndpoint(path: "json"), id: "json")
        _ = try await pool.send(TestEndpoint(path: "text"), id: "text")
        let jsonDetails = try #require(inspector.task(id: "json")?.details)
        #expect(jsonDetails.responseBodySize == json.utf8.count)
        #expect(jsonDetails.responseBody?.hasPrefix("<\(json.utf8.count) bytes, not shown") == true)
        let textDetails = try #require(inspector.task(id: "text")?.details)
        #expect(textDetails.responseBody == "line of text\nlin… <\(text.utf8.count - 16) more bytes>")
        // The HAR records such bodies by their size.
        let sizes: [Int] = inspector.har.log.entries.map(\.response.content.size)
        #expect(sizes == [json.utf8.count, text.utf8.count])
    }

    @Test("the event stream gives each subscriber every event, and the pool's logger still gets them")
    func eventStream() async throws {
        let inspector = PoolInspector()
        let logger = InMemoryLogger()
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { _, _ in .json("{}") }, logger: logger, inspector: inspector))
        let first = inspector.events()
        let second = inspector.events()
        _ = try await pool.send(TestEndpoint(path: "one"), id: "one")
        _ = try await pool.send(TestEndpoint(path: "two"), id: "two")
        for stream in [first, second] {
            var seen: [String] = []
            for await event in stream {
                seen.append("\(event.kind) \(event.taskID)")
                if seen.count == 4 { break }
            }
            #expect(seen == ["started one", "finished one", "started two", "finished two"])
        }
        #expect(logger.events.count == 4)
        let third = inspector.events(bufferingNewest: 1)
        _ = try await pool.send(TestEndpoint(path: "three"), id: "three")
        var iterator = third.makeAsyncIterator()
        #expect(await iterator.next()?.kind == .finished)  // the older "started" was dropped
    }

    @Test("an inspector does not keep its pools alive, and watches several")
    func severalPools() async throws {
        let inspector = PoolInspector()
        var first: TaskPool? = TaskPool(configuration: .init(transport: HoldingTransport(), inspector: inspector))
        let second = TaskPool(configuration: .init(transport: HoldingTransport(), inspector: inspector))
        first?.send(TestEndpoint(path: "a"), id: "a") { _ in }
        second.send(TestEndpoint(path: "b"), id: "b") { _ in }
        #expect(inspector.inspection.active.count == 2)
        #expect(inspector.cancel(id: "a"))
        #expect(inspector.inspection.active.map(\.id) == ["b"])
        // Its task has ended and its transfer let go: nothing but `first` held the pool.
        weak let released = first
        first = nil
        #expect(released == nil)
        #expect(inspector.cancel(id: "b"))
    }

    @Test("an id that came back: the newest is found by id, an older one by when it was queued")
    func reusedIDs() async throws {
        let inspector = PoolInspector()
        let pool = TaskPool(
            configuration: .init(transport: StubTransport { _, _ in .json("{}") }, inspector: inspector))
        _ = try await pool.send(TestEndpoint(path: "first"), id: "same")
        // Queued at least a millisecond later: the page matches a queued date to the millisecond.
        try await Task.sleep(nanoseconds: 5_000_000)
        _ = try await pool.send(TestEndpoint(path: "second"), id: "same")
        let kept = inspector.inspection.recent
        #expect(kept.map(\.url) == ["https://api.example.com/v1/second", "https://api.example.com/v1/first"])
        #expect(inspector.task(id: "same")?.url == "https://api.example.com/v1/second")
        let older = try #require(kept.last)
        #expect(inspector.task(id: "same", queuedAt: older.timings.queuedAt)?.url == older.url)
        #expect(inspector.task(id: "same", queuedAt: older.timings.queuedAt.addingTimeInterval(-1)) == nil)
    }

    @Test("a credential renewal is marked with the retry it led to, and the token sent after it is redacted")
    func credentialRenewalMarked() async throws {
        let inspector = PoolInspector()
        let interceptor = AuthenticationInterceptor(
            authenticator: TokenAuthenticator(renew: { _ in "fresh-SECRET-token" }), credential: "stale-SECRET-token")
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { request, _ in
                    request.value(forHTTPHeaderField: "Authorization") == "Bearer fresh-SECRET-token"
                        ? .json("{}") : .json("{}", statusCode: 401)
                }, interceptors: [interceptor], inspector: inspector))
        _ = try await pool.send(TestEndpoint(), id: "needs-auth")
        let task = try #require(inspector.task(id: "needs-auth"))
        #expect(task.marks.map(\.kind) == [.credentialRefreshed, .retry])
        #expect(task.timings.attempts.map(\.statusCode) == [401, 200])
        #expect(
            task.details?.requestHeaders.contains(InspectedTask.Header(name: "Authorization", value: "<redacted>"))
                == true)
        let text = String(decoding: try JSONEncoder().encode(task), as: UTF8.self)
        #expect(!text.contains("SECRET"))
    }
}
