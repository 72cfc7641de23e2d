import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport the test drives by hand: it keeps each transfer's events for the test to report to.
final class DrivenTransport: Transport, @unchecked Sendable {  // `lock` guards `started`.
    private let lock = NSLock()
    private var started: [(request: URLRequest, events: TransportEvents)] = []
    /// How many transfers were started, to wait for.
    let starts = Tally()
    /// How many transfers it was asked to start.
    var count: Int { lock.withLock { started.count } }
    /// The last transfer's events.
    var events: TransportEvents? { lock.withLock { started.last?.events } }

    final class Control: TransportControl {
        func cancel() {}
    }

    func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
        lock.withLock { started.append((request, events)) }
        starts.increment()
        return Control()
    }

    /// A head for `url`: `status`, with these headers.
    static func head(_ status: Int = 200, _ headers: [String: String] = [:]) -> HTTPURLResponse {
        HTTPURLResponse(
            url: URL(string: "https://x.test/")!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
    }
}

/// Progress values a callback received, from any thread.
@Suite(
    "Progress of a task: bytes each way, expected lengths, rate, the stream and the table", .timeLimit(.minutes(1)))
struct ProgressTests {
    @Test(
        "Content-Range values are read when well formed, and nothing else is",
        arguments: [
            ("bytes 0-99/200", ContentRange?.some(.init("bytes 0-99/200")!)),
            ("bytes 100-199/*", .init("bytes 100-199/*")),
            ("bytes 100-99/200", nil), ("bytes 0-199/199", nil), ("bytes -1-5/9", nil), ("items 0-1/2", nil),
            ("bytes 0-1", nil), ("bytes a-b/c", nil), ("", nil),
        ])
    func contentRange(value: String, expected: ContentRange?) {
        #expect(ContentRange(value) == expected)
    }

    @Test("a 206 counts from its range's start to the whole length; a 200 from 0 to its Content-Length")
    func extent() {
        func extent(_ status: Int, _ fields: [(name: String, value: String)]) -> (offset: Int, total: Int?) {
            let head = ResponseHead(statusCode: status, fields: fields, url: nil)
            let reported = TransferProgress.extent(of: head, length: head.expectedContentLength)
            let response = ResponseHead(DrivenTransport.head(status, Dictionary(uniqueKeysWithValues: fields)))
            let made = TransferProgress.extent(of: response, length: response.expectedContentLength)
            #expect(reported == made, "\(status) \(fields)")
            return reported
        }
        #expect(extent(206, [("Content-Range", "bytes 100-199/200"), ("Content-Length", "100")]) == (100, 200))
        #expect(extent(206, [("Content-Range", "bytes 100-199/*"), ("Content-Length", "100")]) == (100, 200))
        #expect(extent(200, [("content-length", "42")]) == (0, 42))
        #expect(extent(200, []) == (0, nil))
        // A 200 that carries a Content-Range (it should not) is a whole body.
        #expect(extent(200, [("Content-Range", "bytes 100-199/200"), ("Content-Length", "7")]) == (0, 7))
    }

    @Test("the fraction is of the answer once its length is known, of the body being sent before, else nil")
    func fraction() {
        #expect(TransferProgress(bytesReceived: 50, bytesExpected: 200).fractionCompleted == 0.25)
        #expect(TransferProgress(bytesReceived: 0, bytesExpected: 0).fractionCompleted == 1)
        #expect(TransferProgress(bytesReceived: 300, bytesExpected: 200).fractionCompleted == 1)
        #expect(TransferProgress(bytesSent: 30, bytesToSend: 120).fractionCompleted == 0.25)
        #expect(TransferProgress(bytesSent: 30, bytesToSend: 120, bytesReceived: 5).fractionCompleted == nil)
        #expect(TransferProgress(bytesReceived: 5).fractionCompleted == nil)
        #expect(TransferProgress().fractionCompleted == nil)
        #expect(TransferProgress.bytes(812) == "812 B")
        #expect(TransferProgress.bytes(1_250) == "1.2 KB")
        #expect(TransferProgress.bytes(3_400_000) == "3.4 MB")
        #expect(TransferProgress(bytesReceived: 1_250, bytesExpected: 4_000).summary == "1.2 KB of 4.0 KB")
        #expect(TransferProgress(bytesSent: 10, bytesToSend: 20).summary == "sent 10 B of 20 B")
        #expect(TransferProgress().summary == "-")
    }

