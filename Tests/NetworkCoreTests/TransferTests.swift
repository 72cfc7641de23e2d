import Foundation
import LoopbackServer
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A directory of its own for a test's files, removed at the end.
struct ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("networkcore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// The names of the files in it, hidden ones included, sorted.
    var contents: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted() }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// httpbin's transfer routes.
enum TransferEndpoint: Endpoint {
    case range(Int)
    case stream(lines: Int)
    case drip(bytes: Int, seconds: Double)
    case status(Int)
    case upload(URL)
    case anything

    var baseURL: String { HTTPBin.url ?? "http://127.0.0.1:1" }
    var path: String {
        switch self {
        case .range(let count): "/range/\(count)"
        case .stream(let lines): "/stream/\(lines)"
        case .drip: "/drip"
        case .status(let code): "/status/\(code)"
        case .upload: "/post"
        case .anything: "/anything"
        }
    }
    var method: HTTPMethod {
        if case .upload = self { return .post }
        return .get
    }
    var task: HTTPTask {
        switch self {
        case .drip(let bytes, let seconds): .urlParameters(["numbytes": bytes, "duration": seconds, "delay": 0])
        case .upload(let file): .file(file, contentType: "application/octet-stream")
        default: .plain
        }
    }
}

/// The bytes httpbin's `/range/N` answers: the alphabet, again and again.
func alphabet(_ count: Int) -> Data {
    Data((0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) })
}

@Suite(
    "Transfers against httpbin (real server on 127.0.0.1)",
    .enabled(if: HTTPBin.url != nil, "NETWORKCORE_HTTPBIN_URL is not set; Scripts/test sets it"))
struct HTTPBinTransferTests {
    let pool = TaskPool(configuration: .init(requestTimeout: 15))

    /// A pool whose transport sends file bodies as `fileUploads` says, recording into `recorder` if given.
    static func pool(
        _ fileUploads: URLSessionTransport.FileUploads, recordingInto recorder: HARRecorder? = nil
    )
        -> TaskPool
    {
        let transport = URLSessionTransport(fileUploads: fileUploads)
        return TaskPool(
            configuration: .init(
                transport: recorder.map { RecordingTransport(transport, recorder: $0) } ?? transport,
                requestTimeout: 15))
    }

