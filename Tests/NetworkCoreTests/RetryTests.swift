import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A server script: answers by the number of requests seen so far, and records arrival times.
final class Script: @unchecked Sendable {
    // @unchecked Sendable: `arrivals` is guarded by `lock`.
    private let lock = NSLock()
    private var arrivals: [(method: String, time: Date)] = []
    let answer: @Sendable (Int) -> StubResponse

    init(_ answer: @escaping @Sendable (Int) -> StubResponse) { self.answer = answer }

    func respond(_ request: URLRequest) -> StubResponse {
        let index = lock.withLock { () -> Int in
            arrivals.append((request.httpMethod ?? "GET", Date()))
            return arrivals.count - 1
        }
        return answer(index)
    }

    var count: Int { lock.withLock { arrivals.count } }
    var times: [Date] { lock.withLock { arrivals.map(\.time) } }

    /// 503 `times` times, then 200.
    static func failing(_ times: Int, retryAfter: String? = nil) -> Script {
        Script { index in
            index < times
                ? .json("{}", statusCode: 503, headers: retryAfter.map { ["Retry-After": $0] } ?? [:])
                : .json(#"{"ok": true}"#)
        }
    }
}

/// Where a retry test runs: in-process, or over HTTP to 127.0.0.1.
enum Venue: String, CaseIterable, Sendable {
    case stub, loopback

    /// A pool for `script` at this venue, and the base URL to use; `stop` ends a server.
    func pool(
        _ script: Script, logger: any NetworkLogger = InMemoryLogger(), interceptors: [any RequestInterceptor],
        resourceTimeout: TimeInterval? = nil
    ) throws -> (pool: TaskPool, baseURL: String, stop: @Sendable () -> Void) {
        switch self {
        case .stub:
            let pool = TaskPool(
                configuration: .init(
                    transport: StubTransport { request, _ in script.respond(request) }, logger: logger,
                    resourceTimeout: resourceTimeout, interceptors: interceptors))
            return (pool, "https://stub.example", {})
        case .loopback:
            let server = try MockServer { MockResponse(script.respond($0.urlRequest)) }
            let pool = TaskPool(
                configuration: .init(
                    transport: URLSessionTransport(configuration: .ephemeral), logger: logger, requestTimeout: 10,
                    resourceTimeout: resourceTimeout, interceptors: interceptors))
            return (pool, server.baseURL, { server.stop() })
        }
    }
}

/// Retry with predictable timing: no jitter (the full ceiling), short base delay.
func fastRetry(maximumAttempts: Int = 3, baseDelay: TimeInterval = 0.05) -> RetryPolicy {
    RetryPolicy(maximumAttempts: maximumAttempts, baseDelay: baseDelay, random: { $0.upperBound })
}

@Suite("Retry, backoff and deadlines")
struct RetryTests {
    @Test("503 twice then 200 succeeds on attempt 3, visible on the task and in the log", arguments: Venue.allCases)
    func failTwiceThenSucceed(venue: Venue) async throws {
        let script = Script.failing(2)
        let logger = InMemoryLogger()
        let (pool, base, stop) = try venue.pool(script, logger: logger, interceptors: [fastRetry()])
        defer { stop() }
        let caller = immediately { try await pool.send(TestEndpoint(baseURL: base, path: "flaky"), id: "flaky") }
        let task = try #require(pool.task(id: "flaky"))
        let response = try await caller.value
        #expect(response.statusCode == 200)
        #expect(task.attempts == 3)
        #expect(task.state == .completed)
        #expect(script.count == 3)
        #expect(logger.events.map(\.kind) == [.started, .retrying, .retrying, .finished])
        let retries = logger.events.filter { $0.kind == .retrying }
        #expect(retries.map(\.attempt) == [2, 3])
        #expect(retries.allSatisfy { $0.statusCode == 503 && $0.delay != nil })
        #expect(logger.events.last?.attempt == 3)
    }

