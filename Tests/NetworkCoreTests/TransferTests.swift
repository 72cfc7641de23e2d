import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Transfers: bad input, a stream body over URLSession, back-pressure")
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

    @Test(
        "a stream body over URLSession is spooled and sent whole with its length; cancelled while spooling, nothing is sent or left"
    )
    func streamBody() async throws {
        let server = try MockServer { request in MockResponse(statusCode: 200, body: request.httpBody ?? Data()) }
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

    /// A transport that resizes the request's file to `size` bytes (removes it for `nil`), then sends it over
    /// URLSession: the file changed after the pool announced its length.
    struct ResizingTransport: Transport {
        let size: Int?
        let inner: URLSessionTransport

        func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
            if case .file(let url) = body, size == nil { try? FileManager.default.removeItem(at: url) }
            if case .file(let url) = body, let size, let handle = try? FileHandle(forWritingTo: url) {
                try? handle.truncate(atOffset: UInt64(min(size, 100_000)))
                if size > 100_000 {
                    _ = try? handle.seekToEnd()
                    try? handle.write(contentsOf: alphabet(size).suffix(from: 100_000))
                }
                try? handle.close()
            }
            return inner.start(request, body: body, events: events)
        }
    }

    @Test(
        "over URLSession, a file that became shorter or was removed after its length was announced fails typed; one that grew sends the length announced",
        arguments: [URLSessionTransport.FileUploads.withLength, .chunked])
    func fileChangedWhileSent(_ uploads: URLSessionTransport.FileUploads) async throws {
        let server = try MockServer(port: 0) { _ in MockResponse(.json("{}")) }
        defer { server.kill() }
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("upload.bin")
        let endpoint = TestEndpoint(
            baseURL: server.baseURL, path: "/up", method: .post, task: .file(file, contentType: "text/plain"))
        func pool(resizingTo size: Int?) -> TaskPool {
            TaskPool(
                configuration: .init(
                    transport: ResizingTransport(
                        size: size, inner: URLSessionTransport(configuration: .ephemeral, fileUploads: uploads)),
                    requestTimeout: 10))
        }

        try alphabet(200_000).write(to: file)
        do {
            let response = try await pool(resizingTo: 150_000).send(endpoint)
            // Chunked, no length was announced: the file as it is now is the body.
            #expect(uploads == .chunked, "a body shorter than its Content-Length was sent: \(response.statusCode)")
            #expect(server.requests.last?.httpBody == alphabet(150_000))
        } catch {
            #expect(uploads == .withLength)
            guard case .fileAccessFailed(let path, let reason) = error else {
                Issue.record("not a fileAccessFailed: \(error)")
                return
            }
            #expect(path == file.path)
            #expect(reason.contains("became shorter"), "\(reason)")
        }

        try alphabet(200_000).write(to: file)
        let response = try await pool(resizingTo: 250_000).send(endpoint)
        #expect(response.statusCode == 200)
        let sent = try #require(server.requests.last)
        if uploads == .withLength {
            #expect(sent.value(forHTTPHeaderField: "Content-Length") == "200000")
            #expect(sent.httpBody == alphabet(200_000))
        } else {
            #expect(sent.httpBody == alphabet(250_000))
        }

        // Removed: it cannot be opened, whichever way it goes.
        try alphabet(200_000).write(to: file)
        let requestsBefore = server.requests.count
        do {
            _ = try await pool(resizingTo: nil).send(endpoint)
            Issue.record("a removed file was sent")
        } catch {
            guard case .fileAccessFailed(let path, let reason) = error else {
                Issue.record("not a fileAccessFailed: \(error)")
                return
            }
            #expect(path == file.path)
            #expect(reason == "it cannot be opened for reading: No such file or directory")
        }
        #expect(server.requests.count == requestsBefore)
    }

    #if os(Linux)
        /// How many of the process's open descriptors are of `file`.
        static func descriptors(of file: URL) -> Int {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return names.filter {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == file.path
            }.count
        }

        @Test(
            "over URLSession, a file upload that ends, fails or is refused by the server leaves no descriptor of the file open",
            arguments: [URLSessionTransport.FileUploads.withLength, .chunked])
        func uploadClosesItsFile(_ uploads: URLSessionTransport.FileUploads) async throws {
            let server = try MockServer(port: 0) { request in
                request.url?.path == "/refused"
                    ? MockResponse(StubResponse(statusCode: 413)) : MockResponse(.json("{}"))
            }
            defer { server.kill() }
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let file = scratch.file("upload.bin")
            try alphabet(300_000).write(to: file)
            let pool = TaskPool(
                configuration: .init(
                    transport: URLSessionTransport(configuration: .ephemeral, fileUploads: uploads), requestTimeout: 10)
            )
            for path in ["/ok", "/refused", "/ok"] {
                let endpoint = TestEndpoint(
                    baseURL: server.baseURL, path: path, method: .post, task: .file(file, contentType: "text/plain"))
                let status: Int?
                do { status = try await pool.send(endpoint).statusCode } catch { status = error.statusCode }
                #expect(status == (path == "/ok" ? 200 : 413), "\(path)")
            }
            #expect(server.requests.count == 3)
            #expect(Self.descriptors(of: file) == 0)
        }
    #endif

    @Test("a stream's consumer that falls behind pauses the transfer, and catching up resumes it")
    func backPressure() async throws {
        let body = BodyStream(decoder: RawChunks(), highWater: 100)
        let control = PausingControl()
        body.attach(control)
        try body.begin(
            HTTPURLResponse(
                url: URL(string: "https://example.com")!, statusCode: 200, httpVersion: nil, headerFields: nil)!)
        for _ in 0..<5 { try body.write(Data(repeating: 1, count: 40)) }
        #expect(control.pauses == 1)
        #expect(control.resumes == 0)
        var read = 0
        for _ in 0..<4 {
            guard case .success(let chunk?) = await body.next() else { break }
            read += chunk.count
        }
        #expect(read == 160)
        #expect(control.resumes == 0)  // 40 bytes still wait: above the low-water mark of 25
        try body.write(Data(repeating: 1, count: 10))
        guard case .success(let chunk?) = await body.next() else {
            Issue.record("a chunk was lost")
            return
        }
        #expect(chunk.count == 40)
        #expect(control.resumes == 1)  // 10 bytes wait now
        body.taskEnded(with: .success(PoolStateDriver.response))
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
    /// Ignores cancel, answers its head once released (or after 5 s), and, told the transfer is over,
    /// reports nothing more.
    final class LateHeadTransport: Transport, @unchecked Sendable {  // `lock` guards `answers`, `released`.
        private let lock = NSLock()
        private var answers: [Bool] = []
        private var released = false
        var heads: [Bool] { lock.withLock { answers } }
        func release() { lock.withLock { released = true } }

        final class Deaf: TransportControl {
            func cancel() {}
        }

        func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
            Task.detached {
                for _ in 0..<500 where !self.lock.withLock({ self.released }) {
                    try? await Task.sleep(nanoseconds: 10_000_000)
                }
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
            transport.release()  // the head comes after the cancel, however slow this machine is
        }
        #expect(await eventually { transport.heads == [false] })
        // The runner, resumed with the attempt's end, returns and lets go of the task.
        #expect(await eventually { weakTask == nil })
        #expect(ended.count == 1)
    }
}