    @Test("a download is written to its file as it arrives, and nothing else is left in the directory")
    func download() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("range.bin")
        let response = try await pool.download(TransferEndpoint.range(90_000), to: destination)
        #expect(response.statusCode == 200)
        #expect(response.fileURL == destination)
        #expect(response.body.isEmpty)
        #expect(try Data(contentsOf: destination) == alphabet(90_000))
        #expect(scratch.contents == ["range.bin"])
        #expect(response.timing?.bytesReceived == 90_000)
    }

    @Test("a download's progress climbs to the whole length, the last value told before the call returns")
    func downloadProgress() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let log = ProgressLog()
        try await pool.download(TransferEndpoint.drip(bytes: 2_000, seconds: 0.5), to: scratch.file("d")) {
            log.append($0)
        }
        let values = log.values
        #expect(values.last?.bytesReceived == 2_000)
        #expect(values.last?.bytesExpected == 2_000)
        #expect(values.last?.fractionCompleted == 1)
        #expect(values.map(\.bytesReceived) == values.map(\.bytesReceived).sorted())
        // How many values arrive depends on scheduling (a reader that falls behind gets the newest); being
        // told while the task runs is ProgressTests' driven-transport case.
        #expect(!values.isEmpty)
    }

    @Test(
        "a file upload's progress counts the bytes sent up to the file's size, with its length or chunked",
        arguments: [URLSessionTransport.FileUploads.withLength, .chunked])
    func uploadProgress(_ fileUploads: URLSessionTransport.FileUploads) async throws {
        let pool = Self.pool(fileUploads)
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("upload.bin")
        try alphabet(1_000_000).write(to: file)
        let log = ProgressLog()
        let response = try await pool.upload(TransferEndpoint.upload(file)) { log.append($0) }
        #expect(response.statusCode == 200)
        let values = log.values
        #expect(values.last?.bytesToSend == 1_000_000)
        #expect(values.last?.bytesSent == 1_000_000)
        #expect(values.last.map { $0.bytesReceived > 1_000_000 } == true)  // httpbin echoes the body
    }

    @Test("a download replaces a file that was there")
    func downloadReplaces() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("range.bin")
        try Data("old contents that are longer than the new ones".utf8).write(to: destination)
        try await pool.download(TransferEndpoint.range(26), to: destination)
        #expect(try Data(contentsOf: destination) == alphabet(26))
        #expect(scratch.contents == ["range.bin"])
    }

    @Test("an error status is not written: the task fails with it, and no file is left")
    func downloadErrorStatus() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        await #expect(throws: NetworkError.self) {
            try await pool.download(TransferEndpoint.status(404), to: scratch.file("x"))
        }
        do {
            try await pool.download(TransferEndpoint.status(404), to: scratch.file("x"))
        } catch {
            #expect(error.statusCode == 404)
        }
        #expect(scratch.contents.isEmpty)
    }

    @Test("a stream's lines arrive as httpbin sends them: /stream/5 is five JSON lines")
    func streamLines() async throws {
        let stream = try await pool.stream(TransferEndpoint.stream(lines: 5))
        #expect(stream.statusCode == 200)
        var ids: [Int] = []
        for try await line in stream.lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            ids.append(try #require(object["id"] as? Int))
        }
        #expect(ids == [0, 1, 2, 3, 4])
        #expect(await eventually { pool.activeTasks.isEmpty })
        #expect(stream.task.state == .completed)
    }

    @Test("a dripped body arrives in more than one chunk, every byte once, while the task runs")
    func drip() async throws {
        let stream = try await pool.stream(TransferEndpoint.drip(bytes: 8, seconds: 0.8))
        var chunks = 0
        var bytes = 0
        for try await chunk in stream {
            if chunks == 0 { #expect(stream.task.state == .running) }
            chunks += 1
            bytes += chunk.count
        }
        #expect(bytes == 8)
        #expect(chunks >= 2)
        #expect(stream.task.bytesReceived == 8)
    }

    @Test("a stream whose status is not accepted throws it, with the server's body")
    func streamErrorStatus() async throws {
        do {
            _ = try await pool.stream(TransferEndpoint.status(503))
            Issue.record("a 503 stream was returned")
        } catch {
            #expect(error.statusCode == 503)
        }
        #expect(pool.activeTasks.isEmpty)
    }

    @Test(
        "a file upload sends the file's bytes as the body, with its length or chunked: httpbin echoes them",
        arguments: [URLSessionTransport.FileUploads.withLength, .chunked])
    func upload(_ fileUploads: URLSessionTransport.FileUploads) async throws {
        let pool = Self.pool(fileUploads)
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("upload.txt")
        let text = String(repeating: "NetworkCore uploads files. ", count: 4_000)
        try Data(text.utf8).write(to: file)
        struct Echo: Decodable, Sendable {
            let data: String
            let headers: [String: String]
        }
        let echo = try await pool.send(TransferEndpoint.upload(file), parser: DecodableParser<Echo>())
        #expect(echo.data == text)
        #expect(echo.headers["Content-Type"] == "application/octet-stream")
        // Recorded, the same upload sends the same bytes.
        let recorder = HARRecorder()
        let recording = Self.pool(fileUploads, recordingInto: recorder)
        let recorded = try await recording.send(TransferEndpoint.upload(file), parser: DecodableParser<Echo>())
        #expect(recorded.data == text)
        #expect(recorder.count == 1)
        switch fileUploads {
        case .withLength:
            #expect(echo.headers["Content-Length"] == String(text.utf8.count))
            #expect(echo.headers["Transfer-Encoding"] == nil)
        case .chunked:
            #expect(echo.headers["Content-Length"] == nil)
            #expect(echo.headers["Transfer-Encoding"] == "chunked")
        }
    }
}

