import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOPosix
import NetworkCoreNIOSupport
import NetworkCoreTesting
import Testing

@testable import NetworkCore
@testable import NetworkCoreAsyncHTTPClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("AsyncHTTPClientTransport: its defaults, redirects, bodies, errors and shutdown")
struct AsyncHTTPClientTransportTests {
    @Test(
        "the default configuration decodes compression, times a silent read out after 60 s and leaves retries to the pool"
    )
    func defaults() throws {
        let configuration = AsyncHTTPClientTransport.defaultConfiguration
        guard case .enabled = configuration.decompression else {
            Issue.record("decompression is off")
            return
        }
        #expect(configuration.timeout.read == .seconds(60))
        #expect(configuration.connectionPool.retryConnectionEstablishment == false)
    }

    @Test("a client configured to follow redirects still follows the task's policy: never means the 3xx")
    func redirectsFollowThePolicy() async throws {
        let server = try MockServer { request in
            request.url?.path == "/from"
                ? MockResponse(statusCode: 302, headers: ["Location": "/to"]) : MockResponse(body: Data("there".utf8))
        }
        defer { server.stop() }
        var configuration = AsyncHTTPClientTransport.defaultConfiguration
        configuration.redirectConfiguration = .follow(max: 5, allowCycles: false)
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        let never = TaskPool(configuration: .init(transport: transport, redirectPolicy: .never))
        await #expect {
            _ = try await never.send(TestEndpoint(baseURL: server.baseURL, path: "/from"))
        } throws: { error in
            (error as? NetworkError)?.statusCode == 302
        }
        #expect(server.requests.map { $0.url?.path } == ["/from"])
        let follow = TaskPool(configuration: .init(transport: transport))
        let response = try await follow.send(TestEndpoint(baseURL: server.baseURL, path: "/from"))
        #expect(response.body == Data("there".utf8))
        #expect(response.url?.path == "/to")
        try await transport.shutdown()
    }

    @Test("the transport answers a 307 with the 307; the pool follows it and sends the file body again")
    func redirectWithBodies() async throws {
        let server = try MockServer { request in
            request.url?.path == "/from"
                ? MockResponse(statusCode: 307, headers: ["Location": "/to"])
                : MockResponse(body: request.httpBody ?? Data())
        }
        defer { server.stop() }
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("body.bin")
        try alphabet(100_000).write(to: file)
        let transport = AsyncHTTPClientTransport()
        var request = URLRequest(url: URL(string: server.baseURL + "/from")!)
        request.httpMethod = "PUT"
        let (_, alone) = try await TransportEvents.collect(
            from: transport, request: request, body: .file(file), context: TransportContext(taskID: "redirect")
        ).get()
        #expect(alone.statusCode == 307)
        #expect(server.requests.map { $0.url?.path } == ["/from"])
        let pool = TaskPool(configuration: .init(transport: transport))
        let response = try await pool.send(
            TestEndpoint(baseURL: server.baseURL, path: "/from", method: .put, task: .file(file, contentType: "a/b")))
        #expect(response.statusCode == 200)
        #expect(response.body == alphabet(100_000))
        #expect(server.requests.map { $0.url?.path } == ["/from", "/from", "/to"])
        try await transport.shutdown()
    }

    @Test("a WebSocket is refused at once, by name, with the transport that opens them; nothing is left running")
    func refusesWebSockets() async throws {
        let transport = AsyncHTTPClientTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        var failure: NetworkError?
        do {
            _ = try await pool.webSocket(TestEndpoint(baseURL: "ws://127.0.0.1:9", path: "chat"))
        } catch {
            failure = error
        }
        guard case .transport(let underlying) = failure, let error = underlying as? WebSocketError else {
            Issue.record("the socket was not refused: \(String(describing: failure))")
            return
        }
        #expect(
            error
                == .unsupported(
                    transport: "AsyncHTTPClientTransport", reason: "AsyncHTTPClient has no WebSocket client"))
        #expect(error.description.contains("NIOTransport"))
        #expect(pool.activeTasks.isEmpty)
        try await transport.shutdown()
    }

    @Test(
        "a body over 256 KB, in memory or a file, is counted as sent piece by piece; one of 256 KB or less goes with its request, counted once when the answer comes"
    )
    func sentProgress() async throws {
        let server = try MockServer { request in MockResponse(body: Data("\(request.httpBody?.count ?? 0)".utf8)) }
        defer { server.stop() }
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let transport = AsyncHTTPClientTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        let small = AsyncHTTPClientTransport.smallBody
        for size in [1_000, small, small + 1, 1_000_000] {
            let file = scratch.file("body-\(size).bin")
            try alphabet(size).write(to: file)
            let tasks: [HTTPTask] = [
                .data(alphabet(size), contentType: "application/octet-stream"),
                .file(file, contentType: "application/octet-stream"),
            ]
            for task in tasks {
                let log = ProgressLog()
                let response = try await pool.upload(
                    TestEndpoint(baseURL: server.baseURL, path: "/up", method: .post, task: task)
                ) { log.append($0) }
                #expect(response.body == Data("\(size)".utf8))
                let sent = Array(Set(log.values.map(\.bytesSent).filter { $0 > 0 })).sorted()
                #expect(sent.last == size)
                // In one write (its end with it, see `smallBody`), the body is counted once. In pieces, each is
                // counted as the connection takes it; the handler, told the newest value when it falls behind,
                // may see only the end on a busy machine, so the pieces are counted below, where they are made.
                if size <= small { #expect(sent == [size], "\(size): \(sent)") }
                let isFile = if case .file = task { true } else { false }
                let body: RequestBody = isFile ? .file(file) : .data(alphabet(size))
                let (_, sentWhole) = try await AsyncHTTPClientTransport.body(of: body, counter: SentCounter { _ in })
                #expect(sentWhole == (size <= small ? size : nil))
                if size > small {
                    let totals = NIOLockedValueBox<[Int]>([])
                    let counter = SentCounter { total in totals.withLockedValue { $0.append(total) } }
                    if isFile {
                        for try await _ in FileChunks(file: file, length: size).counted(by: counter) {}
                    } else {
                        for try await _ in DataPieces(data: alphabet(size), pieceSize: small).counted(by: counter) {}
                    }
                    let counted = totals.withLockedValue { $0 }
                    #expect(counted.count > 1 && counted.last == size, "\(size): \(counted)")
                }
            }
        }
        try await transport.shutdown()
    }

    @Test(
        "a body of 256 KB or less, in memory or a file, goes in one write with its request (its end with it); a larger one, and a stream, go in pieces"
    )
    func oneWrite() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let small = AsyncHTTPClientTransport.smallBody
        let counted = Locked<[Int]>([])
        let counter = SentCounter { total in counted.withLock { $0.append(total) } }
        for size in [0, 1_000, small, small + 1, 1_000_000] {
            let file = scratch.file("body-\(size).bin")
            try alphabet(size).write(to: file)
            for body in [RequestBody.data(alphabet(size)), .file(file)] {
                let (sent, whole) = try await AsyncHTTPClientTransport.body(of: body, counter: counter)
                #expect(whole == (size <= small ? size : nil), "\(size) \(body.summary)")
                #expect((sent == nil) == (size == 0))
            }
        }
        let (chunks, feed) = AsyncThrowingStream<Data, any Error>.makeStream()
        feed.finish()
        #expect(
            try await AsyncHTTPClientTransport.body(of: .stream(chunks, length: 0), counter: counter).sentWhole == nil)
        #expect(try await AsyncHTTPClientTransport.body(of: .none, counter: counter).sentWhole == nil)
        #expect(counted.withLock { $0 }.isEmpty)  // nothing is counted until the connection takes it
    }

    @Test(
        "[::1] works over AsyncHTTPClient, with no fix to link (FoundationNetworking's host check is not in its path)")
    func ipv6() async throws {
        let server = try MockServer(port: 0, ipv6: true) { _ in MockResponse(.json(#"{"ok": true}"#)) }
        defer { server.stop() }
        let transport = AsyncHTTPClientTransport()
        let response = try await TaskPool(configuration: .init(transport: transport)).send(
            TestEndpoint(baseURL: server.baseURL, path: "x"))
        #expect(response.statusCode == 200)
        #expect(server.requests.count == 1)
        try await transport.shutdown()
    }

    @Test("a paused transfer holds the next read until it is resumed or cancelled; one not paused does not")
    func pauseGate() async throws {
        let loop = HTTPClient.defaultEventLoopGroup.any()
        let transfer = Transfer(
            events: TransportEvents(taskID: "t", receiver: DiscardingReceiver()), url: nil, headTimeout: 0)
        try await transfer.nextRead(on: loop).get()  // not paused: at once
        await transfer.waitWhilePaused(on: loop)  // the same, with no future made
        transfer.pauseReceiving()
        let held = transfer.nextRead(on: loop)
        let released = NIOLockedValueBox(false)
        held.whenComplete { _ in released.withLockedValue { $0 = true } }
        #expect(!released.withLockedValue { $0 })  // nothing has let it go
        transfer.resumeReceiving()
        try await held.get()
        try await transfer.nextRead(on: loop).get()  // resumed: at once again
        transfer.pauseReceiving()
        let heldAgain = transfer.nextRead(on: loop)
        transfer.cancel()
        try await heldAgain.get()
        try await transfer.nextRead(on: loop).get()  // cancelled: never held again, paused or not
        await transfer.waitWhilePaused(on: loop)
    }

    @Test("the client's errors become the URLError codes the retry policy knows; NetworkCore's own pass as they are")
    func errorTranslation() {
        func code(_ error: any Error) -> URLError.Code? {
            (AsyncHTTPClientTransport.translate(error, cancelled: false) as? URLError)?.code
        }
        #expect(code(HTTPClientError.readTimeout) == .timedOut)
        #expect(code(HTTPClientError.deadlineExceeded) == .timedOut)
        #expect(code(HTTPClientError.connectTimeout) == .timedOut)
        #expect(code(HTTPClientError.remoteConnectionClosed) == .networkConnectionLost)
        #expect(code(HTTPClientError.cancelled) == .cancelled)
        #expect(code(CancellationError()) == .cancelled)
        #expect(code(HTTPParserError.invalidEOFState) == .networkConnectionLost)
        #expect(code(HTTPParserError.invalidHeaderToken) == .badServerResponse)
        #expect(code(IOError(errnoCode: ECONNREFUSED, reason: "connect")) == .cannotConnectToHost)
        #expect(code(IOError(errnoCode: ENETUNREACH, reason: "connect")) == .cannotConnectToHost)
        #expect(code(IOError(errnoCode: EHOSTUNREACH, reason: "connect")) == .cannotConnectToHost)
        #expect(code(IOError(errnoCode: ECONNRESET, reason: "read")) == .networkConnectionLost)
        #expect(code(ChannelError.connectTimeout(.seconds(1))) == .timedOut)
        // A connection closed before any of the answer: sent once more where the request may go again.
        let closed: [any Error] = [
            HTTPClientError.remoteConnectionClosed, IOError(errnoCode: ECONNRESET, reason: "read"),
            IOError(errnoCode: EPIPE, reason: "write"), ChannelError.ioOnClosedChannel,
        ]
        #expect(closed.allSatisfy(AsyncHTTPClientTransport.isClosedConnection))
        #expect(!AsyncHTTPClientTransport.isClosedConnection(HTTPClientError.readTimeout))
        #expect(!AsyncHTTPClientTransport.isClosedConnection(ChannelError.connectTimeout(.seconds(1))))
        #expect(
            AsyncHTTPClientTransport.translate(HTTPClientError.readTimeout, cancelled: true) as? URLError
                == URLError(.cancelled))
        let own = NetworkError.fileAccessFailed(path: "/x", reason: "no such file")
        guard
            case .fileAccessFailed(let path, _)? = AsyncHTTPClientTransport.translate(own, cancelled: false)
                as? NetworkError
        else {
            Issue.record("NetworkCore's own error was translated")
            return
        }
        #expect(path == "/x")
        // The URL, which may carry a key, is not in what the error says.
        let translated = AsyncHTTPClientTransport.translate(HTTPClientError.invalidURL, cancelled: false)
        #expect((translated as? URLError)?.code == .badURL)
        #expect((translated as? URLError)?.failingURL == nil)
    }

    @Test(
        "a kept-alive connection the server closes as the next request arrives: a GET and a small PUT go again on a new connection, once per connection the client keeps; a POST, a stream, more closes than that and a server that keeps nothing alive fail"
    )
    func closedConnectionIsResent() async throws {
        // The server answers the first request of each connection and closes it when a second arrives.
        let server = try await TestServer.start(answersPerConnection: 1)
        defer { server.stop() }
        var configuration = AsyncHTTPClientTransport.defaultConfiguration
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 1  // the next request waits for it
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        let pool = TaskPool(configuration: .init(transport: transport))
        func send(
            _ path: String, _ method: NetworkCore.HTTPMethod = .get, _ task: HTTPTask = .plain
        ) async throws(NetworkError) -> String {
            let endpoint = TestEndpoint(baseURL: server.baseURL, path: path, method: method, task: task)
            return String(decoding: try await pool.send(endpoint).body, as: UTF8.self)
        }
        func lost(_ path: String, _ method: NetworkCore.HTTPMethod, _ task: HTTPTask = .plain) async {
            do {
                _ = try await send(path, method, task)
                Issue.record("\(method) \(path) was answered")
            } catch {
                #expect(error.urlError?.code == .networkConnectionLost, "\(error)")
            }
        }
        #expect(try await send("one") == "/one")
        #expect(try await send("two") == "/two")  // on the closed connection, then on a new one
        #expect(server.connections == 2 && server.requests == 3)
        #expect(try await send("put", .put, .data(Data("body".utf8), contentType: "text/plain")) == "/put")
        #expect(server.connections == 3 && server.requests == 5)
        await lost("post", .post, .data(Data("body".utf8), contentType: "text/plain"))  // a POST is not sent twice
        #expect(server.connections == 3 && server.requests == 6)

        #expect(try await send("three") == "/three")
        let streamed = await server.sendStreamed("PUT", "/stream", through: transport)
        #expect {  // a stream is read once
            try streamed.get()
        } throws: { error in
            (error as? URLError)?.code == .networkConnectionLost
        }
        #expect(server.connections == 4 && server.requests == 8)
        try await transport.shutdown()

        // A server that has kept no connection alive: a close before the answer is not taken for a stale
        // connection (MockServer closes each connection after one answer unless told to keep it).
        let closing = try MockServer { _ in .text("ok") }
        defer { closing.stop() }
        let fresh = AsyncHTTPClientTransport()
        let freshPool = TaskPool(configuration: .init(transport: fresh))
        closing.failNext(with: .closeBeforeAnswer)
        await #expect(throws: NetworkError.self) {
            try await freshPool.send(TestEndpoint(baseURL: closing.baseURL, path: "x"))
        }
        #expect(closing.count() == 1)
        try await fresh.shutdown()

        // One that keeps connections alive: once it has, a request closed so is sent again, as many times as
        // the client has connections per host (each may be a kept-alive one the server let go), and no more.
        let keeping = try MockServer(keepsAlive: true) { _ in .text("ok") }
        defer { keeping.stop() }
        let again = AsyncHTTPClientTransport()
        let againPool = TaskPool(configuration: .init(transport: again))
        func get() async throws(NetworkError) -> String {
            String(
                decoding: try await againPool.send(TestEndpoint(baseURL: keeping.baseURL, path: "x")).body,
                as: UTF8.self)
        }
        #expect(try await get() == "ok")
        keeping.failNext(with: .closeBeforeAnswer)
        #expect(try await get() == "ok")
        #expect(keeping.count() == 3)
        let connections = try #require(again.maximumRequestsPerHost)
        #expect(connections == 8)
        keeping.failNext(connections, with: .closeBeforeAnswer)
        #expect(try await get() == "ok")
        #expect(keeping.count() == 3 + connections + 1)
        keeping.failNext(connections + 1, with: .closeBeforeAnswer)
        do {
            _ = try await get()
            Issue.record("\(connections + 1) closes were answered")
        } catch {
            #expect(error.urlError?.code == .networkConnectionLost, "\(error)")
        }
        #expect(keeping.count() == 3 + connections + 1 + connections + 1)
        try await again.shutdown()
    }

    @Test("the origins known to keep connections alive: by the URL's text up to its path; at most the limit")
    func keptAliveOrigins() {
        #expect(KeptAliveOrigins.origin(of: URL(string: "http://127.0.0.1:8080/a/b?c#d")) == "http://127.0.0.1:8080")
        #expect(KeptAliveOrigins.origin(of: URL(string: "https://[::1]?q")) == "https://[::1]")
        #expect(KeptAliveOrigins.origin(of: URL(string: "http://user@host#f")) == "http://user@host")
        #expect(KeptAliveOrigins.origin(of: URL(string: "file:///tmp/x")) == nil)
        #expect(KeptAliveOrigins.origin(of: URL(string: "relative/path")) == nil)
        #expect(KeptAliveOrigins.origin(of: URL(string: "mailto:someone@example.com")) == nil)
        #expect(KeptAliveOrigins.origin(of: URL(string: "http:/one-slash")) == nil)
        #expect(KeptAliveOrigins.origin(of: URL(string: "http://")) == nil)
        #expect(KeptAliveOrigins.origin(of: URL(string: "http://h")) == "http://h")
        #expect(KeptAliveOrigins.origin(of: nil) == nil)
        let origins = KeptAliveOrigins(limit: 3)
        origins.insert(URL(string: "http://example.com/a"))
        #expect(origins.contains(URL(string: "http://example.com/b?c")))
        #expect(!origins.contains(URL(string: "https://example.com/a")))
        #expect(!origins.contains(URL(string: "http://example.com:8080/a")))
        #expect(!origins.contains(nil))
        origins.insert(URL(string: "https://example.com/a"))
        origins.insert(URL(string: "http://[::1]:8080/a"))
        origins.insert(URL(string: "http://[::1]:8080/b"))  // known: nothing forgotten
        #expect(origins.count == 3)
        #expect(origins.contains(URL(string: "https://example.com")))
        origins.insert(URL(string: "http://other.example/"))  // past the limit: the rest is forgotten
        #expect(origins.count == 1)
        #expect(origins.contains(URL(string: "http://other.example/x")))
        #expect(!origins.contains(URL(string: "http://example.com/a")))
    }

    @Test(
        "a request started while none is in flight has its events on the transport's loop; one started beside it, the client's choice"
    )
    func requestsInFlight() {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let inFlight = RequestsInFlight(loop: group.next())
        // event: true to start a request, false to end one; then the loop the start is given, and the count.
        let events: [(start: Bool, alone: Bool?, count: Int)] = [
            (true, true, 1), (false, nil, 0), (true, true, 1), (true, false, 2), (true, false, 3), (false, nil, 2),
            (false, nil, 1), (true, false, 2), (false, nil, 1), (false, nil, 0), (true, true, 1), (false, nil, 0),
        ]
        for (index, event) in events.enumerated() {
            if event.start {
                let loop = inFlight.enter()
                #expect((loop != nil) == event.alone, "event \(index)")
                #expect(loop.map { $0 === inFlight.loop } ?? true, "event \(index)")
            } else {
                inFlight.leave()
            }
            #expect(inFlight.current == event.count, "event \(index)")
        }
    }

    @Test(
        "head deadlines: one timer, for the earliest; a waiter told once when its deadline passes, unless it left first"
    )
    func headDeadlines() {
        let loop = EmbeddedEventLoop()
        let deadlines = HeadDeadlines(loop: loop)
        let waiters = (0..<3).map { _ in CountingWaiter() }
        let start = loop.now
        func at(_ seconds: Int64) -> NIODeadline { start + .seconds(seconds) }
        enum Event {
            case add(Int, at: Int64)
            case remove(Int)
            case advance(to: Int64)
        }
        // Each event, then the waiters left, the timer's next firing, and how often each waiter was told.
        let table: [(Event, count: Int, next: Int64?, told: [Int])] = [
            (.add(0, at: 5), 1, 5, [0, 0, 0]),
            (.add(1, at: 3), 2, 3, [0, 0, 0]),  // earlier: the timer moves
            (.add(2, at: 10), 3, 3, [0, 0, 0]),  // later: it stays
            (.remove(1), 2, 3, [0, 0, 0]),  // leaving does not move it
            (.advance(to: 3), 2, 5, [0, 0, 0]),  // nothing due: set for the earliest left
            (.advance(to: 5), 1, 10, [1, 0, 0]),
            (.remove(2), 0, 10, [1, 0, 0]),
            (.advance(to: 10), 0, nil, [1, 0, 0]),  // none left: not set again
            (.add(0, at: 11), 1, 11, [1, 0, 0]),
            (.add(1, at: 11), 2, 11, [1, 0, 0]),
            (.advance(to: 12), 0, nil, [2, 1, 0]),  // both due at once: each told once
            (.add(2, at: 13), 1, 13, [2, 1, 0]),
            (.add(2, at: 20), 1, 13, [2, 1, 0]),  // added again: its deadline is the later one
            (.advance(to: 13), 1, 20, [2, 1, 0]),
            (.advance(to: 25), 0, nil, [2, 1, 1]),
        ]
        for (index, (event, count, next, told)) in table.enumerated() {
            switch event {
            case .add(let waiter, let seconds): deadlines.add(waiters[waiter], deadline: at(seconds))
            case .remove(let waiter): deadlines.remove(waiters[waiter])
            case .advance(let seconds): loop.advanceTime(to: at(seconds))
            }
            #expect(deadlines.count == count, "event \(index)")
            #expect(deadlines.nextFiring == next.map(at), "event \(index)")
            #expect(waiters.map { $0.told.withLockedValue { $0 } } == told, "event \(index)")
        }
        try? loop.syncShutdownGracefully()
    }

    /// A server that answers every path at once but `/held`, whose answer waits for the semaphore (60 s at most).
    func heldServer() throws -> (MockServer, DispatchSemaphore) {
        let release = DispatchSemaphore(value: 0)
        let server = try MockServer { request in
            if request.path == "/held" { _ = release.wait(timeout: .now() + 60) }
            return MockResponse(.json(#"{"ok": true}"#))
        }
        return (server, release)
    }

    @Test(
        "a head that does not come within the request's timeout fails it as timed out; no waiter is left",
        .timeLimit(.minutes(1)))
    func headTimeout() async throws {
        let (server, release) = try heldServer()
        defer { server.stop() }
        defer { release.signal() }
        let transport = AsyncHTTPClientTransport()
        func send(_ path: String, timeout: TimeInterval) async -> (any Error)? {
            let receiver = LoopNotingReceiver(declinesHead: false)
            var request = URLRequest(url: URL(string: server.baseURL + path)!)
            request.timeoutInterval = timeout
            _ = transport.start(request, body: .none, events: TransportEvents(taskID: path, receiver: receiver))
            return await receiver.end()
        }
        // Answered within its timeout, beside one held: the first leaves the deadlines at its head.
        async let held = send("/held", timeout: 0.5)
        #expect(await send("/answer", timeout: 30) == nil)
        let error = await held
        #expect((error as? URLError)?.code == .timedOut, "\(String(describing: error))")
        #expect(transport.headDeadlines.count == 0)
        #expect(await send("/answer", timeout: 30) == nil)
        #expect(transport.headDeadlines.count == 0)
        try await transport.shutdown()
    }

    @Test(
        "requests sent one after another have their events on one loop of the group, each time the same; each one's end leaves none in flight",
        .timeLimit(.minutes(1)))
    func oneLoopWhenAlone() async throws {
        let (server, release) = try heldServer()
        defer { server.stop() }
        defer { release.signal() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let transport = AsyncHTTPClientTransport(eventLoopGroup: group)
        func send(_ path: String, declining: Bool = false) -> (LoopNotingReceiver, any TransportControl) {
            let receiver = LoopNotingReceiver(declinesHead: declining)
            var request = URLRequest(url: URL(string: server.baseURL + path)!)
            request.timeoutInterval = 30
            let events = TransportEvents(taskID: path, receiver: receiver)
            return (receiver, transport.start(request, body: .none, events: events))
        }
        // Answered: every report of every request on the transport's loop (over `.indifferent`, the group's two
        // loops took turns); the count is down before the end is reported.
        for index in 0..<6 {
            let (receiver, _) = send("/answer")
            #expect(await receiver.end() == nil, "request \(index)")
            #expect(transport.inFlight.current == 0, "request \(index)")
            let loops = receiver.loops.withLock { $0 }
            #expect(loops.count >= 3, "head, body, end: \(loops.count) reports")
            #expect(loops.allSatisfy { $0 == ObjectIdentifier(transport.inFlight.loop) }, "request \(index)")
        }
        // Failed: no server at the port.
        var request = URLRequest(url: URL(string: "http://127.0.0.1:1/closed")!)
        request.timeoutInterval = 30
        let refused = LoopNotingReceiver(declinesHead: false)
        _ = transport.start(request, body: .none, events: TransportEvents(taskID: "refused", receiver: refused))
        #expect(await refused.end() != nil)
        #expect(transport.inFlight.current == 0)
        // Cancelled while the server holds the answer.
        let (held, control) = send("/held")
        #expect(transport.inFlight.current == 1)
        control.cancel()
        #expect(await held.end() != nil)
        #expect(transport.inFlight.current == 0)
        // Declined at its head: no end is reported, and the count is down once the receiver has declined.
        let (declined, _) = send("/answer", declining: true)
        #expect(await eventually { declined.loops.withLock { $0.count } == 1 && transport.inFlight.current == 0 })
        try await transport.shutdown()
        try await group.shutdownGracefully()
    }

    @Test("shutdown is safe twice; a send after it fails, and does not hang", .timeLimit(.minutes(1)))
    func shutdown() async throws {
        let transport = AsyncHTTPClientTransport()
        try await transport.shutdown()
        try await transport.shutdown()
        // The deadline only bounds the test: the send fails with the client's refusal, not at the deadline.
        let pool = TaskPool(configuration: .init(transport: transport, resourceTimeout: 60))
        do {
            _ = try await pool.send(TestEndpoint(baseURL: "http://127.0.0.1:1", path: "/x"))
            Issue.record("a send after shutdown succeeded")
        } catch {
            if case .deadlineExceeded = error { Issue.record("the send waited for its deadline") }
            #expect(error.urlError != nil, "\(error)")
        }
        #expect(pool.activeTasks.isEmpty)
    }
}

/// A waiter that counts how often it is told its head's deadline has passed.
final class CountingWaiter: HeadWaiter {
    let told = NIOLockedValueBox(0)
    func headTimedOut() { told.withLockedValue { $0 += 1 } }
}

/// A receiver that takes every report and keeps nothing.
final class DiscardingReceiver: TransportReceiver {
    func receive(head: HTTPURLResponse) -> Bool { true }
    func receive(body: Data) -> Bool { true }
    func redirected(statusCode: Int, to url: URL?) {}
    func sent(totalBytes: Int, expected: Int?) {}
    func finish() {}
    func fail(_ error: any Error) {}
}

/// A receiver that notes the event loop each report comes on (`nil` off the group's loops) and the transfer's
/// end; it declines the head if told to.
final class LoopNotingReceiver: TransportReceiver {
    let loops = Locked<[ObjectIdentifier?]>([])
    private let declinesHead: Bool
    private let ends: AsyncStream<(any Error)?>
    private let ended: AsyncStream<(any Error)?>.Continuation

    init(declinesHead: Bool) {
        self.declinesHead = declinesHead
        (ends, ended) = AsyncStream.makeStream()
    }

    /// Waits for the end: `nil` for an answer, else the failure.
    func end() async -> (any Error)? {
        var iterator = ends.makeAsyncIterator()
        return await iterator.next() ?? CancellationError()
    }

    private func note() {
        let loop = MultiThreadedEventLoopGroup.currentEventLoop.map { ObjectIdentifier($0) }
        loops.withLock { $0.append(loop) }
    }

    func receive(head: HTTPURLResponse) -> Bool {
        note()
        return !declinesHead
    }
    func receive(body: Data) -> Bool {
        note()
        return true
    }
    func redirected(statusCode: Int, to url: URL?) {}
    func sent(totalBytes: Int, expected: Int?) {}
    func finish() {
        note()
        ended.yield(nil)
    }
    func fail(_ error: any Error) {
        note()
        ended.yield(error)
    }
}
