import Foundation
import NetworkCore
import NetworkCoreTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// NetworkCoreTesting's `MockServer` as a user's tests meet it: each answer kind and each fault, through a pool
/// over each transport.
@Suite("MockServer: answers, faults and recorded requests, through each transport")
struct MockServerTests {
    struct Movie: Codable, Equatable, Sendable { let id: Int; let title: String }

    @Test(
        "answers come from failNext, the queue, routes, the handler, then a 404 naming the request",
        arguments: TransportUnderTest.all)
    func answerOrder(_ transport: TransportUnderTest) async throws {
        let server = try MockServer { request in .text("handler \(request.path)") }
        defer { server.stop() }
        server.enqueue(.json(#"{"id": 1, "title": "queued"}"#), times: 2)
        try server.route(.get, "/movie/:id") { request in
            (try? .json(encoding: Movie(id: Int(request.parameters["id"]!) ?? -1, title: "routed"))) ?? .status(500)
        }
        let pool = transport.pool()
        let get = { (path: String) in try await pool.send(TestEndpoint(baseURL: server.baseURL, path: path)) }
        let first = try await get("/movie/7").decoded(Movie.self)
        let second = try await get("/anything").decoded(Movie.self)
        let routed = try await get("/movie/7").decoded(Movie.self)
        let handled = try await get("/other")
        #expect([first.title, second.title, routed.title] == ["queued", "queued", "routed"])
        #expect(routed.id == 7 && handled.text == "handler /other")
        #expect(server.count(.get, "/movie/:id") == 2 && server.count() == 4 && server.queuedResponses == 0)

        let bare = try MockServer()
        defer { bare.stop() }
        do {
            _ = try await pool.send(TestEndpoint(baseURL: bare.baseURL, path: "/missing"))
            Issue.record("an unanswered request succeeded")
        } catch {
            #expect(error.response?.statusCode == 404)
            #expect(error.serverError?.message == "MockServer has no answer for GET /missing")
        }
        #expect(bare.unansweredRequests.map(\.path) == ["/missing"])
    }

    @Test(
        "takeRequest gives each request once, in order, with method, path, query, headers and body",
        arguments: TransportUnderTest.all)
    func takeRequest(_ transport: TransportUnderTest) async throws {
        try await withMockServer { server in
            try server.route(nil, "*", respond: .status(204))
            let pool = transport.pool()
            var post = TestEndpoint(baseURL: server.baseURL, path: "/v1/items")
            post.method = .post
            post.task = .jsonEncodable(Movie(id: 3, title: "Up"))
            post.headers = ["Authorization": "Bearer abc"]
            var get = TestEndpoint(baseURL: server.baseURL, path: "/v1/items")
            get.task = .urlParameters(["page": 2, "q": "a b"])
            _ = try await pool.send(get)
            _ = try await pool.send(post)
            let taken = try await server.takeRequest()
            let sent = try await server.takeRequest()
            #expect(taken.matches(.get, "/v1/items") && taken.query == ["page": "2", "q": "a b"] && taken.index == 0)
            #expect(sent.matches(.post, "/v1/items") && sent.hasHeader("authorization", "Bearer abc"))
            #expect(try sent.decodeBody(as: Movie.self) == Movie(id: 3, title: "Up"))
            #expect(!sent.hasHeader("Authorization", "Bearer other") && !taken.hasQuery("page", "3"))
            await #expect(throws: MockServerError.noRequest(within: 0.05)) {
                try await server.takeRequest(timeout: 0.05)
            }
        }
    }

    @Test(
        "a JSON, text, file, chunked and huge-header answer each arrive whole",
        arguments: TransportUnderTest.all)
    func answerKinds(_ transport: TransportUnderTest) async throws {
        let server = try MockServer()
        defer { server.stop() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mock-\(UUID()).bin")
        let bytes = Data((0..<50_000).map { UInt8($0 % 251) })
        try bytes.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        server.enqueue(
            try .json(encoding: Movie(id: 1, title: "Heat")), .text("plain", statusCode: 201), try .file(file),
            MockResponse.data(bytes).chunked(pieceSize: 1_000),
            MockResponse.text("padded").with(.hugeHeader(bytes: 8_000)))
        let pool = transport.pool()
        let get = { try await pool.send(TestEndpoint(baseURL: server.baseURL, path: "/x")) }
        #expect(try await get().decoded(Movie.self) == Movie(id: 1, title: "Heat"))
        let text = try await get()
        #expect(text.statusCode == 201 && text.text == "plain")
        #expect(try await get().body == bytes)
        #expect(try await get().body == bytes)
        let padded = try await get()
        #expect(padded.text == "padded" && padded.headers["X-Mock-Padding"]?.count == 8_000)
        #expect(throws: MockServerError.self) { try MockResponse.file(file.appendingPathExtension("gone")) }
        #expect(throws: MockServerError.invalidPattern("movie")) {
            try server.route(.get, "movie", respond: .status(200))
        }
    }

    @Test(
        "reset, close before the answer, a cut body and a malformed head each fail typed; failNext then lets a retry through",
        arguments: TransportUnderTest.all)
    func connectionFaults(_ transport: TransportUnderTest) async throws {
        let server = try MockServer { _ in .json(#"{"id": 2, "title": "ok"}"#) }
        defer { server.stop() }
        let pool = transport.pool()
        let faults: [MockFault] = [
            .reset, .closeBeforeAnswer, .cut(afterBodyBytes: 5), .cutMidBody, .malformedHead,
            .hugeHeader(bytes: 1 << 20),
        ]
        for fault in faults {
            server.failNext(with: fault)
            do {
                _ = try await pool.send(TestEndpoint(baseURL: server.baseURL, path: "/f"))
                Issue.record("\(fault) was answered")
            } catch {
                guard case .transport = error else { Issue.record("\(fault): \(error)"); continue }
            }
        }
        server.failNext(2, with: .reset)
        let retrying = transport.pool(.init(requestTimeout: 15, interceptors: [RetryPolicy(baseDelay: 0.01)]))
        #expect(try await retrying.send(TestEndpoint(baseURL: server.baseURL, path: "/r")).decoded(Movie.self).id == 2)
        #expect(server.count(nil, "/r") == 3 && server.count() == faults.count + 3)
    }

    @Test(
        "a head held past the timeout and an answer that never comes time out; the server sees the client close",
        arguments: TransportUnderTest.all)
    func timeouts(_ transport: TransportUnderTest) async throws {
        let closed = Latch()
        let server = try MockServer()
        defer { server.kill() }
        // Routed by path, not queued: on a busy machine a request can time out before it reaches the server,
        // and a queue would then give the next request the answer meant for it.
        try server.route(.get, "/slow", respond: MockResponse.text("late").with(.delayHead(5)))
        try server.route(.get, "/held", respond: .fault(.holdUntilClientCloses(then: { closed.open() })))
        let pool = transport.pool(.init(requestTimeout: 0.3))
        func timesOut(_ path: String) async {
            do {
                _ = try await pool.send(TestEndpoint(baseURL: server.baseURL, path: path))
                Issue.record("a held answer arrived")
            } catch {
                #expect(error.isTimeout, "\(error)")
            }
        }
        await timesOut("/slow")
        // The server sees the close only of a request it received: sent again (at most twice more) if the
        // timeout came first.
        for _ in 0..<3 where server.count(.get, "/held") == 0 { await timesOut("/held") }
        #expect(server.count(.get, "/held") >= 1)
        #expect(await closed.wait(upTo: 30))
    }

    @Test(
        "a sub-second request timeout is not cut short: a head 0.2 s late arrives within 0.9 s",
        arguments: TransportUnderTest.all)
    func subSecondTimeout(_ transport: TransportUnderTest) async throws {
        let server = try MockServer()
        defer { server.stop() }
        server.enqueue(MockResponse.text("late").with(.delayHead(0.2)))
        // Still under a second (a timeout cut to whole seconds would be 0), with room for a busy machine: at
        // 0.5 s, with the Integrations suites running side by side, NIOTransport's connection and the late
        // head together once took longer than the timeout.
        let response = try await transport.pool(.init(requestTimeout: 0.9)).send(
            TestEndpoint(baseURL: server.baseURL, path: "/late"))
        #expect(response.text == "late")
    }

    @Test(
        "a throttled body paused after its first kilobyte arrives whole, its first piece before the rest; events drip in order",
        arguments: TransportUnderTest.all)
    func pacedBodies(_ transport: TransportUnderTest) async throws {
        let server = try MockServer()
        defer { server.kill() }
        let gate = MockGate()
        defer { gate.open() }
        let body = Data((0..<6_000).map { UInt8($0 % 256) })
        server.enqueue(
            MockResponse.data(body).with(.throttle(bytesPerSecond: 50_000)).with(
                .pause(afterBodyBytes: 1_000, until: gate)),
            .serverSentEvents(["one", "two", "three"], interval: 0.1))
        let pool = transport.pool()
        var received = Data()
        for try await chunk in try await pool.stream(TestEndpoint(baseURL: server.baseURL, path: "/t")) {
            // The server holds the rest until the gate opens: a first piece of more than 1,000 bytes is a fault.
            if received.isEmpty {
                #expect((1...1_000).contains(chunk.count))
                gate.open()
            }
            received.append(chunk)
        }
        #expect(received == body)
        var events: [String] = []
        for try await event in try await pool.events(TestEndpoint(baseURL: server.baseURL, path: "/e")) {
            events.append(event.data)
        }
        #expect(events == ["one", "two", "three"])
    }

    @Test("a redirect chain is followed to its end, each hop a request", arguments: TransportUnderTest.all)
    func redirectChain(_ transport: TransportUnderTest) async throws {
        let server = try MockServer()
        defer { server.stop() }
        try server.redirectChain(from: "/start", hops: 3, to: "/end")
        try server.route(.get, "/end", respond: .text("arrived"))
        let response = try await transport.pool().send(TestEndpoint(baseURL: server.baseURL, path: "/start"))
        #expect(response.text == "arrived")
        #expect(server.requests.map(\.path) == ["/start", "/start/1", "/start/2", "/end"])
    }

    @Test(
        "traffic recorded into a HAR archive is served again by a second server, without its secrets",
        arguments: TransportUnderTest.all)
    func harReplay(_ transport: TransportUnderTest) async throws {
        let live = try MockServer { request in .json(#"{"id": 9, "title": "\#(request.query["q"] ?? "")"}"#) }
        defer { live.stop() }
        let recorder = HARRecorder()
        let recording = transport.pool(recordingInto: recorder)
        var search = TestEndpoint(baseURL: live.baseURL, path: "/search")
        search.task = .urlParameters(["q": "alien", "api_key": "SECRET"])
        _ = try await recording.send(search)
        live.failNext(with: .reset)
        let broken = TestEndpoint(baseURL: live.baseURL, path: "/broken")
        await #expect(throws: NetworkError.self) { try await recording.send(broken) }
        let archive = recorder.har
        #expect(archive.log.entries.map(\.response.status) == [200, 0])
        #expect(!String(decoding: try JSONEncoder().encode(archive), as: UTF8.self).contains("SECRET"))

        let replay = try MockServer()
        defer { replay.stop() }
        try replay.replay(archive)
        let pool = transport.pool()
        search.baseURL = replay.baseURL
        search.task = .urlParameters(["q": "alien", "api_key": "OTHER"])
        let movie = try await pool.send(search)
        #expect(try movie.decoded(Movie.self) == Movie(id: 9, title: "alien"))
        do {
            search.task = .urlParameters(["q": "other"])
            _ = try await pool.send(search)
            Issue.record("a request the archive lacks was answered")
        } catch {
            #expect(error.response?.statusCode == 404)
        }
        // The request recorded as failed fails again, at the network.
        do {
            _ = try await pool.send(TestEndpoint(baseURL: replay.baseURL, path: "/broken"))
            Issue.record("a request recorded as failed was answered")
        } catch {
            guard case .transport = error else { Issue.record("\(error)"); return }
        }
    }
}

extension Response {
    /// The body decoded from JSON.
    fileprivate func decoded<Value: Decodable>(_ type: Value.Type) throws -> Value {
        try JSONDecoder().decode(type, from: body)
    }

    /// The body as UTF-8 text.
    fileprivate var text: String { String(decoding: body, as: UTF8.self) }
}
