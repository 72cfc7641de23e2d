import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Observability: timings, stalls, events, snapshots")
struct ObservabilityTests {
    /// Every timing relation that must hold.
    func checkMonotonic(_ timings: TaskTimings, sourceLocation: SourceLocation = #_sourceLocation) {
        let started = timings.started ?? -1
        #expect(started >= 0, sourceLocation: sourceLocation)
        #expect((timings.firstByte ?? -1) >= started, sourceLocation: sourceLocation)
        #expect((timings.finished ?? -1) >= (timings.firstByte ?? .infinity), sourceLocation: sourceLocation)
        var previousEnd = 0.0
        for attempt in timings.attempts {
            #expect(attempt.start >= previousEnd, sourceLocation: sourceLocation)
            #expect((attempt.firstByte ?? -1) >= attempt.start, sourceLocation: sourceLocation)
            #expect(attempt.end >= (attempt.firstByte ?? .infinity), sourceLocation: sourceLocation)
            previousEnd = attempt.end
        }
        #expect(
            timings.attempts.reduce(0) { $0 + $1.duration } <= (timings.total ?? 0) + 1e-9,
            sourceLocation: sourceLocation)
    }

    @Test("timings are monotonic and add up, across retries; bytes each way are counted")
    func timingsWithRetries() async throws {
        let script = Script.failing(2)
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport(delay: 0.02) { request, _ in script.respond(request) },
                interceptors: [fastRetry()]))
        pool.send(TestEndpoint(method: .put, task: .bodyParameters(["name": "x"])), id: "t") { _ in }
        let task = try #require(pool.task(id: "t"))
        let response = try await pool.send(TestEndpoint(method: .put, task: .bodyParameters(["name": "x"])), id: "t")
        let timings = task.timings
        #expect(timings.attempts.map(\.number) == [1, 2, 3])
        #expect(timings.attempts.map(\.statusCode) == [503, 503, 200])
        #expect(timings.attempts.allSatisfy { $0.bytesSent == 12 })
        #expect(timings.bytesSent == 36)
        #expect(timings.bytesReceived == 2 + 2 + 12)
        #expect(task.bytesReceived == timings.bytesReceived)
        #expect(response.timing == timings.attempts.last)
        #expect((response.timing?.duration ?? 0) >= 0.02)
        #expect(timings.queuedAt == task.startDate)
        checkMonotonic(timings)
    }

    @Test("a task cancelled mid-attempt ends with that attempt closed, and its figures stop changing")
    func timingsFinalOnCancel() async throws {
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        pool.send(TestEndpoint(method: .post, task: .data(Data("abc".utf8), contentType: "text/plain")), id: "c") { _ in
        }
        let task = try #require(pool.task(id: "c"))
        #expect(task.phase == .sending)
        #expect(pool.cancel(id: "c"))
        let atEnd = task.timings
        #expect(atEnd.attempts.count == 1)
        #expect(atEnd.attempts.first?.statusCode == nil)
        #expect(atEnd.attempts.first?.bytesSent == 3)
        #expect(atEnd.attempts.first?.firstByte == nil)
        let attempt = try #require(atEnd.attempts.first)
        #expect(attempt.start >= (atEnd.started ?? .infinity))
        #expect(attempt.end >= attempt.start)
        #expect((atEnd.finished ?? -1) >= attempt.end)
        // The transport's own ending came with the cancel, after the task's; nothing changed with it.
        #expect(transport.cancels.count == 1)
        #expect(task.timings == atEnd)
        #expect(task.bytesReceived == 0)
    }

    @Test("what a transport reports after the task was cancelled is neither logged nor counted")
    func lateReportsIgnored() async throws {
        let logger = InMemoryLogger()
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport, logger: logger))
        pool.send(TestEndpoint(), id: "late") { _ in }
        let task = try #require(pool.task(id: "late"))
        let kept = Locked(transport.events(0))
        #expect(pool.cancel(id: "late"))
        // A transport that reports anyway, as a slow one might.
        // Kept from when it ran: the transport let its events go with the cancel.
        let events = try #require(kept.withLock { $0 })
        events.redirected(statusCode: 302, to: URL(string: "https://late.example/next"))
        #expect(!events.receive(head: DrivenTransport.head(200)))
        #expect(!events.receive(body: Data(count: 10)))
        events.finish()
        #expect(logger.events.map(\.kind) == [.started, .cancelled])
        #expect(task.bytesReceived == 0)
        #expect(task.redirects == 0)
    }

    @Test(
        "timings over HTTP: httpbin's /delay/1 waits about a second for its first byte",
        .enabled(if: HTTPBin.url != nil, "NETWORKCORE_HTTPBIN_URL is not set"))
    func timingsHTTPBin() async throws {
        let pool = TaskPool()
        pool.send(HTTPBinEndpoint.delay(seconds: 1), id: "d") { _ in }
        let task = try #require(pool.task(id: "d"))
        let response = try await pool.send(HTTPBinEndpoint.delay(seconds: 1), id: "d")
        checkMonotonic(task.timings)
        let wait = try #require(response.timing?.timeToFirstByte)
        #expect(wait >= 0.9)
        #expect(task.timings.bytesReceived == response.body.count)
    }

    @Test("a silent task is reported stalled by the pool's own timer, with its row and how long nothing moved")
    func stallReported() async throws {
        let logger = InMemoryLogger()
        let stalled = EventLatch(.stalled)
        let transport = HoldingTransport()
        // The pool's timer checks after 50 ms; the transfer stays silent until the report has come.
        let pool = TaskPool(
            configuration: .init(transport: transport, logger: CombinedLogger([logger, stalled]), stallThreshold: 0.05))
        pool.send(TestEndpoint(path: "slow"), id: "slow") { _ in }
        await stalled.latch.wait()
        transport.answer()
        let stalls = logger.events(.stalled)
        #expect(stalls.count == 1)
        #expect(stalls.first?.taskID == "slow")
        let row = try #require(stalls.first?.snapshot)
        #expect(row.id == "slow")
        #expect(row.phase == "sending")
        #expect(row.elapsed >= 0.05)
        #expect(stalls.first?.level == .warning)
        let silence = try #require(stalls.first?.silence)
        #expect(silence >= 0.05)
        // A GET has nothing to send: the console says it waits for the answer, and how long nothing moved.
        let line = ConsoleLogger.format(try #require(stalls.first))
        #expect(
            line.contains("nothing moved for \(Int((silence * 1000).rounded())) ms while waiting for the answer ("),
            "\(line)")
    }

    @Test("the console says what a stalled task was doing: waiting for the answer, sending, receiving")
    func stallWording() {
        func line(phase: String, sent: Int, toSend: Int?) -> String {
            let row = TaskSnapshot(
                id: "t", service: "S", method: "POST", url: "https://x.test/a", phase: phase, attempt: 1, redirects: 0,
                elapsed: 2.5, bytesReceived: 4,
                progress: TransferProgress(bytesSent: sent, bytesToSend: toSend, bytesReceived: 4), startDate: Date())
            return ConsoleLogger.format(
                TaskEvent(
                    kind: .stalled, taskID: "t", method: "POST", url: row.url, attempt: 1, snapshot: row, silence: 1.2))
        }
        #expect(
            line(phase: "sending", sent: 10, toSend: 10).contains(
                "nothing moved for 1200 ms while waiting for the answer (2500 ms in)"))
        #expect(
            line(phase: "sending", sent: 3, toSend: 10).contains("nothing moved for 1200 ms while sending (2500 ms in)")
        )
        #expect(
            line(phase: "receiving", sent: 10, toSend: 10).contains(
                "nothing moved for 1200 ms while receiving (2500 ms in)"))
    }

    @Test(
        "a stall threshold that is negative, zero or not a number counts as a millisecond: no trap",
        arguments: [
            -1, 0, Double.nan,
        ])
    func stallThresholdOutOfRange(threshold: Double) async throws {
        let logger = InMemoryLogger()
        let stalled = EventLatch(.stalled)
        let transport = HoldingTransport()
        let pool = TaskPool(
            configuration: .init(
                transport: transport, logger: CombinedLogger([logger, stalled]), stallThreshold: threshold))
        pool.send(TestEndpoint(path: "slow"), id: "slow") { _ in }
        await stalled.latch.wait()
        transport.answer()
        #expect(logger.events(.stalled).map(\.taskID) == ["slow"])
    }

    /// When the stall detector reports is the pool state's (its tables in `PoolStateTimerTests`): this is
    /// the check over a real server.
    @Test(
        "httpbin: /drip with a long delay is reported stalled, once",
        .enabled(if: HTTPBin.url != nil, "NETWORKCORE_HTTPBIN_URL is not set"))
    func stallDrip() async throws {
        let logger = InMemoryLogger()
        // A threshold well below the drip's 3.5 s of silence.
        let pool = TaskPool(configuration: .init(logger: logger, stallThreshold: 1))
        _ = try await pool.send(DripEndpoint(), id: "drip")
        #expect(logger.events(.stalled).map(\.taskID) == ["drip"])
    }

    @Test(
        "httpbin: each redirect is an event naming where it went",
        .enabled(if: HTTPBin.url != nil, "NETWORKCORE_HTTPBIN_URL is not set"))
    func redirects() async throws {
        let logger = InMemoryLogger()
        let pool = TaskPool(configuration: .init(logger: logger))
        _ = try await pool.send(HTTPBinEndpoint.redirect(times: 2))
        let redirects = logger.events(.redirected)
        #expect(redirects.count == 2)
        #expect(redirects.allSatisfy { $0.statusCode == 302 && $0.level == .debug })
        #expect(redirects.last?.redirectURL?.hasSuffix("/get") == true)
    }

    @Test("snapshots are the table's rows as data, with the service that started each task")
    func snapshots() async throws {
        let pool = TaskPool(configuration: .init(transport: HoldingTransport()))
        pool.send(TestEndpoint(task: .urlParameters(["token": "SECRET"])), id: "one") { _ in }
        pool.send(ServiceEndpoint(), id: "two") { _ in }
        let rows = pool.activeTaskSnapshots
        #expect(rows.map(\.id) == ["one", "two"])
        #expect(rows.map(\.service) == ["TestEndpoint", "Catalog"])
        #expect(rows[0].url == "https://api.example.com/v1/items?token=<redacted>")
        #expect(rows.allSatisfy { $0.phase == "sending" && $0.attempt == 1 && $0.bytesReceived == 0 })
        let table = pool.debugDescription.split(separator: "\n")
        #expect(table[0].hasPrefix("id   service"))
        #expect(table[2].contains("Catalog"))
        let data = try JSONEncoder().encode(rows)
        #expect(try JSONDecoder().decode([TaskSnapshot].self, from: data) == rows)
        pool.cancelAll()
    }

    @Test("levels: a console logger at .warning writes only retries, stalls and failures")
    func levels() async throws {
        let lines = Locked<[String]>([])
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { request, _ in
                    request.url!.path.hasSuffix("bad") ? .json("{}", statusCode: 404) : .json("{}")
                }, logger: ConsoleLogger(minimumLevel: .warning) { line in lines.withLock { $0.append(line) } }))
        _ = try await pool.send(TestEndpoint(path: "good"))
        _ = try? await pool.send(TestEndpoint(path: "bad"))
        let output = lines.withLock { $0 }
        #expect(output.count == 1)
        #expect(output.first?.hasPrefix("[NetworkCore] failed    404") == true)
        #expect(TaskEvent.Kind.allCases.count == 11)
        #expect(TaskEvent.Level.debug < .info && TaskEvent.Level.info < .warning && TaskEvent.Level.warning < .error)
    }

    @Test("the credential renewal is an event of the task that waited for it")
    func credentialEvent() async throws {
        let logger = InMemoryLogger()
        let interceptor = AuthenticationInterceptor(
            authenticator: TokenAuthenticator(renew: { _ in "fresh" }), credential: "stale")
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { request, _ in
                    request.value(forHTTPHeaderField: "Authorization") == "Bearer fresh"
                        ? .json("{}") : .json("{}", statusCode: 401)
                }, logger: logger, interceptors: [interceptor]))
        _ = try await pool.send(TestEndpoint(), id: "needs-auth")
        #expect(logger.events.map(\.kind) == [.started, .credentialRefreshed, .retrying, .finished])
        #expect(logger.events(.credentialRefreshed).first?.taskID == "needs-auth")
    }
}

/// An endpoint of a service called "Catalog".
struct ServiceEndpoint: Endpoint {
    var baseURL: String { "https://api.example.com" }
    var path: String { "catalog" }
    var service: String { "Catalog" }
}

/// httpbin's `/drip`: a 1 s delay, then 2 bytes over 1 s.
struct DripEndpoint: Endpoint {
    var baseURL: String { HTTPBin.url ?? "http://127.0.0.1:1" }
    var path: String { "drip" }
    var task: HTTPTask { .urlParameters(["duration": 1, "numbytes": 2, "delay": 3.5, "code": 200]) }
}

/// A logger that opens its latch at the first event of a kind: a test waits for that event without polling.
struct EventLatch: NetworkLogger {
    let kind: TaskEvent.Kind
    let latch = Latch()

    init(_ kind: TaskEvent.Kind) { self.kind = kind }

    func log(_ event: TaskEvent) {
        if event.kind == kind { latch.open() }
    }
}
