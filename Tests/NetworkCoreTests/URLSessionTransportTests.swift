import Foundation
import NetworkCoreTesting
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
        let counted: [Int] = chunks.withLock { $0 }
        #expect(counted.reduce(0, +) as Int == body.count)
        #expect(counted.count >= 1)
        #expect(responses.count == 1)
    }

    @Test("the pool validates statuses from the session")
    func status() async throws {
        let pool = TaskPool(configuration: .init(transport: transport()))
        await #expect(throws: NetworkError.self) { try await pool.send(TestEndpoint(path: "missing")) }
    }
}

@Suite("The session's callbacks are marked, so that no task is made on the session's own queue")
struct SessionCallbackThreadTests {
    @Test(
        "inside a callback the mark is set, nested callbacks keep it, and it is gone after; other threads never see it")
    func marker() async throws {
        #expect(!SessionCallbackThread.isCurrent)
        var inside: [Bool] = []
        SessionCallbackThread.run {
            inside.append(SessionCallbackThread.isCurrent)
            SessionCallbackThread.run { inside.append(SessionCallbackThread.isCurrent) }
            inside.append(SessionCallbackThread.isCurrent)
            let elsewhere = DispatchGroup()
            let other = Locked(true)
            elsewhere.enter()
            Thread.detachNewThread {
                other.withLock { $0 = SessionCallbackThread.isCurrent }
                elsewhere.leave()
            }
            elsewhere.wait()
            inside.append(other.withLock { $0 })
        }
        #expect(inside == [true, true, true, false])
        #expect(!SessionCallbackThread.isCurrent)
    }
}

@Suite("URLSessionTransport: an unknown error after the head, by what the head says")
struct UnreadableBodyTests {
    static let unknown = URLError(
        .unknown,
        userInfo: [NSLocalizedDescriptionKey: "Unrecognized content encoding type. libcurl understands deflate"])
    static let corrupt = URLError(
        .unknown,
        userInfo: [NSLocalizedDescriptionKey: "Error while processing content unencoding: incorrect header check"])
    static let closed = URLError(
        .unknown, userInfo: [NSLocalizedDescriptionKey: "Recv failure: Connection reset by peer"])

    /// A head with `fields`, the error FoundationNetworking reported, and the code the transport reports
    /// (`nil`: not the body's coding, a lost connection), with a word its description must hold.
    static let cases: [([String: String], URLError, URLError.Code?, String)] = [
        (["Content-Encoding": "x-custom"], unknown, .cannotDecodeContentData, "Content-Encoding \"x-custom\""),
        (["Content-Encoding": "gzip, X-Custom"], unknown, .cannotDecodeContentData, "Content-Encoding \"x-custom\""),
        (["Transfer-Encoding": "x-custom"], unknown, .cannotParseResponse, "Transfer-Encoding \"x-custom\""),
        (["Transfer-Encoding": "gzip, chunked"], unknown, .cannotParseResponse, "Transfer-Encoding \"gzip\""),
        (["Content-Encoding": "gzip"], corrupt, .cannotDecodeContentData, "incorrect header check"),
        (["Content-Encoding": "gzip"], closed, nil, ""),
        (["Content-Encoding": "x-custom", "Transfer-Encoding": "gzip, chunked"], closed, nil, ""),
        (["Content-Encoding": "identity", "Transfer-Encoding": "chunked"], closed, nil, ""),
        ([:], closed, nil, ""),
    ]

    @Test("a coding libcurl refuses is named in a typed error; anything else stays a lost connection")
    func table() throws {
        let url = URL(string: "http://127.0.0.1/x")!
        for (fields, error, code, words) in Self.cases {
            let head = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: fields)
            let mapped = SessionDelegate.unreadableBody(error, head: head)
            #expect(mapped?.code == code, "\(fields)")
            if let mapped {
                #expect(mapped.localizedDescription.contains(words), "\(mapped.localizedDescription)")
                #expect((mapped.userInfo[NSUnderlyingErrorKey] as? URLError)?.code == .unknown)
            }
        }
        #expect(SessionDelegate.unreadableBody(Self.corrupt, head: nil)?.code == .cannotDecodeContentData)
        #expect(SessionDelegate.unreadableBody(Self.closed, head: nil) == nil)
    }
}

@Suite("URLSessionTransport (loopback HTTP server)")
struct URLSessionTransportLoopbackTests {
    /// How a running task is ended in ``endingReachesTheSession(_:)``.
    enum Ending: String, CaseIterable, Sendable {
        case cancelByID, callerCancelled, deadline
    }

    @Test(
        "cancelling a task by id, cancelling its caller and its deadline each cancel its URLSessionTask",
        arguments: Ending.allCases)
    func endingReachesTheSession(_ ending: Ending) async throws {
        // The server answers nothing: it tells when the request has arrived, and when the client has closed
        // the connection, which is how a cancelled URLSessionTask ends its transfer.
        let arrived = Latch()
        let closed = Latch()
        let server = try MockServer(recordsRequests: false) { _ in
            arrived.open()
            return .fault(.holdUntilClientCloses(then: { closed.open() }))
        }
        defer { server.kill() }
        // Long enough that the request is on the wire before it ends the task, slow runs included.
        let deadline = 3 * slowRunScale
        let pool = TaskPool(
            configuration: .init(
                transport: URLSessionTransport(configuration: .ephemeral),
                resourceTimeout: ending == .deadline ? deadline : nil))
        let caller = Task { try await pool.send(TestEndpoint(baseURL: server.baseURL, path: "/slow"), id: "slow") }
        #expect(await arrived.wait(upTo: 30), "the request never reached the server")
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
        // The request itself stops: the session closes its connection.
        #expect(await closed.wait(upTo: 30), "the connection was never closed")
    }

    /// How a task is sent in ``cancelEachWay(_:)``.
    enum Sending: String, CaseIterable, Sendable {
        case awaited, awaitedWithInterceptor, completionHandler
    }

    @Test(
        "a send over URLSession, awaited or with a handler, interceptors or not, ends at its cancel",
        arguments: Sending.allCases)
    func cancelEachWay(_ sending: Sending) async throws {
        struct Passing: RequestInterceptor {}
        // The answer comes long after the cancel below, so only the cancel can end the send.
        let server = try MockServer(recordsRequests: false) { _ in
            MockResponse(StubResponse(body: Data("{}".utf8)), faults: [.delayHead(60)])
        }
        defer { server.kill() }
        let pool = TaskPool(
            configuration: .init(
                transport: URLSessionTransport(configuration: .ephemeral),
                interceptors: sending == .awaitedWithInterceptor ? [Passing()] : []))
        let endpoint = TestEndpoint(baseURL: server.baseURL, path: "/slow")
        let handled = Latch()
        let outcome = Locked<Result<Response, NetworkError>?>(nil)
        var caller: Task<Response, any Error>?
        if sending == .completionHandler {
            pool.send(endpoint, id: "slow") { result in
                outcome.withLock { $0 = result }
                handled.open()
            }
        } else {
            caller = immediately { try await pool.send(endpoint, id: "slow") }
        }
        #expect(pool.task(id: "slow") != nil)
        #expect(pool.cancel(id: "slow"))
        if let caller {
            #expect(isCancelled(await caller.result))
        } else {
            await handled.wait()
            guard case .failure(.cancelled)? = outcome.withLock({ $0 }) else {
                Issue.record("ended with \(String(describing: outcome.withLock { $0 }))")
                return
            }
        }
        #expect(pool.activeTasks.isEmpty)
    }
}
