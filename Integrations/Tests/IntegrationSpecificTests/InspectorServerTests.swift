import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NetworkCore
import Testing

@testable import NetworkCoreInspector

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request to the inspector's server, sent by NetworkCore itself.
struct InspectorCall: Endpoint {
    var baseURL: String
    var path: String
    var method: NetworkCore.HTTPMethod = .get
    var query: [String: String] = [:]
    var extraHeaders: [String: String] = [:]
    var service: String { "InspectorCall" }
    var task: HTTPTask { query.isEmpty ? .plain : .urlParameters(query) }
    var headers: [String: String] { extraHeaders.merging(["Accept": "*/*"]) { $1 } }
    var timeout: TimeInterval? { 10 }
}

@Suite("Inspector server: the page's routes, its token, its host check and its event stream", .serialized)
struct InspectorServerTests {
    /// A pool of tasks that wait until cancelled, its inspector served, and a pool to call the server with.
    struct Setup {
        let inspector = PoolInspector()
        let watched: TaskPool
        let server: InspectorServer
        let client = TaskPool(
            configuration: .init(validation: Validation(acceptableStatusCodes: Set(100...599)), maximumTasksPerHost: 8))
        var base: String { "http://127.0.0.1:\(server.port)" }
        var token: String { URLComponents(url: server.url, resolvingAgainstBaseURL: false)!.queryItems![0].value! }

        /// Watches a pool over `transport`: by default one whose answers wait 600 s, so that tasks wait until cancelled.
        init(
            allowsCancel: Bool = true, transport: any Transport = StubTransport(delay: 600) { _, _ in .json("{}") }
        )
            async throws
        {
            watched = TaskPool(configuration: .init(transport: transport, inspector: inspector))
            server = try await InspectorServer.start(
                inspector: inspector, configuration: .init(allowsCancel: allowsCancel))
        }

        func call(
            _ path: String, method: NetworkCore.HTTPMethod = .get, _ query: [String: String] = [:], token: String? = nil
        )
            async throws -> Response
        {
            var query = query
            query["token"] = token ?? self.token
            return try await client.send(InspectorCall(baseURL: base, path: path, method: method, query: query))
        }
    }

