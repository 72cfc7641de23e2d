import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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

@Suite(
    "Transfers against httpbin (real server on 127.0.0.1)",
    .enabled(if: HTTPBin.url != nil, "NETWORKCORE_HTTPBIN_URL is not set; Scripts/test sets it"))
struct HTTPBinTransferTests {
    @Test(
        "a download is written to its file as it arrives, and nothing else is left in the directory",
        arguments: TransportUnderTest.httpbin)
    func download(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
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

    @Test(
        "a download's progress climbs to the whole length, the last value told before the call returns",
        arguments: TransportUnderTest.httpbin)
    func downloadProgress(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
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
        arguments: TransportUnderTest.fileUploads)
    func uploadProgress(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
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

    @Test("a download replaces a file that was there", arguments: TransportUnderTest.httpbin)
    func downloadReplaces(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("range.bin")
        try Data("old contents that are longer than the new ones".utf8).write(to: destination)
        try await pool.download(TransferEndpoint.range(26), to: destination)
        #expect(try Data(contentsOf: destination) == alphabet(26))
        #expect(scratch.contents == ["range.bin"])
    }

    @Test(
        "an error status is not written: the task fails with it, and no file is left",
        arguments: TransportUnderTest.httpbin
    )
    func downloadErrorStatus(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
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

    @Test(
        "a stream's lines arrive as httpbin sends them: /stream/5 is five JSON lines",
        arguments: TransportUnderTest.httpbin
    )
    func streamLines(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
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

    @Test(
        "a dripped body arrives in more than one chunk, every byte once, its first byte timed before its end",
        arguments: TransportUnderTest.httpbin)
    func drip(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
        let stream = try await pool.stream(TransferEndpoint.drip(bytes: 8, seconds: 0.8))
        var chunks = 0
        var bytes = 0
        for try await chunk in stream {
            chunks += 1
            bytes += chunk.count
        }
        #expect(bytes == 8)
        #expect(chunks >= 2)
        #expect(stream.task.bytesReceived == 8)
        // Its first byte is timed before its end. How far apart depends on the machine's load, so the test
        // does not say; the loopback suite holds a stream's body back to show chunks pass on as they come.
        let attempt = try #require(stream.task.timings.attempts.first)
        #expect(try #require(attempt.firstByte) < attempt.end)
    }

    @Test(
        "a stream whose status is not accepted throws it, with the server's body", arguments: TransportUnderTest.httpbin
    )
    func streamErrorStatus(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
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
        arguments: TransportUnderTest.fileUploads)
    func upload(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
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
        let recording = transport.pool(recordingInto: recorder)
        let recorded = try await recording.send(TransferEndpoint.upload(file), parser: DecodableParser<Echo>())
        #expect(recorded.data == text)
        #expect(recorder.count == 1)
        if transport.sendsFileLength {
            #expect(echo.headers["Content-Length"] == String(text.utf8.count))
            #expect(echo.headers["Transfer-Encoding"] == nil)
        } else {
            #expect(echo.headers["Content-Length"] == nil)
            #expect(echo.headers["Transfer-Encoding"] == "chunked")
        }
    }
}

@Suite("Transfers over loopback: cuts, resumes, reconnects, cancels")
struct LoopbackTransferTests {
    @Test(
        "a download cut midway is resumed by a retry with Range and If-Range, its progress never going back, and the file is whole",
        arguments: TransportUnderTest.all)
    func resumedDownload(_ transport: TransportUnderTest) async throws {
        let body = alphabet(200_000)
        // What the task table said of the task while its retry waited for this answer.
        let box = PoolBox()
        let progressWhileWaiting = ProgressLog()
        let server = try MockServer(port: 0) { request in
            let headers = ["ETag": "\"v1\"", "Content-Type": "application/octet-stream"]
            guard let range = request.value(forHTTPHeaderField: "Range") else {
                return MockResponse(StubResponse(statusCode: 200, headers: headers, body: body), faults: [.cutMidBody])
            }
            let start = Int(range.dropFirst("bytes=".count).prefix { $0 != "-" }) ?? 0
            if let progress = box.pool?.task(id: "resume")?.progress { progressWhileWaiting.append(progress) }
            var partial = headers
            partial["Content-Range"] = "bytes \(start)-\(body.count - 1)/\(body.count)"
            return MockResponse(
                StubResponse(statusCode: 206, headers: partial, body: body.subdata(in: start..<body.count)))
        }
        defer { server.kill() }
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let pool = transport.pool(
            .init(
                interceptors: [RetryPolicy(baseDelay: 0.01, random: { $0.upperBound })]))
        let destination = scratch.file("alphabet.bin")
        let endpoint = TestEndpoint(baseURL: server.baseURL, path: "/file")
        let log = ProgressLog()
        box.pool = pool
        let response = try await pool.download(endpoint, to: destination, id: "resume") { log.append($0) }
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
        // It asks for the rest after what it kept: the server cut at 100,000 bytes, and a transport may have
        // been handed fewer of them before it learned of the cut (AsyncHTTPClient drops what it had buffered).
        let range = try #require(requests.last?.value(forHTTPHeaderField: "Range"))
        let kept = try #require(Int(range.dropFirst("bytes=".count).dropLast()))
        #expect(range == "bytes=\(kept)-")
        #expect((1...100_000).contains(kept))
        // While the retry waited for its answer, the progress stood at the bytes kept: it did not go back.
        #expect(progressWhileWaiting.values.map(\.bytesReceived) == [kept])
        #expect(progressWhileWaiting.values.first?.bytesExpected == 200_000)
        #expect(requests.last?.value(forHTTPHeaderField: "If-Range") == "\"v1\"")
    }

    @Test(
        "a slow upload is cancelled by id while it sends: the task ends cancelled and the server never gets it whole",
        arguments: TransportUnderTest.all)
    func slowUploadCancelled(_ transport: TransportUnderTest) async throws {
        let server = try MockServer(bodyReadPause: 0.05) { _ in MockResponse(StubResponse(statusCode: 200)) }
        defer { server.kill() }
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("big.bin")
        try Data(count: 32 << 20).write(to: file)
        let pool = transport.pool()
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
        "an event stream that ends mid-event, not reconnected, throws a lost connection; one that ends between events just ends",
        arguments: TransportUnderTest.all)
    func eventStreamEndsMidEvent(_ transport: TransportUnderTest) async throws {
        let server = try MockServer { request in
            let body = request.url?.path == "/cut" ? "data: one\n\ndata: cu" : "data: one\n\n"
            return MockResponse(statusCode: 200, headers: ["Content-Type": "text/event-stream"], body: Data(body.utf8))
        }
        defer { server.kill() }
        let pool = transport.pool()
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

    @Test(
        "an event stream whose answer is not text/event-stream fails with a decoding error and is not reconnected",
        arguments: TransportUnderTest.all)
    func eventStreamOfAnotherType(_ transport: TransportUnderTest) async throws {
        let connections = Counter()
        let server = try MockServer(port: 0) { request in
            let count = connections.increment()
            switch request.url?.path {
            case "/json":
                return MockResponse(
                    StubResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8)))
            case "/untyped":
                return MockResponse(StubResponse(statusCode: 200, headers: [:], body: Data("data: x\n\n".utf8)))
            default:
                // An event stream, cut mid-event; the reconnection gets a maintenance page.
                if count == 3 {
                    let text = "retry: 10\nid: 1\ndata: a\n\ndata: lost"
                    return MockResponse(
                        StubResponse(
                            statusCode: 200, headers: ["Content-Type": "text/event-stream"], body: Data(text.utf8)))
                }
                return MockResponse(
                    StubResponse(
                        statusCode: 200, headers: ["Content-Type": "text/html"], body: Data("<p>soon</p>".utf8)))
            }
        }
        defer { server.kill() }
        let pool = transport.pool(.init(interceptors: [RetryPolicy(maximumAttempts: 5, baseDelay: 0.01)]))
        for (path, named) in [("/json", "\"application/json\""), ("/untyped", "no Content-Type")] {
            do {
                _ = try await pool.events(TestEndpoint(baseURL: server.baseURL, path: path), id: path)
                Issue.record("\(path): the stream opened")
            } catch {
                guard case .decodingFailed(let failure) = error else {
                    Issue.record("\(path): \(error)")
                    continue
                }
                #expect(failure.reason.contains(named), "\(failure)")
                #expect(failure.reason.contains("not text/event-stream"))
            }
        }
        #expect(connections.count == 2)  // neither was connected again
        var received: [String] = []
        do {
            for try await event in try await pool.events(
                TestEndpoint(baseURL: server.baseURL, path: "/feed"), id: "feed")
            {
                received.append(event.data)
            }
            Issue.record("the stream ended without an error")
        } catch {
            guard case .decodingFailed(let failure)? = error as? NetworkError else {
                Issue.record("\(error)")
                return
            }
            #expect(failure.reason.contains("\"text/html\""))
        }
        #expect(received == ["a"])
        #expect(connections.count == 4)  // the stream's first connection and one reconnection
        #expect(pool.activeTasks.isEmpty)
    }

    @Test(
        "a line or an event longer than the size limit ends the task with responseTooLarge, not reconnected",
        arguments: TransportUnderTest.all)
    func endlessLineIsRefused(_ transport: TransportUnderTest) async throws {
        let connections = Counter()
        // 1 MiB of one line, in 16 pieces: with a limit of 64 KiB, nothing of it is kept past the limit.
        let server = try MockServer(port: 0) { request in
            connections.increment()
            let events = request.url?.path == "/events"
            let prefix = Data((events ? "data: first\n\ndata: " : "first\n").utf8)
            return MockResponse(
                StubResponse(
                    statusCode: 200, headers: ["Content-Type": events ? "text/event-stream" : "text/plain"],
                    body: prefix + Data(repeating: UInt8(ascii: "x"), count: 1 << 20)),
                faults: [.trickle(pieces: 16, interval: 0.005)])
        }
        defer { server.kill() }
        let pool = transport.pool(
            .init(
                requestTimeout: 15, interceptors: [RetryPolicy(maximumAttempts: 5, baseDelay: 0.01)],
                maximumResponseBytes: 64 << 10))
        /// Whether `error` is the size limit's.
        func isTooLarge(_ error: any Error) -> Bool {
            guard case .responseTooLarge(let limit)? = error as? NetworkError else { return false }
            return limit == 64 << 10
        }
        var lines: [String] = []
        let stream = try await pool.stream(TestEndpoint(baseURL: server.baseURL, path: "/lines"), id: "lines")
        do {
            for try await line in stream.lines { lines.append(line) }
            Issue.record("the endless line was read")
        } catch {
            #expect(isTooLarge(error), "\(error)")
        }
        #expect(lines == ["first"])
        #expect(await eventually { stream.task.state == .failed })
        var events: [String] = []
        do {
            for try await event in try await pool.events(TestEndpoint(baseURL: server.baseURL, path: "/events")) {
                events.append(event.data)
            }
            Issue.record("the endless event was read")
        } catch {
            #expect(isTooLarge(error), "\(error)")
        }
        #expect(events == ["first"])
        #expect(connections.count == 2)  // neither was connected again
        #expect(await eventually { pool.activeTasks.isEmpty })
    }

    @Test(
        "a reader that falls behind gets every byte once, in order: paused where the transport can, else failed past the limit",
        arguments: TransportUnderTest.all)
    func slowReaderGetsTheBodyInOrder(_ transport: TransportUnderTest) async throws {
        // 8 MiB of 8-byte big-endian counters 0, 1, 2…: a byte repeated or skipped breaks the count.
        let count = 1 << 20
        // Written into one buffer, not appended a million times: a debug build under ThreadSanitizer took
        // seconds for that, beside timing-sensitive tests.
        let body = (0..<UInt64(count)).map(\.bigEndian).withUnsafeBytes { Data($0) }
        // Half a megabyte every 5 ms: the reader falls a megabyte behind (where a transport pauses) well
        // before the server is done.
        let server = try MockServer(port: 0) { [body] _ in
            MockResponse(
                StubResponse(statusCode: 200, headers: ["Content-Type": "application/octet-stream"], body: body),
                faults: [.trickle(pieces: 16, interval: 0.005)])
        }
        defer { server.kill() }
        let limit = 16 << 20
        let pool = transport.pool(.init(requestTimeout: 30, maximumResponseBytes: limit))
        let stream = try await pool.stream(TestEndpoint(baseURL: server.baseURL, path: "/count"), id: "count")
        var expected: UInt64 = 0
        var carry = Data()
        var read = 0
        var chunks = 0
        var outOfOrder: Int?
        var failure: (any Error)?
        do {
            for try await chunk in stream {
                read += chunk.count
                chunks += 1
                carry.append(chunk)
                let whole = carry.count / 8 * 8
                carry.withUnsafeBytes { bytes in
                    for offset in stride(from: 0, to: whole, by: 8) {
                        let value = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                        if value != expected, outOfOrder == nil { outOfOrder = read - carry.count + offset }
                        expected = value &+ 1
                    }
                }
                carry.removeFirst(whole)
                // The first 40 chunks are read slowly: the transfer runs far ahead.
                if chunks <= 40 { try await Task.sleep(nanoseconds: 5_000_000) }
            }
        } catch {
            failure = error
        }
        #expect(outOfOrder == nil, "the body went out of order at byte \(outOfOrder ?? -1)")
        #expect(read <= body.count)
        var pauses = true
        #if canImport(FoundationNetworking)
            pauses = !transport.name.hasPrefix("URLSession")
        #endif
        if pauses {
            #expect(failure == nil, "\(failure.map { "\($0)" } ?? "")")
            #expect(read == body.count)
        } else if let failure {
            // FoundationNetworking cannot pause a transfer: past the limit unread, the stream ends.
            guard case .responseTooLarge(let reported)? = failure as? NetworkError else {
                Issue.record("\(failure)")
                return
            }
            #expect(reported == limit)
            #expect(read >= limit)  // what was received before the end was all read
        } else {
            #expect(read == body.count)
        }
        #expect(await eventually { pool.activeTasks.isEmpty })
    }

    @Test("a download cut and not retried fails, and leaves no partial file", arguments: TransportUnderTest.all)
    func cutDownloadLeavesNothing(_ transport: TransportUnderTest) async throws {
        let server = try MockServer(port: 0) { _ in
            MockResponse(StubResponse(statusCode: 200, headers: [:], body: alphabet(100_000)), faults: [.cutMidBody])
        }
        defer { server.kill() }
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let pool = transport.pool()
        do {
            try await pool.download(TestEndpoint(baseURL: server.baseURL, path: "/file"), to: scratch.file("x.bin"))
            Issue.record("a cut download succeeded")
        } catch {
            #expect(error.urlError?.code == .networkConnectionLost)
        }
        #expect(scratch.contents.isEmpty)
    }

    @Test(
        "Server-Sent Events reconnect after a drop with Last-Event-ID, wait the server's retry, and end at 204",
        arguments: TransportUnderTest.all)
    func serverSentEventsReconnect(_ transport: TransportUnderTest) async throws {
        let connections = Counter()
        let server = try MockServer(port: 0) { request in
            let headers = ["Content-Type": "text/event-stream"]
            switch connections.increment() {
            case 1:
                // Two events, a comment, a reconnection time of 10 ms, and an event the drop cuts short.
                let text =
                    ": hello\nretry: 10\nid: 1\ndata: a\n\nid: 2\nevent: update\ndata: b1\ndata: b2\n\ndata: lost"
                return MockResponse(StubResponse(statusCode: 200, headers: headers, body: Data(text.utf8)))
            case 2:
                let lastID = request.value(forHTTPHeaderField: "Last-Event-ID") ?? "none"
                return MockResponse(
                    StubResponse(statusCode: 200, headers: headers, body: Data("data: after \(lastID)\r\n\r\n".utf8)))
            default:
                return MockResponse(StubResponse(statusCode: 204))
            }
        }
        defer { server.kill() }
        let pool = transport.pool(
            .init(
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

    @Test(
        "a file upload redirected by 307 or 308 is sent whole again, as it was; by 303 it becomes a GET without a body",
        arguments: TransportUnderTest.fileUploads)
    func redirectedFileUpload(_ transport: TransportUnderTest) async throws {
        let server = try MockServer(port: 0) { request in
            let path = request.url?.path ?? ""
            if let status = Int(path.dropFirst()), [303, 307, 308].contains(status) {
                return MockResponse(StubResponse(statusCode: status, headers: ["Location": "/moved\(status)"]))
            }
            return MockResponse(.json("{}"))
        }
        defer { server.kill() }
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("upload.bin")
        let body = alphabet(300_000)
        try body.write(to: file)
        let pool = transport.pool()
        for status in [307, 308, 303] {
            let endpoint = TestEndpoint(
                baseURL: server.baseURL, path: "/\(status)", method: .post,
                task: .file(file, contentType: "application/octet-stream"))
            let response = try await pool.send(endpoint)
            #expect(response.statusCode == 200, "\(status)")
        }
        let requests = server.requests
        #expect(requests.map { $0.url?.path ?? "" } == ["/307", "/moved307", "/308", "/moved308", "/303", "/moved303"])
        #expect(requests.map { $0.httpMethod ?? "" } == ["POST", "POST", "POST", "POST", "POST", "GET"])
        for (index, request) in requests.enumerated() {
            let path = request.url?.path ?? ""
            if path == "/moved303" {
                #expect(request.httpBody == nil)
                #expect(request.value(forHTTPHeaderField: "Content-Length") == nil)
                #expect(request.value(forHTTPHeaderField: "Transfer-Encoding") == nil)
                continue
            }
            #expect(request.httpBody == body, "request \(index), \(path): \(request.httpBody?.count ?? 0) bytes")
            if transport.sendsFileLength {
                #expect(request.value(forHTTPHeaderField: "Content-Length") == "300000", "\(path)")
                #expect(request.value(forHTTPHeaderField: "Transfer-Encoding") == nil, "\(path)")
            } else {
                #expect(request.value(forHTTPHeaderField: "Transfer-Encoding") == "chunked", "\(path)")
            }
        }
    }
}
