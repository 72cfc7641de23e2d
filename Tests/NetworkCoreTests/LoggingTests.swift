import Foundation
import Testing

@testable import NetworkCore

@Suite("Logging and redaction")
struct LoggingTests {
    @Test("the pool reports start and finish with status, bytes and duration")
    func events() async throws {
        let logger = InMemoryLogger()
        let pool = TaskPool.stubbed(delay: 0.05, logger: logger) { _, _ in .json(#"{"a": 1}"#, statusCode: 201) }
        _ = try await pool.send(TestEndpoint(path: "things"), id: "make")
        let events = logger.events
        #expect(events.map(\.kind) == [.started, .finished])
        #expect(events.allSatisfy { $0.taskID == "make" && $0.method == "GET" && $0.service == "TestEndpoint" })
        #expect(events[0].url == "https://api.example.com/v1/things")
        #expect(events[0].duration == nil)
        #expect(events[1].statusCode == 201)
        #expect(events[1].bytesReceived == 8)
        #expect((events[1].duration ?? 0) >= 0.05)
        #expect(events[1].error == nil)
    }

    @Test("a combined logger gives every event to each of its loggers, in order")
    func combined() async throws {
        let first = InMemoryLogger()
        let lines = Locked<[String]>([])
        let console = ConsoleLogger(minimumLevel: .info) { line in lines.withLock { $0.append(line) } }
        let combined = TaskPool(
            configuration: .init(
                transport: StubTransport { _, _ in .json("{}") }, logger: CombinedLogger([first, console])))
        _ = try await combined.send(TestEndpoint(path: "x"), id: "x")
        #expect(first.events.map(\.kind) == [.started, .finished])
        #expect(lines.withLock { $0.count as Int } == 1)  // the console logger's level leaves `started` out
        #expect(lines.withLock { $0.first?.contains("finished") } == true)
    }

    @Test("a failure is logged with its error and status; a cancel as cancelled")
    func failureEvents() async throws {
        let logger = InMemoryLogger()
        let pool = TaskPool.stubbed(delay: 0.05, logger: logger) { request, _ in
            .json(#"{"message": "gone"}"#, statusCode: 404)
        }
        _ = try? await pool.send(TestEndpoint(), id: "a")
        let failed = try #require(logger.events.last)
        #expect(failed.kind == .failed)
        #expect(failed.statusCode == 404)
        #expect(failed.error?.serverError?.message == "gone")
        pool.send(TestEndpoint(path: "slow"), id: "b") { _ in }
        pool.cancel(id: "b")
        #expect(logger.events.last?.kind == .cancelled)
        #expect(logger.events.last?.taskID == "b")
    }

    @Test("the console line is compact and readable")
    func consoleFormat() async throws {
        let lines = Locked<[String]>([])
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { _, _ in .json("{}") },
                logger: ConsoleLogger { line in lines.withLock { $0.append(line) } }))
        _ = try await pool.send(TestEndpoint(task: .urlParameters(["page": 2])), id: "list")
        let output = lines.withLock { $0 }
        #expect(output.count == 2)
        #expect(output[0] == "[NetworkCore] started   GET https://api.example.com/v1/items?page=2 id=list")
        #expect(output[1].hasPrefix("[NetworkCore] finished  200 2 B "))
        #expect(output[1].hasSuffix(" ms id=list"))
    }

    @Test("a kind longer than the column is written whole")
    func consoleLongKinds() {
        let redirected = TaskEvent(
            kind: .redirected, taskID: "list", method: "GET", url: "https://a.example/", attempt: 1, statusCode: 302,
            redirectURL: "https://b.example/")
        #expect(ConsoleLogger.format(redirected) == "[NetworkCore] redirected 302 to https://b.example/ id=list")
        let renewed = TaskEvent(
            kind: .credentialRefreshed, taskID: "list", method: "GET", url: "https://a.example/", attempt: 1)
        #expect(ConsoleLogger.format(renewed).hasPrefix("[NetworkCore] credentialRefreshed 0 B id=list"))
    }

    static let secrets: [(String, String)] = [
        ("api_key", "ak_live_123"), ("token", "tok_456"), ("password", "hunter2"), ("session_id", "sess_789"),
        ("request_token", "rt_abc"), ("access_token", "at_def"), ("refresh_token", "rf_ghi"), ("Api_Key", "ak_MIXED"),
    ]

    @Test("no secret in the query appears in logs, ids, tables, descriptions or errors", arguments: secrets)
    func queryRedaction(name: String, secret: String) async throws {
        let lines = Locked<[String]>([])
        // The answer waits until the running task has been read: no window to catch it in.
        let answer = Latch()
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { _, _ in
                    await answer.wait()
                    return .json(#"{"status_message": "no"}"#, statusCode: 401)
                },
                logger: ConsoleLogger { line in lines.withLock { $0.append(line) } }))
        let endpoint = TestEndpoint(task: .urlParameters([name: secret, "page": 1]))
        let caller = immediately { try await pool.send(endpoint) }
        #expect(pool.activeTasks.count == 1)
        var seen = [
            pool.debugDescription, pool.activeTasks.map(\.description).joined(), try pool.taskID(for: endpoint),
        ]
        answer.open()
        if case .failure(let error) = await caller.result {
            seen.append(error.localizedDescription)
            seen.append((error as? NetworkError)?.response?.description ?? "")
        } else {
            Issue.record("a 401 was accepted")
        }
        seen += lines.withLock { $0 }
        #expect(seen.count >= 6)
        for text in seen {
            #expect(!text.contains(secret), "secret leaked in: \(text)")
        }
        #expect(seen[0].contains("<redacted>"))
    }

