import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One secret and where it travels.
struct Secret: Sendable, CustomTestStringConvertible {
    enum Place: String, Sendable { case query, header, json, form }
    let name: String
    let value: String
    let place: Place
    var testDescription: String { "\(name) in \(place.rawValue)" }

    /// An endpoint that carries the secret, with a harmless parameter beside it.
    var endpoint: TestEndpoint {
        switch place {
        case .query: TestEndpoint(task: .urlParameters([name: value, "page": 1]))
        case .header: TestEndpoint(headers: [name: value, "X-Trace": "t1"])
        case .json: TestEndpoint(method: .post, task: .bodyParameters(["user": ["name": "ana", name: value]]))
        case .form: TestEndpoint(method: .post, task: .bodyParameters([name: value, "user": "ana"], encoder: .form))
        }
    }
}

@Suite("cURL, HAR and redaction")
struct RecordingTests {
    static let secrets: [Secret] = [
        Secret(name: "api_key", value: "ak-9f8e7d", place: .query),
        Secret(name: "token", value: "tk-1a2b3c", place: .query),
        Secret(name: "session_id", value: "sess-4d5e", place: .query),
        Secret(name: "request_token", value: "rq-6f7a", place: .query),
        Secret(name: "Authorization", value: "Bearer at-8b9c", place: .header),
        Secret(name: "Cookie", value: "sid=ck-0d1e", place: .header),
        Secret(name: "X-Api-Key", value: "xk-2f3a", place: .header),
        Secret(name: "password", value: "pw-hunter2", place: .json),
        Secret(name: "request_token", value: "rq-json-4b5c", place: .json),
        Secret(name: "session_id", value: "sess-json-6d", place: .json),
        Secret(name: "password", value: "pw-form-7e8f", place: .form),
        Secret(name: "token", value: "tk-form-9a0b", place: .form),
    ]

    @Test("no secret appears in log lines, the task table, cURL output or a HAR file", arguments: secrets)
    func nothingLeaks(secret: Secret) async throws {
        let lines = Locked<[String]>([])
        let recorder = HARRecorder()
        let pool = TaskPool(
            configuration: .init(
                transport: RecordingTransport(
                    StubTransport(delay: 0.05) { request, _ in
                        // The server echoes the secret back, as many do.
                        .json(#"{"\#(secret.name)": "\#(secret.value)", "ok": true}"#, statusCode: 401)
                    }, recorder: recorder),
                logger: ConsoleLogger { line in lines.withLock { $0.append(line) } }))
        pool.send(secret.endpoint, id: "leak-check") { _ in }
        let task = try #require(pool.task(id: "leak-check"))
        var outputs = [pool.debugDescription, task.description, task.cURLDescription()]
        outputs.append((try? await pool.send(secret.endpoint, id: "leak-check").description) ?? "")
        outputs.append(String(decoding: try recorder.data(), as: UTF8.self))
        outputs += lines.withLock { $0 }
        #expect(recorder.count == 1)
        #expect(outputs.count >= 7)
        for output in outputs {
            #expect(!output.contains(secret.value), "\(secret.value) leaked in: \(output.prefix(300))")
        }
        #expect(outputs[2].contains("<redacted>"))
        // Revealing is an explicit opt-in.
        #expect(task.cURLDescription(revealingSecrets: true).contains(secret.value))
    }

    @Test("cURL output is a runnable command")
    func curl() throws {
        let request = try TestEndpoint(
            method: .post, task: .bodyParameters(["name": "O'Brien", "page": 2]), headers: ["X-Trace": "t1"]
        ).urlRequest(defaultHeaders: ["Accept": "application/json"])
        #expect(
            request.cURLDescription() == """
                curl -X POST 'https://api.example.com/v1/items' \\
                  -H 'Accept: application/json' \\
                  -H 'Content-Type: application/json' \\
                  -H 'X-Trace: t1' \\
                  --data '{"name":"O'\\''Brien","page":2}'
                """)
        let get = try TestEndpoint(task: .urlParameters(["q": "a b"])).urlRequest()
        #expect(get.cURLDescription() == "curl 'https://api.example.com/v1/items?q=a%20b'")
    }

