import Foundation
import LoopbackServer
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Answers every request in-process with a JSON echo of its method and headers, in three chunks.
final class EchoURLProtocol: URLProtocol {
    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        let headers = request.allHTTPHeaderFields ?? [:]
        let echo: [String: Any] = [
            "method": request.httpMethod ?? "", "headers": headers, "padding": String(repeating: "x", count: 3000),
        ]
        let body = (try? JSONSerialization.data(withJSONObject: echo, options: [.sortedKeys])) ?? Data()
        let response = HTTPURLResponse(
            url: request.url!, statusCode: request.url!.path.hasSuffix("missing") ? 404 : 200, httpVersion: "HTTP/1.1",
            headerFields: ["Content-Type": "application/json"])!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        let third = body.count / 3
        for chunk in [body.prefix(third), body.dropFirst(third).prefix(third), body.dropFirst(2 * third)] {
            client?.urlProtocol(self, didLoad: Data(chunk))
        }
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

@Suite("URLSessionTransport (URLProtocol stub)")
struct URLSessionTransportTests {
    func transport() -> URLSessionTransport {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [EchoURLProtocol.self]
        return URLSessionTransport(configuration: configuration)
    }

    struct Echo: Decodable, Sendable {
        let method: String
        let headers: [String: String]
        let padding: String
    }

    @Test("requests go through the session with the pool's headers; the body arrives whole")
    func roundTrip() async throws {
        let pool = TaskPool(configuration: .init(transport: transport()))
        let echo = try await pool.send(
            TestEndpoint(method: .put, headers: ["X-Custom": "yes"]), parser: DecodableParser<Echo>())
        #expect(echo.method == "PUT")
        #expect(echo.headers["X-Custom"] == "yes")
        #expect(echo.headers["User-Agent"] == "NetworkCore/\(LibraryVersion.current)")
        #expect(echo.headers["Accept"] == "application/json")
        #expect(echo.padding.count == 3000)
    }

    @Test("bytes are counted as chunks arrive, by the session's delegate")
    func countsBytes() async throws {
        let chunks = Locked<[Int]>([])
        let request = try TestEndpoint().urlRequest()
        let responses = Counter()
        let context = TransportContext(taskID: "t") { progress in
            switch progress {
            case .bytes(let count): chunks.withLock { $0.append(count) }
            case .response: responses.increment()
            case .redirect: Issue.record("no redirect expected")
            }
        }
        let (body, response) = try await transport().send(request, context: context)
        #expect(response.statusCode == 200)
        let counted = chunks.withLock { $0 }
        #expect(counted.reduce(0, +) == body.count)
        #expect(counted.count >= 1)
        #expect(responses.count == 1)
    }