    @Test("Retry-After: 1 makes the second attempt wait at least 1 s", arguments: Venue.allCases)
    func retryAfter(venue: Venue) async throws {
        let script = Script.failing(1, retryAfter: "1")
        let (pool, base, stop) = try venue.pool(script, interceptors: [fastRetry()])
        defer { stop() }
        #expect(try await pool.send(TestEndpoint(baseURL: base)).statusCode == 200)
        let times = script.times
        #expect(times.count == 2)
        #expect(times[1].timeIntervalSince(times[0]) >= 1.0)
    }

    @Test("POST is not retried by default; it is when the policy allows it", arguments: Venue.allCases)
    func postNotRetried(venue: Venue) async throws {
        let script = Script.failing(1)
        let (pool, base, stop) = try venue.pool(script, interceptors: [fastRetry()])
        defer { stop() }
        let post = TestEndpoint(baseURL: base, method: .post, task: .bodyParameters(["a": 1]))
        await #expect(throws: NetworkError.self) { try await pool.send(post) }
        #expect(script.count == 1)
        var allowing = fastRetry()
        allowing.methods.insert(.post)
        let (pool2, base2, stop2) = try venue.pool(Script.failing(1), interceptors: [allowing])
        defer { stop2() }
        #expect(try await pool2.send(TestEndpoint(baseURL: base2, method: .post)).statusCode == 200)
    }

