import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A server with one valid token at a time. It logs the token of every request in arrival order,
/// holds its 401 answers until `barrier` requests have arrived (so a whole wave is sent before
/// any refresh can start; at most a minute, however slow the machine), and issues a new token on refresh.
final class TokenServer: @unchecked Sendable {
    // @unchecked Sendable: all mutable state is guarded by `lock`.
    private let lock = NSCondition()
    /// Opens when `barrier` requests have arrived.
    private let wave = Latch()
    /// Opens when the first refresh has begun.
    let refreshBegan = Latch()
    private var current = "token-1"
    private var tokens: [String?] = []
    private var refreshStartedAt: Int?
    private var refreshes = 0
    let barrier: Int
    let refreshDelay: TimeInterval
    let refreshFails: Bool
    let acceptsAnything: Bool

    init(barrier: Int = 1, refreshDelay: TimeInterval = 0.2, refreshFails: Bool = false, acceptsAnything: Bool = true) {
        self.barrier = barrier
        self.refreshDelay = refreshDelay
        self.refreshFails = refreshFails
        self.acceptsAnything = acceptsAnything
    }

    var refreshCount: Int { lock.withLock { refreshes } }
    var requestCount: Int { lock.withLock { tokens.count } }
    var validToken: String { lock.withLock { current } }

    /// Requests that arrived after the first refresh started and did not carry the token it issued.
    var staleAfterRefresh: Int {
        lock.withLock {
            guard let start = refreshStartedAt else { return 0 }
            return tokens[start...].filter { $0 != current }.count
        }
    }

    /// Records the request; returns whether its token is valid.
    private func arrive(_ request: URLRequest) -> Bool {
        let token = request.value(forHTTPHeaderField: "Authorization").map { String($0.dropFirst("Bearer ".count)) }
        let (valid, arrived) = lock.withLock {
            tokens.append(token)
            if tokens.count >= barrier { lock.broadcast() }
            return (acceptsAnything ? token == current : false, tokens.count >= barrier)
        }
        if arrived { wave.open() }
        return valid
    }