    @Test("it listens on 127.0.0.1 with a random token, and answers nothing without it")
    func token() async throws {
        let setup = try await Setup()
        defer { Task { try? await setup.server.stop() } }
        #expect(setup.server.url.host == "127.0.0.1")
        #expect(setup.token.count == 32)
        let other = try await Setup()
        #expect(setup.token != other.token)
        try await other.server.stop()
        for path in ["/", "/inspection", "/events", "/har", "/task"] {
            #expect(try await setup.call(path, token: "wrong").statusCode == 403)
            #expect(try await setup.call(path, token: "").statusCode == 403)
        }
        let page = try await setup.call("/")
        #expect(page.statusCode == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.header("Referrer-Policy") == "no-referrer")
        #expect(String(decoding: page.body, as: UTF8.self).contains("<title>NetworkCore inspector</title>"))
        #expect(try await setup.call("/nothing").statusCode == 404)
        #expect(try await setup.call("/inspection", method: .post).statusCode == 405)
        await #expect(throws: InspectorServerError.invalidToken) {
            try await InspectorServer.start(inspector: setup.inspector, configuration: .init(token: "a b"))
        }
        await #expect(throws: InspectorServerError.invalidPort(70_000)) {
            try await InspectorServer.start(inspector: setup.inspector, configuration: .init(port: 70_000))
        }
        do {
            _ = try await InspectorServer.start(
                inspector: setup.inspector, configuration: .init(port: setup.server.port))
            Issue.record("a second server listened on a taken port")
        } catch let error as InspectorServerError {
            if case .cannotListen(let port, let reason) = error {
                #expect(port == setup.server.port)
                #expect(reason.contains("in use"))
            } else {
                Issue.record("\(error)")
            }
        }
    }

    @Test("a request naming another host is refused, so that a page elsewhere cannot rebind a name to it")
    func hostCheck() async throws {
        let setup = try await Setup()
        defer { Task { try? await setup.server.stop() } }
        var request = HTTPClientRequest(url: "\(setup.base)/inspection?token=\(setup.token)")
        request.headers.replaceOrAdd(name: "Host", value: "attacker.example:\(setup.server.port)")
        let refused = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        #expect(refused.status == .forbidden)
        request.headers.replaceOrAdd(name: "Host", value: "localhost:\(setup.server.port)")
        #expect(try await HTTPClient.shared.execute(request, timeout: .seconds(10)).status == .ok)
    }

    @Test("the view, a task's details and cancel by id, as the page uses them")
    func routes() async throws {
        let setup = try await Setup()
        defer { Task { try? await setup.server.stop() } }
        for id in ["one", "two"] {
            setup.watched.send(InspectorCall(baseURL: "https://api.example.com", path: "/items/\(id)"), id: id) { _ in }
        }
        let view = try JSONSerialization.jsonObject(with: try await setup.call("/inspection").body) as? [String: Any]
        let active = (view?["inspection"] as? [String: Any])?["active"] as? [[String: Any]]
        #expect(active?.map { $0["id"] as? String } == ["one", "two"])
        #expect(view?["allowsCancel"] as? Bool == true)
        let detail = try await setup.call("/task", ["id": "two"])
        let task = try JSONDecoder().decode(InspectedTask.self, from: detail.body)
        #expect(
            task.details?.cURL
                == "curl 'https://api.example.com/items/two' \\\n  -H 'Accept: */*' \\\n  -H 'User-Agent: NetworkCore/\(LibraryVersion.current)'"
        )
        #expect(try await setup.call("/task", ["id": "three"]).statusCode == 404)
        let cancel = try await setup.call("/cancel", method: .post, ["id": "one"])
        #expect(String(decoding: cancel.body, as: UTF8.self) == #"{"cancelled":true}"#)
        #expect(setup.watched.activeTasks.map(\.id) == ["two"])
        let again = try await setup.call("/cancel", method: .post, ["id": "one"])
        #expect(String(decoding: again.body, as: UTF8.self) == #"{"cancelled":false}"#)
        let har = try await setup.call("/har")
        #expect(har.header("Content-Disposition") == #"attachment; filename="networkcore.har""#)
        #expect(try JSONDecoder().decode(HAR.self, from: har.body).log.entries.count == 1)
        #expect(setup.watched.cancelAll() == 1)
    }

    /// A task whose answer redirects with secrets in its `Location` (a key, a token in the fragment, a password in
    /// the user information) and ends with headers that carry more (`Content-Location`, `Link`, the bearer token
    /// echoed): the page's view, a task's details, the HAR and the event stream show none of them.
    @Test("a redirect chain's secrets reach none of the page's routes, nor its event stream")
    func redirectSecrets() async throws {
        let secrets = [
            "TOKEN-page-1a2b", "KEY-page-start-3c4d", "KEY-page-hop-5e6f", "TOKEN-page-frag-7a8b", "PASS-page-9c0d",
            "KEY-page-content-1e2f", "SESSION-page-3a4b",
        ]
        let setup = try await Setup(
            transport: StubTransport { request, _ in
                guard request.url?.path == "/start" else {
                    return .json(
                        "{}",
                        headers: [
                            "Content-Location": "/final?api_key=\(secrets[5])",
                            "Link": "<https://ann:\(secrets[4])@api.example.com/n?session_id=\(secrets[6])>; rel=next",
                            "X-Echo": "Bearer \(secrets[0])",
                        ])
                }
                return StubResponse(
                    statusCode: 302,
                    headers: [
                        "Location":
                            "https://ann:\(secrets[4])@api.example.com/final?api_key=\(secrets[2])#access_token=\(secrets[3])"
                    ])
            })
        defer { Task { try? await setup.server.stop() } }
        let events = try await setup.client.events(
            InspectorCall(baseURL: setup.base, path: "/events", query: ["token": setup.token]), id: "events")
        _ = try await setup.watched.send(
            InspectorCall(
                baseURL: "https://api.example.com", path: "/start", query: ["api_key": secrets[1]],
                extraHeaders: ["Authorization": "Bearer \(secrets[0])"]),
            id: "chain")
        // The views the stream sends until one shows the task ended (at most 20).
        var streamed = ""
        var count = 0
        for try await event in events {
            streamed += event.data
            count += 1
            if event.data.contains("\"recent\":[{") || count == 20 { break }
        }
        _ = setup.client.cancel(id: "events")
        let pages = [
            ("view", try await setup.call("/inspection").body),
            ("details", try await setup.call("/task", ["id": "chain"]).body),
            ("HAR", try await setup.call("/har").body), ("event stream", Data(streamed.utf8)),
        ]
        for (route, body) in pages {
            let text = String(decoding: body, as: UTF8.self)
            #expect(text.contains(route == "HAR" ? "api.example.com/start" : "\"chain\""), "\(route) misses the task")
            for secret in secrets { #expect(!text.contains(secret), "\(route) shows \(secret)") }
        }
        let task = try JSONDecoder().decode(InspectedTask.self, from: pages[1].1)
        #expect(
            task.details?.responseHeaders.first { $0.name == "Content-Location" }?.value == "/final?api_key=<redacted>")
        #expect(task.marks.contains { $0.detail.contains("access_token=<redacted>") })
    }

    @Test("with cancelling turned off, the page cannot cancel: 403, and the task runs on")
    func cancelOff() async throws {
        let setup = try await Setup(allowsCancel: false)
        defer { Task { try? await setup.server.stop() } }
        setup.watched.send(InspectorCall(baseURL: "https://api.example.com", path: "/slow"), id: "slow") { _ in }
        #expect(try await setup.call("/cancel", method: .post, ["id": "slow"]).statusCode == 403)
        #expect(setup.watched.task(id: "slow") != nil)
        let view = try JSONSerialization.jsonObject(with: try await setup.call("/inspection").body) as? [String: Any]
        #expect(view?["allowsCancel"] as? Bool == false)
        #expect(setup.watched.cancelAll() == 1)
    }

    @Test("the event stream sends the view at once, and again when a task starts and when it ends")
    func eventStream() async throws {
        let setup = try await Setup()
        defer { Task { try? await setup.server.stop() } }
        let events = try await setup.client.events(
            InspectorCall(baseURL: setup.base, path: "/events", query: ["token": setup.token]), id: "inspector-events")
        var seen: [[String]] = []
        var index = 0
        for try await event in events {
            #expect(event.event == "inspection")
            let view = try JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any]
            let inspection = view?["inspection"] as? [String: Any]
            let active = (inspection?["active"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
            let recent = (inspection?["recent"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
            seen.append(active + recent.map { "ended " + $0 })
            index += 1
            if index == 1 {
                setup.watched.send(InspectorCall(baseURL: "https://api.example.com", path: "/a"), id: "a") { _ in }
            }
            if seen.last == ["a"] { _ = setup.watched.cancel(id: "a") }
            if seen.last == ["ended a"] || index == 20 { break }
        }
        _ = setup.client.cancel(id: "inspector-events")
        #expect(seen.first == [])
        #expect(seen.contains(["a"]))
        #expect(seen.last == ["ended a"])
    }

    @Test(
        "the view written byte by byte reads as JSONEncoder's to the microsecond, for every kind of task, and again from its cache"
    )
    func writerMatchesEncoder() async throws {
        let setup = try await Setup()
        defer { Task { try? await setup.server.stop() } }
        let script = Answers()
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { _, _ in
                    switch script.next() {
                    case 0: .json(#"{"status_message": "no \"quotes\"\nhere \u00e9 \u2028"}"#, statusCode: 503)
                    case 1: .json("{}")
                    default: StubResponse(statusCode: 404, body: Data("nothing, \u{1} here".utf8))
                    }
                }, interceptors: [RetryPolicy(maximumAttempts: 2, baseDelay: 0.01)], inspector: setup.inspector))
        _ = try await pool.send(
            InspectorCall(baseURL: "https://api.example.com", path: "/a\"b", query: ["q": "é ü"]),
            id: "ä\"\\\n\u{7}\u{2028}\u{2029}€")
        _ = try? await pool.send(InspectorCall(baseURL: "https://api.example.com", path: "/missing"), id: "missing")
        setup.watched.send(InspectorCall(baseURL: "https://api.example.com", path: "/slow"), id: "slow") { _ in }
        setup.watched.send(InspectorCall(baseURL: "https://api.example.com", path: "/slow2"), id: "slow2") { _ in }
        #expect(await eventually { setup.inspector.inspection.active.count == 2 })
        let inspection = setup.inspector.inspection
        #expect(inspection.recent.map(\.state) == [.failed, .finished])
        #expect(inspection.recent.last?.marks.map(\.kind) == [.retry])

        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        // A socket's row among them: its traffic is written too.
        var tree = try #require(try JSONSerialization.jsonObject(with: encoder.encode(inspection)) as? [String: Any])
        var active = try #require(tree["active"] as? [[String: Any]])
        active[0]["socket"] = [
            "isOpen": true, "messagesSent": 2, "bytesSent": 8, "messagesReceived": 1, "bytesReceived": 6,
            "lastActivity": 1_795_643_983_051.25,
        ]
        tree["active"] = active
        let withSocket = try decoder.decode(PoolInspection.self, from: JSONSerialization.data(withJSONObject: tree))
        #expect(withSocket.active.first?.socket?.messagesSent == 2)
        let expected = try JSONSerialization.jsonObject(
            with: try encoder.encode(InspectorFeed(allowsCancel: true, inspection: withSocket)))
        let writer = FeedWriter()
        let first = writer.feed(allowsCancel: true, inspection: withSocket)
        #expect(Self.same(try JSONSerialization.jsonObject(with: first), expected))
        #expect(writer.feed(allowsCancel: true, inspection: withSocket) == first)  // the ended ones from the cache
        let read = try decoder.decode(InspectorFeed.self, from: first)
        #expect(read.inspection.recent.first?.id == "missing")
        #expect(read.inspection.recent.last?.id == "ä\"\\\n\u{7}\u{2028}\u{2029}€")
        #expect(try decoder.decode(InspectorFeed.self, from: setup.server.view()).inspection.active.count == 2)
        #expect(setup.watched.cancelAll() == 2)
    }

    @Test(
        "numbers to the microsecond, as the page reads them",
        arguments: [
            (0.0, "0"), (2.0, "2"), (-0.5, "-0.5"), (0.000_001, "0.000001"), (1.25, "1.25"), (0.000_000_4, "0"),
            (1_795_643_983_051.25, "1795643983051.25"), (.nan, "0"), (1e13, "10000000000000"), (-0.000_000_1, "0"),
            (0.999_999_9, "1"),
        ])
    func numbers(value: Double, written: String) {
        var bytes = Bytes(capacity: 16)
        bytes.number(value)
        #expect(String(decoding: bytes.bytes, as: UTF8.self) == written)
    }

    /// Whether two JSON values are the same, numbers to within a thousandth (the writer's microseconds of
    /// a millisecond against the encoder's full digits).
    static func same(_ a: Any, _ b: Any) -> Bool {
        switch (a, b) {
        case (let a as [String: Any], let b as [String: Any]):
            return Set(a.keys) == Set(b.keys) && a.keys.allSatisfy { same(a[$0]!, b[$0]!) }
        case (let a as [Any], let b as [Any]):
            return a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
        case (let a as String, let b as String):
            return a == b
        case (let a as NSNumber, let b as NSNumber):
            return abs(a.doubleValue - b.doubleValue) <= 1e-3
        default:
            return false
        }
    }
}

/// Counts the answers a stub gives.
final class Answers: @unchecked Sendable {
    // @unchecked Sendable: `lock` guards `count`.
    private let lock = NSLock()
    private var count = 0
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count - 1
    }
}