    @Test("bodies over the recorder's limit are recorded by their size and a comment; those at it whole")
    func largeBodies() async throws {
        let recorder = HARRecorder(bodyLimit: 100)
        let pool = TaskPool(
            configuration: .init(
                transport: RecordingTransport(
                    StubTransport { request, _ in
                        StubResponse(body: Data(repeating: UInt8(ascii: "x"), count: request.httpBody?.count ?? 0))
                    }, recorder: recorder)))
        for size in [100, 5_000] {
            let body = Data(repeating: UInt8(ascii: "y"), count: size)
            let response = try await pool.send(
                TestEndpoint(method: .post, task: .data(body, contentType: "text/plain")), id: "size-\(size)")
            #expect(response.body.count == size)  // the caller gets every byte; only the archive leaves them out
        }
        let entries = recorder.har.log.entries
        #expect(entries.count == 2)
        let whole = try #require(entries.first)
        #expect(whole.request.postData?.text == String(repeating: "y", count: 100))
        #expect(whole.request.postData?.comment == nil)
        #expect(whole.response.content.text == String(repeating: "x", count: 100))
        #expect(whole.response.content.comment == nil)
        let summarised = try #require(entries.last)
        #expect(summarised.request.bodySize == 5_000)
        #expect(summarised.request.postData?.text == "")
        #expect(
            summarised.request.postData?.comment == "5000 bytes, not recorded: over the recorder's bodyLimit of 100")
        #expect(summarised.response.bodySize == 5_000)
        #expect(summarised.response.content.size == 5_000)
        #expect(summarised.response.content.text == nil)
        #expect(summarised.response.content.comment == "5000 bytes, not recorded: over the recorder's bodyLimit of 100")
        // The archive still encodes and reads back, comments included.
        let decoded = try JSONDecoder().decode(HAR.self, from: recorder.data())
        #expect(decoded == recorder.har)
        #expect(HARRecorder().bodyLimit == 1 << 20)
    }

    @Test("a body that is not UTF-8 is summarised in cURL and kept as base64 in HAR")
    func binary() async throws {
        let bytes = Data([0xFF, 0xD8, 0xFF, 0x00, 0x10])
        let request = try TestEndpoint(method: .put, task: .data(bytes, contentType: "image/jpeg")).urlRequest()
        #expect(request.cURLDescription().hasSuffix("--data '<5 bytes>'"))
        let recorder = HARRecorder()
        let pool = TaskPool(
            configuration: .init(
                transport: RecordingTransport(StubTransport { _, _ in StubResponse(body: bytes) }, recorder: recorder)))
        let recorded = try await pool.send(TestEndpoint())
        // Progress passes through the recording transport: first byte and body bytes reach the pool.
        #expect(recorded.timing?.firstByte != nil)
        #expect(recorded.timing?.bytesReceived == bytes.count)
        let content = try #require(recorder.har.log.entries.first?.response.content)
        #expect(content.encoding == "base64")
        #expect(content.data == bytes)
        let replay = HARReplayTransport(har: recorder.har)
        let replayed = try await TaskPool(configuration: .init(transport: replay)).send(TestEndpoint())
        #expect(replayed.body == bytes)
    }

    @Test(
        "HAR from a run against httpbin is valid HAR 1.2, and replaying it reproduces statuses and bodies",
        .enabled(if: HTTPBin.url != nil, "NETWORKCORE_HTTPBIN_URL is not set"))
    func harRoundTrip() async throws {
        let recorder = HARRecorder()
        let live = TaskPool(
            configuration: .init(transport: RecordingTransport(URLSessionTransport(), recorder: recorder)))
        let endpoints: [HTTPBinEndpoint] = [
            .get(["q": "a b", "api_key": "live-key-123"]), .postJSON(["title": "x", "password": "pw-live-456"]),
            .postForm(["user": "ana"]), .status(404), .gzip, .bearer(token: "bt-live-789"),
        ]
        var liveResults: [(Int, Data)] = []
        for endpoint in endpoints { liveResults.append(await Self.outcome(of: endpoint, in: live)) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("networkcore-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try recorder.write(to: file)

        // Valid JSON with HAR 1.2's required fields.
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        let log = try #require(json["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        #expect((log["creator"] as? [String: Any])?["name"] as? String == "NetworkCore")
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == endpoints.count)
        for entry in entries {
            for key in ["startedDateTime", "time", "request", "response", "cache", "timings"] {
                #expect(entry[key] != nil, "entry lacks \(key)")
            }
            let request = try #require(entry["request"] as? [String: Any])
            for key in ["method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"]
            {
                #expect(request[key] != nil, "request lacks \(key)")
            }
            let response = try #require(entry["response"] as? [String: Any])
            for key in [
                "status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize",
                "bodySize",
            ] {
                #expect(response[key] != nil, "response lacks \(key)")
            }
            let content = try #require(response["content"] as? [String: Any])
            #expect(content["size"] is Int && content["mimeType"] is String)
            let timings = try #require(entry["timings"] as? [String: Any])
            for key in ["send", "wait", "receive"] { #expect((timings[key] as? Double ?? -1) >= 0) }
            #expect((entry["startedDateTime"] as? String)?.hasSuffix("Z") == true)
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        for secret in ["live-key-123", "pw-live-456", "bt-live-789"] { #expect(!text.contains(secret)) }

        // Replay: the same statuses, and the same bodies except where a secret was redacted.
        let replay = TaskPool(configuration: .init(transport: try HARReplayTransport(contentsOf: file)))
        let carriedSecrets: Set<Int> = [0, 1, 5]  // echoes of the api_key, the password and the bearer token
        for (index, endpoint) in endpoints.enumerated() {
            let (status, body) = await Self.outcome(of: endpoint, in: replay)
            #expect(status == liveResults[index].0, "\(endpoint)")
            if carriedSecrets.contains(index) {
                let text = String(decoding: body, as: UTF8.self)
                #expect(text.contains("<redacted>"), "\(endpoint)")
                #expect((try? JSONSerialization.jsonObject(with: body)) != nil, "\(endpoint)")
            } else {
                #expect(body == liveResults[index].1, "\(endpoint)")
            }
        }

        // A recording that reveals secrets (an explicit opt-in) replays every body byte for byte.
        let revealing = HARRecorder(revealingSecrets: true)
        let recorded = TaskPool(
            configuration: .init(transport: RecordingTransport(URLSessionTransport(), recorder: revealing)))
        var originals: [(Int, Data)] = []
        for endpoint in endpoints { originals.append(await Self.outcome(of: endpoint, in: recorded)) }
        let exact = TaskPool(configuration: .init(transport: HARReplayTransport(har: revealing.har)))
        for (index, endpoint) in endpoints.enumerated() {
            let (status, body) = await Self.outcome(of: endpoint, in: exact)
            #expect(status == originals[index].0)
            #expect(body == originals[index].1, "\(endpoint)")
        }
    }

    /// The status and body a send ends with, whether accepted or not.
    static func outcome(of endpoint: HTTPBinEndpoint, in pool: TaskPool) async -> (Int, Data) {
        do {
            let response = try await pool.send(endpoint)
            return (response.statusCode, response.body)
        } catch {
            return (error.statusCode ?? -1, error.response?.body ?? Data())
        }
    }

    @Test("replay names the request that has no recorded entry")
    func replayMiss() async throws {
        let recorder = HARRecorder()
        let pool = TaskPool(
            configuration: .init(
                transport: RecordingTransport(StubTransport { _, _ in .json("{}") }, recorder: recorder)))
        _ = try await pool.send(TestEndpoint(path: "a"))
        let replay = TaskPool(configuration: .init(transport: HARReplayTransport(har: recorder.har)))
        #expect(
            try await replay.send(TestEndpoint(path: "a", task: .urlParameters(["api_key": "other"]))).statusCode == 200
        )
        let error = await #expect(throws: NetworkError.self) {
            try await replay.send(TestEndpoint(path: "b", task: .urlParameters(["api_key": "k-secret"])))
        }
        guard case .transport(let underlying)? = error, let miss = underlying as? HARReplayError else {
            Issue.record("expected a HARReplayError, got \(String(describing: error))")
            return
        }
        #expect(
            miss == .noMatchingEntry(method: "GET", url: "https://api.example.com/v1/b?api_key=<redacted>", entries: 1))
        #expect(!miss.description.contains("k-secret"))
    }

    @Test("replay serves matching entries in recorded order, then repeats the last")
    func replayOrder() async throws {
        let counter = Counter()
        let recorder = HARRecorder()
        let pool = TaskPool(
            configuration: .init(
                transport: RecordingTransport(
                    StubTransport { _, _ in .json(#"{"n": \#(counter.increment())}"#) }, recorder: recorder)))
        for _ in 0..<2 { _ = try await pool.send(TestEndpoint()) }
        let replay = TaskPool(configuration: .init(transport: HARReplayTransport(har: recorder.har)))
        var bodies: [String] = []
        for _ in 0..<3 { bodies.append(String(decoding: try await replay.send(TestEndpoint()).body, as: UTF8.self)) }
        #expect(bodies == [#"{"n": 1}"#, #"{"n": 2}"#, #"{"n": 2}"#])
    }
}
