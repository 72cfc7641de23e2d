import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("A transport against the loopback server: challenges, whole bodies, joined callers, cut bodies")
struct LoopbackTransportTests {
    @Test(
        "a 401 with a WWW-Authenticate challenge arrives as that 401, body and all, and does not hang",
        arguments: TransportUnderTest.all,
        [#"Basic realm="api""#, #"Bearer realm="api", error="invalid_token""#, #"Bearer error="invalid_token""#]
    )
    func challengeArrivesAsResponse(_ transport: TransportUnderTest, challenge: String) async throws {
        let body = Data(#"{"code":7,"message":"Invalid API key"}"#.utf8)
        let server = try MockServer { _ in
            MockResponse(
                statusCode: 401, headers: ["WWW-Authenticate": challenge, "Content-Type": "application/json"],
                body: body)
        }
        defer { server.stop() }
        // The deadline only bounds the test: without the fix the task never ends. Under ThreadSanitizer the
        // first sends of the Integrations suite (its engines starting) have taken more than 10 s.
        let pool = transport.pool(.init(resourceTimeout: 10 * slowRunScale))
        let started = Date()
        await #expect {
            _ = try await pool.send(TestEndpoint(baseURL: server.baseURL, path: "/secret"))
        } throws: { error in
            guard case NetworkError.httpStatus(let response) = error else { return false }
            return response.statusCode == 401 && response.body == body && response.serverCode == 7
        }
        #expect(isSlowRun || Date().timeIntervalSince(started) < 5)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test(
        "a body arrives whole, byte for byte, whether in one piece or many, with its length announced",
        arguments: TransportUnderTest.all, [1_000, 1_500_000])
    func bodyArrivesWhole(_ transport: TransportUnderTest, size: Int) async throws {
        // Bytes that differ from piece to piece, so a piece lost, repeated or out of order shows: a pattern
        // of a prime length (1,021 bytes), repeated. Copied, not computed, byte by byte: computing 1.5 MB
        // one byte at a time took most of a second in a debug build, beside timing-sensitive tests.
        let pattern = Data((0..<1_021).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
        var repeated = Data(capacity: size)
        while repeated.count < size { repeated.append(pattern.prefix(size - repeated.count)) }
        let body = repeated
        let server = try MockServer(recordsRequests: false) { _ in MockResponse(StubResponse(body: body)) }
        defer { server.stop() }
        let pieces = Locked(0)
        let context = TransportContext(taskID: "t") { progress in
            if case .bytes = progress { pieces.withLock { $0 += 1 } }
        }
        let request = try TestEndpoint(baseURL: server.baseURL, path: "/body").urlRequest()
        let (received, response) = try await transport.make().send(
            request, context: context)
        #expect(response.statusCode == 200)
        #expect(response.expectedContentLength == Int64(size))
        #expect(received.count == size)
        // A Bool, not `received == body` in the macro, whose failure message would diff 1.5 MB byte by byte.
        let same = received == body
        #expect(
            same, "first difference at byte \(zip(received, body).enumerated().first { $1.0 != $1.1 }?.offset ?? -1)")
        #expect(size > 100_000 ? pieces.withLock { $0 } > 1 : pieces.withLock { $0 } == 1)
    }

    @Test(
        "the caller that started a send is cancelled; a caller that joined it still gets the answer",
        arguments: TransportUnderTest.all)
    func joinedCallerOutlivesTheStarter(_ transport: TransportUnderTest) async throws {
        let body = Data(#"{"ok":true}"#.utf8)
        // Answered once the starter is cancelled and the joined caller waits (the test releases it; 60 s at
        // most, should it fail first): the only request the server sees, however many callers wait.
        let release = DispatchSemaphore(value: 0)
        let server = try MockServer { _ in
            _ = release.wait(timeout: .now() + 60)
            return MockResponse(StubResponse(body: body))
        }
        defer { server.stop() }
        defer { release.signal() }
        // The deadline only bounds the test, should the answer be lost with the starter.
        let pool = transport.pool(.init(resourceTimeout: 10 * slowRunScale))
        let endpoint = TestEndpoint(baseURL: server.baseURL, path: "/shared")
        let starter = Task { try await pool.send(endpoint, id: "shared") }
        #expect(await eventually(within: 30) { pool.task(id: "shared")?.phase == .sending })
        let task = try #require(pool.task(id: "shared"))
        // The starter counts as waiting from its send on; a caller of the same call
        // joins it.
        #expect(task.waiterCount == 1)
        let joined = Task { try await pool.send(endpoint, id: "shared") }
        #expect(await eventually(within: 30) { task.waiterCount == 2 })
        starter.cancel()
        guard case .failure(NetworkError.cancelled) = await starter.result else {
            Issue.record("the cancelled starter ended with \(await starter.result)")
            return
        }
        #expect(pool.task(id: "shared") === task)  // still running for the caller that joined
        release.signal()
        let response = try await joined.value
        #expect(response.statusCode == 200)
        #expect(response.body == body)
        #expect(task.state == .completed)
        #expect(pool.activeTasks.isEmpty)
        #expect(server.requests.count == 1)
        let attempt = try #require(task.timings.attempts.first)
        #expect(attempt.statusCode == 200)
        #expect(attempt.bytesReceived == body.count)
    }

    @Test(
        "a body cut midway over real loopback HTTP is networkConnectionLost, and RetryPolicy retries it",
        arguments: TransportUnderTest.all)
    func lostMidBodyIsRetried(_ transport: TransportUnderTest) async throws {
        let attempts = Counter()
        let body = StubResponse(body: Data(repeating: 0x61, count: 8_000))
        let server = try MockServer(port: 0) { _ in
            attempts.increment() <= 2 ? MockResponse(body, faults: [.cutMidBody]) : MockResponse(body)
        }
        defer { server.stop() }
        let plain = transport.pool()
        do {
            _ = try await plain.send(TestEndpoint(baseURL: server.baseURL, path: "cut"))
            Issue.record("a cut body was accepted")
        } catch {
            #expect(error.urlError?.code == .networkConnectionLost, "\(error)")
        }
        let retrying = transport.pool(.init(interceptors: [RetryPolicy(baseDelay: 0.01)]))
        let response = try await retrying.send(TestEndpoint(baseURL: server.baseURL, path: "cut"))
        #expect(response.body.count == 8_000)
        #expect(attempts.count == 3)  // the plain pool's cut; the retrying pool's cut, then its retry answered
    }

    @Test(
        "a connection refused or without a route is cannotConnectToHost, at once; a stream body is sent whole, and one shorter than it announced fails typed",
        arguments: TransportUnderTest.all)
    func refusedAndStreamBodies(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool(.init(requestTimeout: 10))
        let started = Date()
        do {
            _ = try await pool.send(TestEndpoint(baseURL: "http://127.0.0.1:1", path: "/none"))
            Issue.record("a request to a closed port succeeded")
        } catch {
            #expect(error.urlError?.code == .cannotConnectToHost, "\(error)")
        }
        #expect(isSlowRun || Date().timeIntervalSince(started) < 5)
        // No route (the network down, or here the broadcast address, which the kernel will not connect to):
        // as transient as a refusal, so a RetryPolicy retries it (FoundationNetworking says "unknown").
        do {
            _ = try await pool.send(TestEndpoint(baseURL: "http://255.255.255.255:1", path: "/none"))
            Issue.record("a request to the broadcast address succeeded")
        } catch {
            #expect(error.urlError?.code == .cannotConnectToHost, "\(error)")
        }

        let server = try MockServer { request in MockResponse(statusCode: 200, body: request.httpBody ?? Data()) }
        defer { server.kill() }
        var request = URLRequest(url: URL(string: server.baseURL + "/echo")!)
        request.httpMethod = "PUT"
        let context = TransportContext(taskID: "stream")
        for length in [nil, 20_190] as [Int?] {
            let (chunks, feed) = AsyncThrowingStream<Data, any Error>.makeStream()
            for piece in 0..<20 { feed.yield(alphabet(1_000 + piece)) }
            feed.finish()
            let (body, response) = try await TransportEvents.collect(
                from: transport.make(), request: request, body: .stream(chunks, length: length), context: context
            ).get()
            #expect(response.statusCode == 200)
            #expect(body == (0..<20).reduce(Data()) { $0 + alphabet(1_000 + $1) })
        }
        let (short, shortFeed) = AsyncThrowingStream<Data, any Error>.makeStream()
        shortFeed.yield(Data("abc".utf8))
        shortFeed.finish()
        let requestsBefore = server.requests.count
        let mismatch = await TransportEvents.collect(
            from: transport.make(), request: request, body: .stream(short, length: 10), context: context)
        #expect(throws: NetworkError.self) { try mismatch.get() }
        #expect(server.requests.count == requestsBefore)
    }

    @Test(
        "an announced length past the pool's limit, and a body that grows past it, both stop the transfer typed",
        arguments: TransportUnderTest.all)
    func responseTooLarge(_ transport: TransportUnderTest) async throws {
        let big = Data(repeating: 0x61, count: 3 << 20)
        let server = try MockServer { request in
            request.url?.path == "/trickle"
                ? MockResponse(StubResponse(body: big), faults: [.trickle(pieces: 48, interval: 0.001)])
                : MockResponse(StubResponse(body: request.url?.path == "/small" ? Data("ok".utf8) : big))
        }
        defer { server.stop() }
        let pool = transport.pool(.init(maximumResponseBytes: 1 << 20))
        for path in ["big", "trickle"] {
            let error = await networkFailure { () async throws(NetworkError) in
                try await pool.send(TestEndpoint(baseURL: server.baseURL, path: path))
            }
            #expect(responseLimit(of: error) == 1 << 20, "\(path): \(String(describing: error))")
            #expect(error?.localizedDescription.contains("larger than the limit of 1048576 bytes") == true)
        }
        #expect(try await pool.send(TestEndpoint(baseURL: server.baseURL, path: "small")).body == Data("ok".utf8))
        #expect(pool.activeTasks.isEmpty)
    }

    @Test(
        "a recorded stream passes its chunks on as they come, the task running; the archive keeps the limit's worth and the whole size, and a cut one is recorded as failed",
        arguments: TransportUnderTest.all)
    func recordedStream(_ transport: TransportUnderTest) async throws {
        let body = alphabet(600_000)
        // The server sends the head and the first 100,000 bytes, and the rest only once this test has read a
        // chunk (a minute at most; then it cuts): a stream that held its chunks back would never see one.
        let release = MockGate()
        let server = try MockServer { request in
            request.url?.path == "/cut"
                ? MockResponse(StubResponse(body: body), faults: [.cutMidBody])
                : MockResponse(StubResponse(body: body), faults: [.pause(afterBodyBytes: 100_000, until: release)])
        }
        defer { server.stop() }
        defer { release.open() }
        let recorder = HARRecorder(bodyLimit: 1_000)
        let pool = transport.pool(recordingInto: recorder)
        let stream = try await pool.stream(TestEndpoint(baseURL: server.baseURL, path: "/trickle"))
        var chunks = 0
        var received = Data()
        for try await chunk in stream {
            if chunks == 0 {
                // Before the rest is sent, the task is receiving and has counted the chunk read, and no more
                // than the first part.
                #expect(stream.task.phase == .receiving)
                #expect((chunk.count...100_000).contains(stream.task.bytesReceived))
                release.open()
            }
            chunks += 1
            received.append(chunk)
        }
        #expect(chunks > 1)
        #expect(received == body)
        let attempt = try #require(stream.task.timings.attempts.first)
        #expect(try #require(attempt.firstByte) < attempt.end)
        await #expect(throws: NetworkError.self) {
            try await pool.send(TestEndpoint(baseURL: server.baseURL, path: "/cut"))
        }
        let entries = recorder.har.log.entries
        #expect(entries.count == 2)
        let streamed = try #require(entries.first)
        #expect(streamed.response.status == 200)
        #expect(streamed.response.bodySize == 600_000)
        #expect(
            streamed.response.content.comment == "600000 bytes, not recorded: over the recorder's bodyLimit of 1000")
        let cut = try #require(entries.last)
        #expect(cut.response.status == 0)
        #expect(cut.comment?.hasPrefix("no response:") == true)
    }
}

extension DataTask {
    /// How many callers wait for this task.
    var waiterCount: Int { poolState.withLock { [key] in $0.waiterCount(of: key) } }
}