@Suite("Transfers: bad input and loopback faults")
struct TransferFaultTests {
    @Test("a download to a missing directory, or to a directory, fails typed before anything is sent")
    func badDestinations() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let (pool, sent) = TaskPool.counting()
        for destination in [scratch.file("missing/file.bin"), scratch.url, URL(string: "https://example.com/x")!] {
            do {
                try await pool.download(TestEndpoint(), to: destination)
                Issue.record("\(destination) was accepted")
            } catch {
                guard case .fileAccessFailed(let path, let reason) = error else {
                    Issue.record("\(destination): \(error)")
                    continue
                }
                #expect(!reason.isEmpty)
                #expect(path.hasSuffix(destination.lastPathComponent))
            }
        }
        #expect(sent.count == 0)
    }

    @Test("uploading a missing file or a directory fails typed before anything is sent")
    func badUploads() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let (pool, sent) = TaskPool.counting()
        let cases: [(URL, String)] = [
            (scratch.file("missing.bin"), "no such file"), (scratch.url, "a directory, not a file"),
        ]
        for (file, reason) in cases {
            do {
                _ = try await pool.send(TestEndpoint(method: .post, task: .file(file, contentType: "text/plain")))
                Issue.record("\(file) was accepted")
            } catch {
                guard case .fileAccessFailed(let path, let why) = error else {
                    Issue.record("\(file): \(error)")
                    continue
                }
                #expect(path == file.path)
                #expect(why == reason)
            }
        }
        #expect(sent.count == 0)
    }

    @Test("a download cut midway is resumed by a retry with Range and If-Range, and the file is whole")
    func resumedDownload() async throws {
        let body = alphabet(200_000)
        let server = try LoopbackServer(port: 0) { request in
            let headers = ["ETag": "\"v1\"", "Content-Type": "application/octet-stream"]
            guard let range = request.value(forHTTPHeaderField: "Range") else {
                return .closeMidBody(StubResponse(statusCode: 200, headers: headers, body: body))
            }
            let start = Int(range.dropFirst("bytes=".count).prefix { $0 != "-" }) ?? 0
            var partial = headers
            partial["Content-Range"] = "bytes \(start)-\(body.count - 1)/\(body.count)"
            return .respond(StubResponse(statusCode: 206, headers: partial, body: body.subdata(in: start..<body.count)))
        }
        defer { server.kill() }
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let pool = TaskPool(
            configuration: .init(
                transport: URLSessionTransport(configuration: .ephemeral),
                interceptors: [RetryPolicy(baseDelay: 0.01, random: { $0.upperBound })]))
        let destination = scratch.file("alphabet.bin")
        let endpoint = TestEndpoint(baseURL: server.baseURL, path: "/file")
        let log = ProgressLog()
        let response = try await pool.download(endpoint, to: destination) { log.append($0) }
        #expect(response.statusCode == 206)
        // The resumed answer counts the kept bytes: the progress is of the whole file.
        #expect(
            log.values.last
                == TransferProgress(
                    bytesToSend: 0, bytesReceived: 200_000, bytesExpected: 200_000,
                    bytesPerSecond: log.values.last?.bytesPerSecond ?? 0))
        #expect(try Data(contentsOf: destination) == body)
        #expect(scratch.contents == ["alphabet.bin"])
        let requests = server.requests
        #expect(requests.count == 2)
        #expect(requests.first?.value(forHTTPHeaderField: "Range") == nil)
        #expect(requests.last?.value(forHTTPHeaderField: "Range") == "bytes=100000-")
        #expect(requests.last?.value(forHTTPHeaderField: "If-Range") == "\"v1\"")
    }

    @Test("a slow upload is cancelled by id while it sends: the task ends cancelled and the server never gets it whole")
    func slowUploadCancelled() async throws {
        let server = try LoopbackServer(bodyReadPause: 0.05) { _ in .respond(StubResponse(statusCode: 200)) }
        defer { server.kill() }
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("big.bin")
        try Data(count: 32 << 20).write(to: file)
        let pool = TaskPool(configuration: .init(transport: URLSessionTransport(configuration: .ephemeral)))
        let endpoint = TestEndpoint(
            baseURL: server.baseURL, path: "/upload", method: .post, task: .file(file, contentType: "application/zip"))
        let upload = Task { try await pool.upload(endpoint, id: "slow") { _ in } }
        #expect(await eventually(within: 10) { (pool.task(id: "slow")?.progress.bytesSent ?? 0) > 0 })
        let task = try #require(pool.task(id: "slow"))
        #expect(task.progress.bytesToSend == 32 << 20)
        #expect(task.progress.bytesSent < 32 << 20)
        #expect(pool.cancel(id: "slow"))
        let result = await upload.result
        #expect(task.state == .cancelled)
        if case .failure(let error as NetworkError) = result {
            #expect(error.isCancelled)
        } else {
            Issue.record("\(result)")
        }
        #expect(pool.activeTasks.isEmpty)
        #expect(server.requests.isEmpty)  // the connection closed before the body was whole
    }

    @Test(
        "a stream body over URLSession is spooled and sent whole with its length; cancelled while spooling, nothing is sent or left"
    )
    func streamBody() async throws {
        let server = try LoopbackServer { request in StubResponse(statusCode: 200, body: request.httpBody ?? Data()) }
        defer { server.kill() }
        let transport = URLSessionTransport(configuration: .ephemeral)
        let before = spoolFiles()
        let request = {
            var request = URLRequest(url: URL(string: server.baseURL + "/echo")!)
            request.httpMethod = "PUT"
            return request
        }()
        let (chunks, feed) = AsyncThrowingStream<Data, any Error>.makeStream()
        for piece in 0..<20 { feed.yield(alphabet(1_000 + piece)) }
        feed.finish()
        let context = TransportContext(taskID: "stream")
        let answer = await TransportEvents.collect(
            from: transport, request: request, body: .stream(chunks, length: nil), context: context)
        let (body, response) = try answer.get()
        #expect(response.statusCode == 200)
        #expect(body == (0..<20).reduce(Data()) { $0 + alphabet(1_000 + $1) })
        #expect(server.requests.first?.value(forHTTPHeaderField: "Content-Length") == String(body.count))
        #expect(await eventually { spoolFiles() == before })

        // A stream that never ends, cancelled while it is spooled.
        let (endless, endlessFeed) = AsyncThrowingStream<Data, any Error>.makeStream()
        endlessFeed.yield(Data("begun".utf8))
        let waiting = Task {
            await TransportEvents.collect(
                from: transport, request: request, body: .stream(endless, length: nil), context: context)
        }
        #expect(await eventually { spoolFiles().count > before.count })
        waiting.cancel()
        let cancelled = await waiting.value
        #expect(throws: URLError.self) { try cancelled.get() }
        #expect(await eventually { spoolFiles() == before })
        #expect(server.requests.count == 1)
        endlessFeed.finish()

        // A stream that gives fewer bytes than it announced fails typed.
        let (short, shortFeed) = AsyncThrowingStream<Data, any Error>.makeStream()
        shortFeed.yield(Data("abc".utf8))
        shortFeed.finish()
        let mismatch = await TransportEvents.collect(
            from: transport, request: request, body: .stream(short, length: 10), context: context)
        #expect(throws: NetworkError.self) { try mismatch.get() }
        #expect(server.requests.count == 1)
    }

    @Test(
        "an event stream that ends mid-event, not reconnected, throws a lost connection; one that ends between events just ends"
    )
    func eventStreamEndsMidEvent() async throws {
        let server = try LoopbackServer { request in
            let body = request.url?.path == "/cut" ? "data: one\n\ndata: cu" : "data: one\n\n"
            return StubResponse(statusCode: 200, headers: ["Content-Type": "text/event-stream"], body: Data(body.utf8))
        }
        defer { server.kill() }
        let pool = TaskPool(configuration: .init(transport: URLSessionTransport(configuration: .ephemeral)))
        var received: [String] = []
        do {
            for try await event in try await pool.events(TestEndpoint(baseURL: server.baseURL, path: "/cut")) {
                received.append(event.data)
            }
            Issue.record("the cut stream ended without an error")
        } catch {
            guard case .transport(let cause)? = error as? NetworkError, let urlError = cause as? URLError else {
                Issue.record("\(error)")
                return
            }
            #expect(urlError.code == .networkConnectionLost)
            #expect(urlError.localizedDescription.contains("middle of an event"))
        }
        #expect(received == ["one"])
        var whole: [String] = []
        for try await event in try await pool.events(TestEndpoint(baseURL: server.baseURL, path: "/whole")) {
            whole.append(event.data)
        }
        #expect(whole == ["one"])
    }

    @Test("a download cut and not retried fails, and leaves no partial file")
    func cutDownloadLeavesNothing() async throws {
        let server = try LoopbackServer(port: 0) { _ in
            .closeMidBody(StubResponse(statusCode: 200, headers: [:], body: alphabet(100_000)))
        }
        defer { server.kill() }
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let pool = TaskPool(configuration: .init(transport: URLSessionTransport(configuration: .ephemeral)))
        do {
            try await pool.download(TestEndpoint(baseURL: server.baseURL, path: "/file"), to: scratch.file("x.bin"))
            Issue.record("a cut download succeeded")
        } catch {
            #expect(error.urlError?.code == .networkConnectionLost)
        }
        #expect(scratch.contents.isEmpty)
    }

    @Test("Server-Sent Events reconnect after a drop with Last-Event-ID, wait the server's retry, and end at 204")
    func serverSentEventsReconnect() async throws {
        let connections = Counter()
        let server = try LoopbackServer(port: 0) { request in
            let headers = ["Content-Type": "text/event-stream"]
            switch connections.increment() {
            case 1:
                // Two events, a comment, a reconnection time of 10 ms, and an event the drop cuts short.
                let text =
                    ": hello\nretry: 10\nid: 1\ndata: a\n\nid: 2\nevent: update\ndata: b1\ndata: b2\n\ndata: lost"
                return .respond(StubResponse(statusCode: 200, headers: headers, body: Data(text.utf8)))
            case 2:
                let lastID = request.value(forHTTPHeaderField: "Last-Event-ID") ?? "none"
                return .respond(
                    StubResponse(statusCode: 200, headers: headers, body: Data("data: after \(lastID)\r\n\r\n".utf8)))
            default:
                return .respond(StubResponse(statusCode: 204))
            }
        }
        defer { server.kill() }
        let pool = TaskPool(
            configuration: .init(
                transport: URLSessionTransport(configuration: .ephemeral),
                interceptors: [RetryPolicy(maximumAttempts: 5, baseDelay: 30)]))
        let started = Date()
        let events = try await pool.events(TestEndpoint(baseURL: server.baseURL, path: "/events"))
        var received: [ServerSentEvent] = []
        for try await event in events { received.append(event) }
        #expect(
            received == [
                ServerSentEvent(data: "a", id: "1", retry: 0.01),
                ServerSentEvent(event: "update", data: "b1\nb2", id: "2", retry: 0.01),
                ServerSentEvent(data: "after 2", id: "2", retry: 0.01),
            ])
        #expect(connections.count == 3)
        // The server's 10 ms, not the policy's 30 s.
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(server.requests.first?.value(forHTTPHeaderField: "Accept") == "text/event-stream")
        #expect(events.task.state == .completed)
    }

    @Test("a stream's consumer that falls behind pauses the transfer, and catching up resumes it")
    func backPressure() async throws {
        let body = BodyStream(decoder: RawChunks(), highWater: 100)
        let control = PausingControl()
        body.attach(control)
        body.begin(
            HTTPURLResponse(
                url: URL(string: "https://example.com")!, statusCode: 200, httpVersion: nil, headerFields: nil)!)
        for _ in 0..<5 { body.receive(Data(repeating: 1, count: 40)) }
        #expect(control.pauses == 1)
        #expect(control.resumes == 0)
        var read = 0
        for _ in 0..<4 {
            guard case .success(let chunk?) = await body.next() else { break }
            read += chunk.count
        }
        #expect(read == 160)
        #expect(control.resumes == 0)  // 40 bytes still wait: above the low-water mark of 25
        body.receive(Data(repeating: 1, count: 10))
        guard case .success(let chunk?) = await body.next() else {
            Issue.record("a chunk was lost")
            return
        }
        #expect(chunk.count == 40)
        #expect(control.resumes == 1)  // 10 bytes wait now
        body.finish(.success(()))
        guard case .success(let last?) = await body.next(), last.count == 10 else {
            Issue.record("the last chunk was lost at the end")
            return
        }
        guard case .success(nil) = await body.next() else {
            Issue.record("the stream did not end")
            return
        }
    }
}