    /// That a deadline ends its task when its timer fires, whatever the task does, is the pool state's (see
    /// `PoolStateAttemptTests`); this is the check over a stub and a real server, by the pool's own clock.
    @Test("a 1 s deadline on a server that keeps failing ends in a timeout within 1.5 s", arguments: Venue.allCases)
    func deadline(venue: Venue) async throws {
        let script = Script { _ in .json("{}", statusCode: 503) }
        let logger = InMemoryLogger()
        let (pool, base, stop) = try venue.pool(
            script, logger: logger, interceptors: [fastRetry(maximumAttempts: 1_000, baseDelay: 0.1)],
            resourceTimeout: 1)
        defer { stop() }
        do {
            _ = try await pool.send(TestEndpoint(baseURL: base), id: "doomed")
            Issue.record("a failing server was accepted")
        } catch {
            guard case .deadlineExceeded(let seconds) = error else {
                Issue.record("expected deadlineExceeded, got \(error)")
                return
            }
            #expect(seconds == 1)
            #expect(error.isTimeout)
            #expect(!error.isCancelled)
        }
        // It ends when the deadline passes, or as soon as the next backoff would end after it: by the pool's
        // clock, when it ended the task (when the caller resumes is the machine's scheduling, not the pool's).
        let ended = try #require(logger.events(.failed).first?.duration)
        #expect(ended < 1.5 * slowRunScale, "ended after \(ended) s")
        #expect(script.count >= 1)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("an endpoint's deadline overrides the pool's, and applies without retries too")
    func endpointDeadline() async throws {
        let logger = InMemoryLogger()
        // A transport that never answers: only the deadline can end the task.
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport, logger: logger, resourceTimeout: 60))
        let error = await #expect(throws: NetworkError.self) {
            try await pool.send(DeadlineEndpoint(resourceTimeout: 0.2))
        }
        guard case .deadlineExceeded(let seconds)? = error else {
            Issue.record("expected deadlineExceeded, got \(String(describing: error))")
            return
        }
        #expect(seconds == 0.2)
        // Ended by the pool at its deadline, by the pool's clock; the end is logged and the transfer cancelled
        // before the caller resumes (the order `TaskPool.perform` keeps), so the cancel is there to read at once.
        let ended = try #require(logger.events(.failed).first?.duration)
        #expect(ended >= 0.2 && ended < 1 * slowRunScale, "ended after \(ended) s")
        #expect(transport.cancels.count == 1)
    }

    @Test(
        "cancel by id during a backoff wait ends the task at once, and it leaves the active set once",
        arguments: Venue.allCases)
    func cancelDuringBackoff(venue: Venue) async throws {
        let script = Script { _ in .json("{}", statusCode: 503, headers: ["Retry-After": "30"]) }
        let logger = InMemoryLogger()
        let retrying = EventLatch(.retrying)
        let (pool, base, stop) = try venue.pool(
            script, logger: CombinedLogger([logger, retrying]), interceptors: [fastRetry()])
        defer { stop() }
        let ended = Locked<(at: Date, error: NetworkError?)?>(nil)
        pool.send(TestEndpoint(baseURL: base), id: "waiting") { result in
            ended.withLock { $0 = (Date(), result.failureValue) }
        }
        // The retry is logged once decided: the task backs off from then.
        await retrying.latch.wait()
        #expect(pool.task(id: "waiting")?.phase == .backingOff(beforeAttempt: 2))
        let task = try #require(pool.task(id: "waiting"))
        let cancelledAt = Date()
        #expect(pool.cancel(id: "waiting"))
        // At once: before cancel(id:) returned, the caller had its outcome and the task had left the active set.
        let outcome = try #require(ended.withLock { $0 })
        #expect(outcome.error?.isCancelled == true)
        #expect(outcome.at.timeIntervalSince(cancelledAt) < 0.1 * slowRunScale)
        #expect(task.state == .cancelled)
        #expect(pool.activeTasks.isEmpty)
        #expect(pool.cancel(id: "waiting") == false)
        #expect(pool.timerCount == 0, "its retry's wait is gone with it")
        #expect(script.count == 1)
        #expect(logger.count(.cancelled) == 1)
        #expect(logger.events.filter { $0.kind != .started && $0.kind != .retrying }.count == 1)
    }

    @Test("a retry's wait begins once the retry is logged: a logger slow on it sees nothing of the next attempt first")
    func retryLoggedBeforeTheNextAttempt() async throws {
        let second = DispatchSemaphore(value: 0)
        let script = Script { index in
            if index == 1 { second.signal() }
            return index == 0 ? .json("{}", statusCode: 503) : .json(#"{"ok": true}"#)
        }
        /// On the retry, waits (0.3 s at most) for the next attempt's request, and notes how many had come.
        final class SlowOnRetry: NetworkLogger {
            let script: Script
            let second: DispatchSemaphore
            let requestsWhenLogged = Locked<[Int]>([])
            init(script: Script, second: DispatchSemaphore) {
                self.script = script
                self.second = second
            }
            func log(_ event: TaskEvent) {
                guard event.kind == .retrying else { return }
                _ = second.wait(timeout: .now() + 0.3)
                requestsWhenLogged.withLock { $0.append(script.count) }
            }
        }
        let slow = SlowOnRetry(script: script, second: second)
        let logger = InMemoryLogger()
        let (pool, base, _) = try Venue.stub.pool(
            script, logger: CombinedLogger([slow, logger]), interceptors: [fastRetry(baseDelay: 0.001)])
        #expect(try await pool.send(TestEndpoint(baseURL: base)).statusCode == 200)
        // Before, the retry's 1 ms timer was armed as the retry was decided, and the next attempt could run,
        // on another thread, while the retry was still being logged.
        #expect(slow.requestsWhenLogged.withLock { $0 } == [1])
        #expect(logger.events.map(\.kind) == [.started, .retrying, .finished])
        #expect(script.count == 2)
    }

    @Test("a cancelled task is never retried")
    func cancelledNotRetried() async throws {
        let calls = Counter()
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { _, _ in
                    calls.increment()
                    throw URLError(.cancelled)
                }, interceptors: [fastRetry()]))
        let error = await #expect(throws: NetworkError.self) { try await pool.send(TestEndpoint()) }
        #expect(error?.isCancelled == true)
        #expect(calls.count == 1)
    }

    @Test("the pool caps attempts whatever an interceptor decides")
    func attemptCap() async throws {
        struct Always: RequestInterceptor {
            func retry(
                _ request: URLRequest, failing failure: NetworkError, context: AttemptContext
            ) async -> RetryDecision {
                .retry(after: 0)
            }
        }
        let calls = Counter()
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { _, _ in
                    calls.increment()
                    return .json("{}", statusCode: 500)
                }, interceptors: [Always()], maximumAttempts: 4))
        let error = await #expect(throws: NetworkError.self) { try await pool.send(TestEndpoint()) }
        #expect(error?.statusCode == 500)
        #expect(calls.count == 4)
    }

    @Test(
        "transient network errors are retried; others are not",
        arguments: [
            (URLError.Code.networkConnectionLost, 2), (.cannotConnectToHost, 2), (.timedOut, 2), (.badURL, 1),
            (.notConnectedToInternet, 2), (.cannotFindHost, 1),
        ])
    func networkErrors(code: URLError.Code, expectedCalls: Int) async throws {
        let calls = Counter()
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { _, _ in
                    if calls.increment() == 1 { throw URLError(code) }
                    return .json("{}")
                }, interceptors: [fastRetry()]))
        _ = try? await pool.send(TestEndpoint())
        #expect(calls.count == expectedCalls)
    }

    @Test("backoff is exponential with full jitter under a cap")
    func backoff() {
        let ceiling = RetryPolicy(baseDelay: 0.5, maximumDelay: 4, random: { $0.upperBound })
        #expect((2...7).map { ceiling.delay(beforeAttempt: $0) } == [0.5, 1, 2, 4, 4, 4])
        let floor = RetryPolicy(baseDelay: 0.5, random: { $0.lowerBound })
        #expect(floor.delay(beforeAttempt: 5) == 0)
        let real = RetryPolicy(baseDelay: 1, maximumDelay: 8)
        let samples = (0..<200).map { _ in real.delay(beforeAttempt: 4) }
        #expect(samples.allSatisfy { (0...4).contains($0) })
        #expect(Set(samples).count > 100)
    }

    @Test(
        "Retry-After is read as seconds or an HTTP date",
        arguments: [
            ("120", 120.0), ("0", 0.0), ("Sun, 06 Nov 1994 08:49:47 GMT", 10.0), ("Sun, 06 Nov 1994 08:49:27 GMT", 0.0),
            ("soon", nil), ("-5", nil), ("", nil),
        ])
    func retryAfterParsing(value: String, seconds: Double?) {
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(RetryAfter.seconds(value, now: now) == seconds)
    }

    @Test("a Retry-After longer than the policy allows is not waited for")
    func longRetryAfter() async throws {
        let script = Script.failing(1, retryAfter: "3600")
        let (pool, base, stop) = try Venue.stub.pool(script, interceptors: [fastRetry()])
        defer { stop() }
        let error = await #expect(throws: NetworkError.self) { try await pool.send(TestEndpoint(baseURL: base)) }
        #expect(error?.statusCode == 503)
        #expect(script.count == 1)
    }

    @Test(
        "httpbin: /status/503 is retried up to the policy's limit, then fails with 503",
        .enabled(if: HTTPBin.url != nil, "NETWORKCORE_HTTPBIN_URL is not set"))
    func httpbinRetries() async throws {
        let logger = InMemoryLogger()
        let pool = TaskPool(configuration: .init(logger: logger, interceptors: [fastRetry(maximumAttempts: 3)]))
        let error = await #expect(throws: NetworkError.self) { try await pool.send(HTTPBinEndpoint.status(503)) }
        #expect(error?.statusCode == 503)
        #expect(logger.count(.retrying) == 2)
        #expect(logger.events.last?.attempt == 3)
    }
}

/// An endpoint with its own deadline.
struct DeadlineEndpoint: Endpoint {
    var baseURL = "https://api.example.com"
    var path = "slow"
    var resourceTimeout: TimeInterval?
}