    @Test("header credentials are redacted; others kept")
    func headerRedaction() {
        let headers = [
            "Authorization": "Bearer abc", "Cookie": "sid=1", "X-Auth-Token": "t", "Accept": "application/json",
        ]
        #expect(
            Redactor.default.redact(headers: headers)
                == [
                    "Authorization": "<redacted>", "Cookie": "<redacted>", "X-Auth-Token": "<redacted>",
                    "Accept": "application/json",
                ])
    }

    @Test(
        "URLs in header values are redacted as URLs are; echoed secrets scrubbed; other values kept as they are",
        arguments: [
            (
                "Location", "/next?api_key=k1&page=2#access_token=t1",
                "/next?api_key=<redacted>&page=2#access_token=<redacted>"
            ),
            ("Location", "https://ann:pw@example.com/a?b=1", "https://ann:<redacted>@example.com/a?b=1"),
            ("Content-Location", "https://example.com/a?session_id=s1", "https://example.com/a?session_id=<redacted>"),
            (
                "Link",
                #"<https://example.com/p?key=k2&page=3>; rel="next", <https://example.com/p?page=1>; rel="first""#,
                #"<https://example.com/p?key=<redacted>&page=3>; rel="next", <https://example.com/p?page=1>; rel="first""#
            ),
            ("Refresh", "5; url=/r?token=t2", "5; url=/r?token=<redacted>"),
            ("Refresh", "5;url=https://example.com/?signature=s2", "5;url=https://example.com/?signature=<redacted>"),
            (
                "X-Debug", "sent to \"https://x.example/?sig=s3\" at noon",
                "sent to \"https://x.example/?sig=<redacted>\" at noon"
            ),
            ("X-Echo", "echo SECRET-echo-1", "echo <redacted>"),
            ("Location", "/app#/callback?state=1&access_token=t4", "/app#/callback?state=1&access_token=<redacted>"),
            ("From", "ann@example.com", "ann@example.com"),
            ("Accept", "application/json; q=0.9,  text/plain", "application/json; q=0.9,  text/plain"),
            ("Content-Disposition", "attachment; filename=\"a?b#c.txt\"", "attachment; filename=\"a?b#c.txt\""),
            ("X-Empty", "", ""),
            ("X-Only-Marks", "? # @ <> \"\"", "? # @ <> \"\""),
            ("X-Unicode", "città ?ü=1 #ß", "città ?ü=1 #ß"),
        ])
    func headerValueRedaction(name: String, value: String, expected: String) {
        #expect(Redactor.default.redact(headerValue: value, named: name, secrets: ["SECRET-echo-1"]) == expected)
        #expect(Redactor.default.redact(headers: [name: value], secrets: ["SECRET-echo-1"]) == [name: expected])
    }

    @Test("a password in the URL's user info is redacted; the rest of the URL is kept")
    func userInfoRedaction() {
        #expect(
            Redactor.default.redact("https://ana:hunter2@h.com/p?x=1#top") == "https://ana:<redacted>@h.com/p?x=1#top")
        #expect(Redactor.default.redact("https://h.com/p") == "https://h.com/p")
        #expect(
            Redactor(extraNames: ["q"]).redact("https://h.com/s?q=private&page=1")
                == "https://h.com/s?q=<redacted>&page=1")
    }
}