extension TaskPool {
    /// A pool over a stub that counts the requests it receives.
    static func counting() -> (TaskPool, Counter) {
        let sent = Counter()
        let pool = TaskPool.stubbed { _, _ in
            sent.increment()
            return .json("{}")
        }
        return (pool, sent)
    }
}

/// A transfer control that counts pauses and resumes.
final class PausingControl: TransportControl, @unchecked Sendable {  // `lock` guards the counts.
    private let lock = NSLock()
    private var counts = (pauses: 0, resumes: 0)
    var pauses: Int { lock.withLock { counts.pauses } }
    var resumes: Int { lock.withLock { counts.resumes } }
    func cancel() {}
    func pauseReceiving() { lock.withLock { counts.pauses += 1 } }
    func resumeReceiving() { lock.withLock { counts.resumes += 1 } }
}

@Suite("The transport path's contract")
struct TransportContractTests {
    /// Ignores cancel, answers its head after `delay`, and, told the transfer is over, reports nothing more.
    final class LateHeadTransport: Transport, @unchecked Sendable {  // `lock` guards `answers`.
        private let lock = NSLock()
        private var answers: [Bool] = []
        var heads: [Bool] { lock.withLock { answers } }

        final class Deaf: TransportControl {
            func cancel() {}
        }

        func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
            Task.detached {
                try? await Task.sleep(nanoseconds: 200_000_000)
                let head = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: nil, headerFields: nil)!
                let goOn = events.receive(head: head)
                self.lock.withLock { self.answers.append(goOn) }
                if goOn { events.finish() }
            }
            return Deaf()
        }
    }

    @Test("a transfer told it is over after its task was cancelled still ends its attempt: the runner lets go")
    func overAfterCancel() async throws {
        let transport = LateHeadTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        weak var weakTask: DataTask?
        let ended = Counter()
        do {
            pool.send(TestEndpoint(), id: "late") { _ in ended.increment() }  // a Swift runner awaits the attempt
            let task = try #require(pool.task(id: "late"))
            weakTask = task
            #expect(await eventually { task.phase == .sending })
            #expect(pool.cancel(id: "late"))
        }
        #expect(await eventually { transport.heads == [false] })
        // The runner, resumed with the attempt's end, returns and lets go of the task.
        #expect(await eventually { weakTask == nil })
        #expect(ended.count == 1)
    }
}