    @Test("the pool validates statuses from the session")
    func status() async throws {
        let pool = TaskPool(configuration: .init(transport: transport()))
        await #expect(throws: NetworkError.self) { try await pool.send(TestEndpoint(path: "missing")) }
    }
}

@Suite("URLSessionTransport (loopback HTTP server)")
struct URLSessionTransportLoopbackTests {
    @Test(
        "a 401 with a WWW-Authenticate challenge arrives as that 401, body and all, and does not hang",
        arguments: [
            #"Basic realm="api""#, #"Bearer realm="api", error="invalid_token""#, #"Bearer error="invalid_token""#,
        ]
    )
    func challengeArrivesAsResponse(challenge: String) async throws {
        let body = Data(#"{"code":7,"message":"Invalid API key"}"#.utf8)
        let server = try LoopbackServer { _ in
            StubResponse(
                statusCode: 401, headers: ["WWW-Authenticate": challenge, "Content-Type": "application/json"],
                body: body)
        }
        defer { server.stop() }
        // The deadline only bounds the test: without the fix the task never ends.
        let pool = TaskPool(
            configuration: .init(transport: URLSessionTransport(configuration: .ephemeral), resourceTimeout: 10))
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
        arguments: [1_000, 1_500_000])
    func bodyArrivesWhole(size: Int) async throws {
        // Bytes that differ from piece to piece, so a piece lost, repeated or out of order shows: a pattern
        // of a prime length (1,021 bytes), repeated. Copied, not computed, byte by byte: computing 1.5 MB
        // one byte at a time took most of a second in a debug build, beside timing-sensitive tests.
        let pattern = Data((0..<1_021).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
        var repeated = Data(capacity: size)
        while repeated.count < size { repeated.append(pattern.prefix(size - repeated.count)) }
        let body = repeated
        let server = try LoopbackServer(recordsRequests: false) { _ in .respond(StubResponse(body: body)) }
        defer { server.stop() }
        let pieces = Locked(0)
        let context = TransportContext(taskID: "t") { progress in
            if case .bytes = progress { pieces.withLock { $0 += 1 } }
        }
        let request = try TestEndpoint(baseURL: server.baseURL, path: "/body").urlRequest()
        let (received, response) = try await URLSessionTransport(configuration: .ephemeral).send(
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

    /// How a running task is ended in ``endingReachesTheSession(_:)``.
    enum Ending: String, CaseIterable, Sendable {
        case cancelByID, callerCancelled, deadline
    }

    @Test(
        "cancelling a task by id, cancelling its caller and its deadline each cancel its URLSessionTask",
        arguments: Ending.allCases)
    func endingReachesTheSession(_ ending: Ending) async throws {
        // The answer comes after every deadline below, slow runs included (18 s), so only the ending can end it.
        let server = try LoopbackServer(recordsRequests: false) { _ in .delayed(60, StubResponse(body: Data("{}".utf8)))
        }
        defer { server.kill() }
        let transport = URLSessionTransport(configuration: .ephemeral)
        // Longer than the 2 s `eventually` below waits to see the URLSessionTask running, so that it is
        // seen before the deadline ends it, even with the whole suite running at once (at 0.5 s, one
        // full run on 2026-11-23 did not see it in time).
        let deadline = 3 * slowRunScale
        let pool = TaskPool(
            configuration: .init(transport: transport, resourceTimeout: ending == .deadline ? deadline : nil))
        let caller = Task { try await pool.send(TestEndpoint(baseURL: server.baseURL, path: "/slow"), id: "slow") }
        #expect(await eventually { await runningTasks(of: transport.session) == 1 })
        switch ending {
        case .cancelByID: #expect(pool.cancel(id: "slow"))
        case .callerCancelled: caller.cancel()
        case .deadline: break
        }
        let result = await caller.result
        switch (ending, result) {
        case (.deadline, .failure(NetworkError.deadlineExceeded(let seconds))): #expect(seconds == deadline)
        case (.cancelByID, .failure(NetworkError.cancelled)), (.callerCancelled, .failure(NetworkError.cancelled)):
            break
        default: Issue.record("\(ending) ended the send with \(result)")
        }
        #expect(pool.activeTasks.isEmpty)
        // The request itself stops, long before the server's answer in 60 s.
        #expect(await eventually { await runningTasks(of: transport.session) == 0 })
    }

    @Test("the caller that started a send is cancelled; a caller that joined it still gets the answer")
    func joinedCallerOutlivesTheStarter() async throws {
        let body = Data(#"{"ok":true}"#.utf8)
        // Answered after the cancel below (long enough for the steps before it on a loaded machine); the only
        // request the server sees, however many callers wait.
        let server = try LoopbackServer { _ in .delayed(2 * slowRunScale, StubResponse(body: body)) }
        defer { server.stop() }
        // The deadline only bounds the test, should the answer be lost with the starter.
        let pool = TaskPool(
            configuration: .init(
                transport: URLSessionTransport(configuration: .ephemeral), resourceTimeout: 10 * slowRunScale))
        let endpoint = TestEndpoint(baseURL: server.baseURL, path: "/shared")
        let starter = Task { try await pool.send(endpoint, id: "shared") }
        #expect(await eventually { pool.task(id: "shared")?.phase == .sending })
        let task = try #require(pool.task(id: "shared"))
        // The starter waits as the one to finish the task (it adds itself as a waiter just after the
        // transfer starts, so wait for it); a caller of the same call joins it.
        #expect(
            await eventually {
                task.lock.withLock { task.storage.machine.waiters.count { $0.resumer.isFinisher } } == 1
            })
        let joined = Task { try await pool.send(endpoint, id: "shared") }
        #expect(await eventually { task.lock.withLock { task.storage.machine.waiters.count } == 2 })
        starter.cancel()
        guard case .failure(NetworkError.cancelled) = await starter.result else {
            Issue.record("the cancelled starter ended with \(await starter.result)")
            return
        }
        #expect(pool.task(id: "shared") === task)  // still running for the caller that joined
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

    /// How many of the session's tasks are running.
    private func runningTasks(of session: URLSession) async -> Int {
        await withCheckedContinuation { continuation in
            session.getAllTasks { tasks in continuation.resume(returning: tasks.count { $0.state == .running }) }
        }
    }

    /// How a task is sent in ``runner(_:)``.
    enum Sending: String, CaseIterable, Sendable {
        case awaited, awaitedWithInterceptor, completionHandler
    }

    @Test(
        "a send without interceptors runs as the URLSessionTask alone, awaited or with a handler; with them, in a Swift task",
        arguments: Sending.allCases)
    func runner(_ sending: Sending) async throws {
        struct Passing: RequestInterceptor {}
        // The answer comes long after the cancel below, so only the cancel can end the send.
        let server = try LoopbackServer(recordsRequests: false) { _ in .delayed(60, StubResponse(body: Data("{}".utf8)))
        }
        defer { server.kill() }
        let pool = TaskPool(
            configuration: .init(
                transport: URLSessionTransport(configuration: .ephemeral),
                interceptors: sending == .awaitedWithInterceptor ? [Passing()] : []))
        let endpoint = TestEndpoint(baseURL: server.baseURL, path: "/slow")
        let outcome = Locked<Result<Response, NetworkError>?>(nil)
        if sending == .completionHandler {
            pool.send(endpoint, id: "slow") { result in outcome.withLock { $0 = result } }
        } else {
            Task {
                let result: Result<Response, NetworkError>
                do throws(NetworkError) { result = .success(try await pool.send(endpoint, id: "slow")) } catch {
                    result = .failure(error)
                }
                outcome.withLock { $0 = result }
            }
        }
        #expect(await eventually { pool.task(id: "slow")?.phase == .sending })
        let task = try #require(pool.task(id: "slow"))
        // A Swift runner started at once may send before the pool has stored it.
        #expect(await eventually { task.lock.withLock { task.storage.machine.runner } != nil })
        let runner = task.lock.withLock { task.storage.machine.runner }
        switch (sending, runner) {
        case (.awaited, .transfer), (.awaitedWithInterceptor, .task), (.completionHandler, .transfer): break
        default: Issue.record("\(sending) runs in \(String(describing: runner))")
        }
        #expect(pool.cancel(id: "slow"))
        #expect(await eventually { outcome.withLock { $0 } != nil })
        let result = outcome.withLock { $0 }
        guard case .failure(.cancelled)? = result else {
            Issue.record("ended with \(String(describing: result))")
            return
        }
    }
}