    private func answer(valid: Bool) -> StubResponse {
        valid ? .json(#"{"ok": true}"#) : .json(#"{"message": "token expired"}"#, statusCode: 401)
    }

    /// For the in-process stub: waits at the barrier without a thread.
    func respond(_ request: URLRequest) async -> StubResponse {
        let valid = arrive(request)
        if !valid { await wave.wait() }
        return answer(valid: valid)
    }

    /// For the loopback server: each connection has its own thread, so it may block, for a minute at most.
    func respondBlocking(_ request: URLRequest) -> StubResponse {
        if request.url?.path == "/refresh" { return refreshBlocking() }
        let valid = arrive(request)
        if !valid {
            let limit = Date().addingTimeInterval(60)
            lock.lock()
            while tokens.count < barrier, lock.wait(until: limit) {}
            lock.unlock()
        }
        return answer(valid: valid)
    }

    private func startRefresh() -> Int {
        let number = lock.withLock {
            if refreshStartedAt == nil { refreshStartedAt = tokens.count }
            refreshes += 1
            return refreshes
        }
        refreshBegan.open()
        return number
    }

    private func finishRefresh(_ number: Int) -> String? {
        lock.withLock {
            guard !refreshFails else { return nil }
            current = "token-\(number + 1)"
            return current
        }
    }

    /// The refresh endpoint, in-process.
    func refresh() async throws -> String {
        let number = startRefresh()
        try await Task.sleep(nanoseconds: UInt64(refreshDelay * 1e9))
        guard let token = finishRefresh(number) else { throw URLError(.userAuthenticationRequired) }
        return token
    }

    private func refreshBlocking() -> StubResponse {
        let number = startRefresh()
        Thread.sleep(forTimeInterval: refreshDelay)
        guard let token = finishRefresh(number) else {
            return .json(#"{"message": "refresh denied"}"#, statusCode: 500)
        }
        return .json(#"{"token": "\#(token)"}"#)
    }
}

/// A bearer-token authenticator whose refresh is a closure.
struct TokenAuthenticator: Authenticator {
    let renew: @Sendable (String?) async throws -> String
    var expired: Set<String> = []

    func apply(_ credential: String, to request: inout URLRequest) {
        request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
    }

    func isRequest(_ request: URLRequest, authenticatedWith credential: String) -> Bool {
        request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential)"
    }

    func refresh(_ credential: String?) async throws -> String { try await renew(credential) }

    func isExpired(_ credential: String) -> Bool { expired.contains(credential) }
}

/// Sets up a pool with an authentication interceptor against a token server, in-process or over HTTP.
struct AuthRig {
    let pool: TaskPool
    let interceptor: AuthenticationInterceptor<TokenAuthenticator>
    let baseURL: String
    let stop: @Sendable () -> Void

    init(
        _ venue: Venue, server: TokenServer, credential: String? = "token-0", expired: Set<String> = [],
        maximumRefreshes: Int = 3, logger: InMemoryLogger = InMemoryLogger()
    ) throws {
        switch venue {
        case .stub:
            interceptor = AuthenticationInterceptor(
                authenticator: TokenAuthenticator(renew: { _ in try await server.refresh() }, expired: expired),
                credential: credential, maximumRefreshes: maximumRefreshes)
            pool = TaskPool(
                configuration: .init(
                    transport: StubTransport { request, _ in await server.respond(request) }, logger: logger,
                    interceptors: [interceptor], maximumConcurrentTasks: 128, maximumTasksPerHost: 128))
            baseURL = "https://stub.example"
            stop = {}
        case .loopback:
            let http = try MockServer { MockResponse(server.respondBlocking($0.urlRequest)) }
            let base = http.baseURL
            // Refreshes go through a pool of their own, without the interceptor.
            let refresher = TaskPool(configuration: .init(transport: URLSessionTransport(configuration: .ephemeral)))
            interceptor = AuthenticationInterceptor(
                authenticator: TokenAuthenticator(
                    renew: { _ in
                        struct Token: Decodable, Sendable { let token: String }
                        return try await refresher.send(
                            TestEndpoint(baseURL: base, path: "refresh"), parser: DecodableParser<Token>()
                        ).token
                    }, expired: expired),
                credential: credential, maximumRefreshes: maximumRefreshes)
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpMaximumConnectionsPerHost = 128
            pool = TaskPool(
                configuration: .init(
                    transport: URLSessionTransport(configuration: configuration), logger: logger, requestTimeout: 90,
                    interceptors: [interceptor], maximumConcurrentTasks: 128, maximumTasksPerHost: 128))
            baseURL = base
            stop = { http.stop() }
        }
    }

    func endpoint(_ index: Int) -> TestEndpoint { TestEndpoint(baseURL: baseURL, path: "resource/\(index)") }

    /// Sends `count` requests at once; returns how many succeeded and the errors of the rest.
    func wave(_ count: Int, from first: Int = 0) async -> (successes: Int, errors: [NetworkError]) {
        await withTaskGroup(of: Result<Int, NetworkError>.self) { group in
            for index in first..<(first + count) {
                group.addTask {
                    do throws(NetworkError) {
                        return .success(try await pool.send(endpoint(index), id: "r\(index)").statusCode)
                    } catch {
                        return .failure(error)
                    }
                }
            }
            var successes = 0
            var errors: [NetworkError] = []
            for await result in group {
                switch result {
                case .success(let status): successes += status == 200 ? 1 : 0
                case .failure(let error): errors.append(error)
                }
            }
            return (successes, errors)
        }
    }
}

@Suite("Authentication: single-flight refresh")
struct AuthenticationTests {
    @Test(
        "100 concurrent 401s: exactly 1 refresh, 100 successful replays, 0 requests with the old token after it started",
        arguments: Venue.allCases)
    func singleFlight(venue: Venue) async throws {
        let server = TokenServer(barrier: 100, refreshDelay: 0.3)
        let logger = InMemoryLogger()
        let rig = try AuthRig(venue, server: server, logger: logger)
        defer { rig.stop() }
        // A second wave, sent while the refresh runs: it must wait for the new token.
        async let late: (successes: Int, errors: [NetworkError]) = {
            await server.refreshBegan.wait()
            return await rig.wave(20, from: 100)
        }()
        let first = await rig.wave(100)
        let second = await late
        #expect(first.successes == 100)
        #expect(first.errors.isEmpty)
        #expect(second.successes == 20)
        #expect(server.refreshCount == 1)
        #expect(await rig.interceptor.refreshCount == 1)
        #expect(server.staleAfterRefresh == 0)
        // 100 stale requests, 100 replays and 20 late ones with the new token.
        #expect(server.requestCount == 220)
        #expect(await rig.interceptor.currentCredential == server.validToken)
        #expect(rig.pool.activeTasks.isEmpty)
        #expect(logger.count(.retrying) == 100)
        #expect(logger.count(.credentialRefreshed) == 1)
        #expect(logger.count(.finished) == 120)
    }

    @Test(
        "the refresh fails: 100 typed authentication errors, credential cleared, 1 refresh attempt",
        arguments: Venue.allCases)
    func refreshFails(venue: Venue) async throws {
        let server = TokenServer(barrier: 100, refreshDelay: 0.1, refreshFails: true)
        let rig = try AuthRig(venue, server: server)
        defer { rig.stop() }
        let result = await rig.wave(100)
        #expect(result.successes == 0)
        #expect(result.errors.count == 100)
        for error in result.errors {
            guard case .authenticationFailed(.refreshFailed) = error else {
                Issue.record("expected authenticationFailed(.refreshFailed), got \(error)")
                continue
            }
        }
        #expect(server.refreshCount == 1)
        #expect(await rig.interceptor.currentCredential == nil)
        #expect(server.requestCount == 100)
        // No loop: a later request fails at once, without a request or another refresh.
        let later = await rig.wave(1, from: 500)
        guard case .authenticationFailed(.refreshFailed)? = later.errors.first else {
            Issue.record("a later request did not fail with the refresh error")
            return
        }
        #expect(server.requestCount == 100)
        #expect(server.refreshCount == 1)
        #expect(rig.pool.activeTasks.isEmpty)
    }

    @Test(
        "a server that rejects every new token gets a bounded number of refreshes, then a typed error",
        arguments: Venue.allCases)
    func noRefreshStorm(venue: Venue) async throws {
        let server = TokenServer(refreshDelay: 0.01, acceptsAnything: false)
        let rig = try AuthRig(venue, server: server, maximumRefreshes: 3)
        defer { rig.stop() }
        let result = await rig.wave(1)
        guard case .authenticationFailed(.tooManyRefreshes(let count, _))? = result.errors.first else {
            Issue.record("expected tooManyRefreshes, got \(result.errors)")
            return
        }
        #expect(count == 3)
        #expect(server.refreshCount == 3)
        #expect(server.requestCount == 4)
        #expect(await rig.interceptor.currentCredential == nil)
    }

    @Test("a credential known to have expired is renewed before use, not after a 401", arguments: Venue.allCases)
    func proactiveRefresh(venue: Venue) async throws {
        let server = TokenServer(refreshDelay: 0.05)
        let rig = try AuthRig(venue, server: server, credential: "token-0", expired: ["token-0"])
        defer { rig.stop() }
        let result = await rig.wave(10)
        #expect(result.successes == 10)
        #expect(server.refreshCount == 1)
        #expect(server.requestCount == 10)
        #expect(server.staleAfterRefresh == 0)
    }

    @Test(
        "cancel by id while waiting for a refresh: cancelled at once, leaves the active set once, never sent",
        arguments: Venue.allCases)
    func cancelDuringRefresh(venue: Venue) async throws {
        // A refresh long enough for the second send to be seen waiting for it on a machine that is busy.
        let server = TokenServer(refreshDelay: 3.0)
        let logger = InMemoryLogger()
        let rig = try AuthRig(venue, server: server, logger: logger)
        defer { rig.stop() }
        let first = Task { await rig.wave(1) }
        await server.refreshBegan.wait()
        let ended = Locked<(at: Date, error: NetworkError?)?>(nil)
        rig.pool.send(rig.endpoint(7), id: "waiting") { result in ended.withLock { $0 = (Date(), result.failureValue) }
        }
        #expect(await eventually { rig.pool.task(id: "waiting")?.phase == .waitingForCredential })
        let task = try #require(rig.pool.task(id: "waiting"))
        let cancelledAt = Date()
        #expect(rig.pool.cancel(id: "waiting"))
        // At once: before cancel(id:) returned, the caller had its outcome and the task had left the active set.
        let outcome = try #require(ended.withLock { $0 })
        #expect(outcome.error?.isCancelled == true)
        #expect(outcome.at.timeIntervalSince(cancelledAt) < 0.1 * slowRunScale)
        #expect(task.state == .cancelled)
        #expect(rig.pool.task(id: "waiting") == nil)
        // The refresh goes on for the others.
        #expect(await first.value.successes == 1)
        #expect(server.refreshCount == 1)
        // The cancelled send never reached the server: its task had ended before it could be sent.
        #expect(server.requestCount == 2)
        #expect(logger.events.filter { $0.taskID == "waiting" }.map(\.kind) == [.started, .cancelled])
    }

    @Test("an endpoint can opt out of authentication")
    func optOut() async throws {
        let seen = Locked<[String?]>([])
        let interceptor = AuthenticationInterceptor(
            authenticator: TokenAuthenticator(renew: { _ in "fresh" }), credential: "token-0")
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { request, _ in
                    seen.withLock { $0.append(request.value(forHTTPHeaderField: "Authorization")) }
                    return .json("{}", statusCode: 401)
                }, interceptors: [interceptor]))
        await #expect(throws: NetworkError.self) { try await pool.send(LoginEndpoint()) }
        #expect(seen.withLock { $0 } == [nil])
        #expect(await interceptor.refreshCount == 0)
    }