    @Test("a task's progress follows its transfer: sent, then received of the announced length, in the table too")
    func followsTheTransfer() async throws {
        let transport = DrivenTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        let log = ProgressLog()
        let endpoint = TestEndpoint(
            method: .post, task: .data(Data(repeating: 1, count: 10), contentType: "application/octet-stream"))
        let sent = immediately { try await pool.upload(endpoint, id: "t") { log.append($0) } }
        let events = try #require(transport.events)
        let task = try #require(pool.task(id: "t"))
        #expect(task.progress == TransferProgress(bytesSent: 0, bytesToSend: 10))

        events.sent(totalBytes: 4, expected: 10)
        #expect(task.progress.bytesSent == 4)
        #expect(task.progress.fractionCompleted == 0.4)
        events.sent(totalBytes: 10, expected: 10)
        events.receive(head: DrivenTransport.head(200, ["Content-Length": "6"]))
        #expect(task.progress.bytesExpected == 6)
        #expect(task.progress.fractionCompleted == 0)
        events.receive(body: Data("abc".utf8))
        let middle = task.progress
        #expect(middle.bytesReceived == 3)
        #expect(middle.fractionCompleted == 0.5)
        #expect(middle.bytesPerSecond > 0)
        #expect(pool.debugDescription.contains("3 B of 6 B (50 %)"))
        #expect(pool.activeTaskSnapshots.first?.progress.bytesReceived == 3)

        events.receive(body: Data("def".utf8))
        events.finish()
        let response = try await sent.value
        #expect(response.body == Data("abcdef".utf8))
        // The last value reaches the callback before the call returns.
        let last = try #require(log.values.last)
        #expect(last.bytesSent == 10)
        #expect(last.bytesReceived == 6)
        #expect(last.fractionCompleted == 1)
        let received = log.values.map(\.bytesReceived)
        #expect(received == received.sorted())
        #expect(log.values.count >= 2)
        // Once ended, the stream gives the final value and ends.
        var afterwards: [TransferProgress] = []
        for await value in task.progressUpdates { afterwards.append(value) }
        #expect(afterwards.map(\.bytesReceived) == [6])
    }

    @Test("a retry starts the figures again; a task's stream ends when the task is cancelled")
    func retryAndCancel() async throws {
        let transport = DrivenTransport()
        let pool = TaskPool(
            configuration: .init(
                transport: transport, interceptors: [RetryPolicy(baseDelay: 0.01, random: { $0.upperBound })]))
        pool.send(TestEndpoint(), id: "r") { _ in }
        let task = try #require(pool.task(id: "r"))
        var updates = task.progressUpdates.makeAsyncIterator()
        #expect(await updates.next()?.bytesReceived == 0)
        let first = try #require(transport.events)
        first.receive(head: DrivenTransport.head(200, ["Content-Length": "100"]))
        first.receive(body: Data(count: 40))
        #expect(task.progress.bytesReceived == 40)
        first.fail(URLError(.networkConnectionLost))
        // The policy's wait (10 ms, on the pool's timer) ends, and the second attempt is handed over.
        await transport.starts.reaches(2)
        #expect(task.progress.bytesReceived == 0)
        #expect(task.progress.bytesExpected == nil)
        #expect(task.attempts == 2)
        #expect(pool.cancel(id: "r"))
        var rest = 0
        while await updates.next() != nil { rest += 1 }
        #expect(rest >= 1)  // at least the last value, then the end
    }

    @Test("a caller that leaves a task others still wait for stops being told its progress, and returns")
    func leavingCallerStops() async throws {
        let transport = DrivenTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        let log = ProgressLog()
        let endpoint = TestEndpoint()
        let other = Latch()
        pool.send(endpoint, id: "shared") { _ in other.open() }
        let leaving = immediately { try await pool.upload(endpoint, id: "shared") { log.append($0) } }
        await log.count.reaches(1)
        leaving.cancel()
        let left = await leaving.result
        #expect(throws: NetworkError.self) { try left.get() }
        if case .failure(let error as NetworkError) = left { #expect(error.isCancelled) }
        let task = try #require(pool.task(id: "shared"))
        #expect(task.state == .running)
        transport.events?.receive(head: DrivenTransport.head(200, ["Content-Length": "2"]))
        transport.events?.receive(body: Data("ok".utf8))
        transport.events?.finish()
        await other.wait()
        #expect(log.values.allSatisfy { $0.bytesReceived == 0 })
    }
}