    @Test("a rejection can be a 2xx body with the server's own code")
    func customRejection() async throws {
        struct SessionAuthenticator: Authenticator {
            func apply(_ credential: String, to request: inout URLRequest) {
                request.setValue(credential, forHTTPHeaderField: "X-Session")
            }
            func isRequest(_ request: URLRequest, authenticatedWith credential: String) -> Bool {
                request.value(forHTTPHeaderField: "X-Session") == credential
            }
            func refresh(_ credential: String?) async throws -> String { "session-2" }
            func isRejection(_ failure: NetworkError, of request: URLRequest) -> Bool { failure.serverError?.code == 3 }
        }
        let interceptor = AuthenticationInterceptor(authenticator: SessionAuthenticator(), credential: "session-1")
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { request, _ in
                    request.value(forHTTPHeaderField: "X-Session") == "session-2"
                        ? .json(#"{"success": true}"#) : .json(#"{"success": false, "status_code": 3}"#)
                }, statusReader: JSONStatusReader(codeKeys: ["status_code"], successKey: "success"),
                interceptors: [interceptor]))
        #expect(try await pool.send(TestEndpoint()).statusCode == 200)
        #expect(await interceptor.refreshCount == 1)
    }

    @Test("a request no longer current is adapted again, with the context's adaptation counting; the last one is sent")
    func adaptedAgain() async throws {
        /// Stamps each adaptation; its request stays current from the third one.
        final class Stamper: RequestInterceptor, Sendable {
            let seen = Locked<[Int]>([])
            func adapt(_ request: URLRequest, context: AttemptContext) async throws -> URLRequest {
                seen.withLock { $0.append(context.adaptation) }
                var stamped = request
                stamped.setValue("\(context.adaptation)", forHTTPHeaderField: "X-Adaptation")
                return stamped
            }
            func isCurrent(_ request: URLRequest, context: AttemptContext) -> Bool { context.adaptation >= 3 }
        }
        let stamper = Stamper()
        let sent = Locked<[String?]>([])
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { request, _ in
                    sent.withLock { $0.append(request.value(forHTTPHeaderField: "X-Adaptation")) }
                    return .json("{}")
                }, interceptors: [stamper]))
        #expect(try await pool.send(TestEndpoint()).statusCode == 200)
        #expect(stamper.seen.withLock { $0 } == [1, 2, 3])
        #expect(sent.withLock { $0 } == ["3"])
    }

    @Test("no credential at all is a typed error, not a request")
    func noCredential() async throws {
        let calls = Counter()
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { _, _ in
                    calls.increment()
                    return .json("{}")
                },
                interceptors: [
                    AuthenticationInterceptor(authenticator: TokenAuthenticator(renew: { _ in "x" }), credential: nil)
                ]))
        let error = await #expect(throws: NetworkError.self) { try await pool.send(TestEndpoint()) }
        guard case .authenticationFailed(.noCredential)? = error else {
            Issue.record("expected noCredential, got \(String(describing: error))")
            return
        }
        #expect(calls.count == 0)
        #expect(error?.localizedDescription == "Could not authenticate: there is no credential.")
    }
}

/// A login call: it must not carry or renew a credential.
struct LoginEndpoint: Endpoint {
    var baseURL: String { "https://api.example.com" }
    var path: String { "login" }
    var method: HTTPMethod { .post }
    var requiresAuthentication: Bool { false }
}
