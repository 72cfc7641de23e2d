import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("TaskPool")
struct TaskPoolTests {
    @Test("send returns the response; the task is active while it runs and gone after")
    func sendAndTrack() async throws {
        let logger = InMemoryLogger()
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport, logger: logger))
        let response = immediately { try await pool.send(TestEndpoint(), id: "item") }
        let task = try #require(pool.task(id: "item"))
        #expect(task.state == .running)
        #expect(task.phase == .sending)
        #expect(task.endDate == nil)
        #expect(pool.activeTasks.map(\.id) == ["item"])
        transport.answer(.json(#"{"id": 7}"#))
        let result = try await response.value
        #expect(result.statusCode == 200)
        #expect(String(decoding: result.body, as: UTF8.self) == #"{"id": 7}"#)
        #expect(pool.activeTasks.isEmpty)
        #expect(pool.task(id: "item") == nil)
        #expect(task.state == .completed)
        #expect(task.response === result)
        #expect(task.bytesReceived == 9)
        #expect(task.attempts == 1)
        let endDate = try #require(task.endDate)
        // The end date is the start date plus the task's monotonic duration.
        #expect(abs(endDate.timeIntervalSince(task.startDate) - task.elapsed) < 1e-6)
        #expect(task.elapsed > 0)
        #expect(logger.events.map(\.kind) == [.started, .finished])
        #expect(task.timings.finished.map { abs($0 - task.elapsed) < 1e-6 } == true)
        #expect(logger.events.map(\.kind) == [.started, .finished])
    }

    @Test("pool default headers reach the request; the endpoint overrides them")
    func defaultHeaders() async throws {
        let pool = TaskPool.stubbed { request, _ in
            .json(
                #"{"accept": "\#(request.value(forHTTPHeaderField: "Accept") ?? "")", "ua": "\#(request.value(forHTTPHeaderField: "User-Agent") ?? "")"}"#
            )
        }
        struct Echo: Decodable, Sendable {
            let accept: String
            let ua: String
        }
        let plain = try await pool.send(TestEndpoint(), parser: DecodableParser<Echo>())
        #expect(plain.accept == "application/json")
        #expect(plain.ua == "NetworkCore/\(LibraryVersion.current)")
        let custom = try await pool.send(TestEndpoint(headers: ["Accept": "text/csv"]), parser: DecodableParser<Echo>())
        #expect(custom.accept == "text/csv")
    }

    @Test("pool default headers, checked once, reach every request under one spelling each; the endpoint's win")
    func checkedDefaultHeaders() async throws {
        let seen = Locked<[[String: String]]>([])
        let stub = StubTransport { request, _ in
            seen.withLock { $0.append(request.allHTTPHeaderFields ?? [:]) }
            return .json("{}")
        }
        let pool = TaskPool(
            configuration: .init(transport: stub, defaultHeaders: ["x-trace": "pool", "accept": "application/json"]))
        _ = try await pool.send(TestEndpoint(path: "one"))
        _ = try await pool.send(TestEndpoint(path: "two", headers: ["X-TRACE": "endpoint", "x-extra": "1"]))
        _ = try await pool.send(TestEndpoint(path: "three"))
        #expect(
            seen.withLock { $0 } == [
                ["X-Trace": "pool", "Accept": "application/json"],
                ["X-Trace": "endpoint", "Accept": "application/json", "X-Extra": "1"],
                ["X-Trace": "pool", "Accept": "application/json"],
            ])
    }

    @Test("invalid pool default headers fail every send with the endpoint's URL, and nothing is sent")
    func invalidDefaultHeaders() async throws {
        let sent = Locked(0)
        let stub = StubTransport { _, _ in
            sent.withLock { $0 += 1 }
            return .json("{}")
        }
        for headers in [["Bad Name": "v"], ["X-A": "v\r\nInjected: 1"]] {
            let pool = TaskPool(configuration: .init(transport: stub, defaultHeaders: headers))
            for path in ["one", "two"] {
                await #expect {
                    _ = try await pool.send(TestEndpoint(path: path))
                } throws: { error in
                    guard case .invalidEndpoint(let url, _) = error as? NetworkError else { return false }
                    return url.hasSuffix("/\(path)")
                }
            }
            #expect(pool.activeTasks.isEmpty)
        }
        #expect(sent.withLock { $0 } == 0)
    }

    @Test("a pool that drained after a burst gives back its table; a small one keeps it")
    func drainedPoolReleasesItsTable() async throws {
        let pool = TaskPool.stubbed(delay: 10)
        for index in 0..<300 { pool.send(TestEndpoint(path: "burst/\(index)"), id: "b\(index)") { _ in } }
        #expect(pool.activeTasks.count == 300)
        #expect(pool.activeCapacity >= 300)
        #expect(pool.cancel(id: "b0"))
        #expect(pool.activeCapacity >= 300, "the table is kept while tasks remain")
        #expect(pool.cancelAll() == 299)
        #expect(pool.activeTasks.isEmpty)
        #expect(pool.activeCapacity <= TaskPool.State.keptCapacity)
        for index in 0..<10 { pool.send(TestEndpoint(path: "small/\(index)"), id: "s\(index)") { _ in } }
        let small = pool.activeCapacity
        #expect(small >= 10 && small <= TaskPool.State.keptCapacity)
        #expect(pool.cancelAll() == 10)
        #expect(pool.activeCapacity == small, "a table within the kept capacity is not reallocated")
    }

    @Test("activeTasks lists the running tasks oldest first")
    func oldestFirst() async throws {
        let pool = TaskPool.stubbed(delay: 10)
        for name in ["c", "a", "b"] {
            pool.send(TestEndpoint(path: name), id: name) { _ in }
        }
        #expect(pool.activeTasks.map(\.id) == ["c", "a", "b"])
        #expect(pool.cancelAll() == 3)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("debugDescription renders the active tasks as a table, credentials redacted")
    func table() async throws {
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        #expect(pool.debugDescription == "TaskPool: no active tasks")
        // A completion handler's send has handed its request to the transport when `send` returns.
        pool.send(TestEndpoint(task: .urlParameters(["api_key": "SECRET123", "page": 1])), id: "movies") { _ in }
        pool.send(TestEndpoint(path: "items/4", method: .delete), id: "delete-4") { _ in }
        #expect(pool.activeTasks.allSatisfy { $0.phase == .sending })
        let lines = pool.debugDescription.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("id"))
        for column in ["method", "url", "protocol", "state", "attempt", "elapsed ms"] {
            #expect(lines[0].contains(column))
        }
        #expect(lines[1].hasPrefix("movies  "))
        #expect(lines[1].contains("GET"))
        #expect(lines[1].contains("api_key=<redacted>&page=1"))
        #expect(lines[1].split(separator: " ")[4...5] == ["-", "sending"])
        #expect(lines[2].hasPrefix("delete-4"))
        #expect(lines[2].contains("DELETE"))
        #expect(!pool.debugDescription.contains("SECRET123"))
        // Once its answer's head arrives, a row names the protocol the transport read it in.
        let head = ResponseHead(statusCode: 200, httpVersion: "HTTP/2.0", fields: [], url: nil)
        #expect(try #require(transport.events(0)).receive(head: head))
        #expect(pool.activeTaskSnapshots.map(\.protocolVersion) == ["HTTP/2.0", nil])
        let answered = pool.debugDescription.split(separator: "\n")[1]
        #expect(answered.split(separator: " ")[4] == "HTTP/2.0")
        pool.cancelAll()
    }

    /// What a completion handler saw of the pool's other effects when its task's end called it.
    final class SeenAtEnd: Sendable {
        let starts = Locked<Int?>(nil)
        let cancels = Locked<Int?>(nil)
        let called = Latch()
    }

    /// A completion handler is called from `perform` itself, so what it reads there is what `perform` had done
    /// before resuming the task's waiters: the order is seen as it is, with no race to win.
    @Test("a task's end stops its transfer and begins the queued task it lets through before its caller resumes")
    func effectsBeforeResume() async throws {
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport, maximumConcurrentTasks: 1))
        let seen = SeenAtEnd()
        pool.send(TestEndpoint(path: "a"), id: "first") { _ in
            seen.starts.withLock { $0 = transport.starts.count }
            seen.called.open()
        }
        let second = immediately { try await pool.send(TestEndpoint(path: "b"), id: "second") }
        #expect(transport.starts.count == 1)
        #expect(pool.queuedCount == 1)
        transport.answer(at: 0)
        #expect(await seen.called.wait(upTo: 10 * slowRunScale))
        #expect(seen.starts.withLock { $0 } == 2)
        #expect(transport.requests.last?.url?.path == "/v1/b")
        transport.answer(at: 1)
        #expect(try await second.value.statusCode == 200)

        // A deadline's end: the transfer's cancel has reached the transport when the handler runs.
        let deadline = SeenAtEnd()
        pool.send(DeadlineEndpoint(resourceTimeout: 0.1), id: "deadline") { _ in
            deadline.cancels.withLock { $0 = transport.cancels.count }
            deadline.called.open()
        }
        #expect(await deadline.called.wait(upTo: 10 * slowRunScale))
        #expect(deadline.cancels.withLock { $0 } == 1)
        #expect(pool.activeTasks.isEmpty)
    }

    // MARK: Duplicate ids

    @Test("reject: a second send with a running id fails with duplicateTask naming it")
    func rejectPolicy() async throws {
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport, duplicatePolicy: .reject))
        let first = immediately { try await pool.send(TestEndpoint(), id: "dup") }
        do {
            _ = try await pool.send(TestEndpoint(), id: "dup")
            Issue.record("the duplicate was not rejected")
        } catch {
            guard case .duplicateTask(let id) = error else {
                Issue.record("expected duplicateTask, got \(error)")
                return
            }
            #expect(id == "dup")
            #expect(error.localizedDescription.contains("dup"))
        }
        transport.answer()
        #expect(try await first.value.statusCode == 200)
        #expect(transport.requests.count == 1)
        // Once the first has finished, the id is free again.
        let again = immediately { try await pool.send(TestEndpoint(), id: "dup") }
        transport.answer()
        #expect(try await again.value.statusCode == 200)
        #expect(transport.requests.count == 2)
    }

    @Test("join: the second caller gets the first call's response from one network request")
    func joinPolicy() async throws {
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport, duplicatePolicy: .join))
        let first = immediately { try await pool.send(TestEndpoint()) }
        let second = immediately { try await pool.send(TestEndpoint()) }
        #expect(pool.activeTasks.count == 1)
        #expect(pool.activeTasks.first?.waiterCount == 2)
        transport.answer(.json(#"{"n": 1}"#))
        let (a, b) = try await (first.value, second.value)
        #expect(a === b)
        #expect(transport.requests.count == 1)
    }

    @Test("join: a different call under a running id is rejected, not given the wrong answer")
    func joinDifferentCall() async throws {
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport, duplicatePolicy: .join))
        let first = immediately { try await pool.send(TestEndpoint(path: "a"), id: "screen") }
        await #expect(throws: NetworkError.self) { try await pool.send(TestEndpoint(path: "b"), id: "screen") }
        transport.answer()
        #expect(try await first.value.statusCode == 200)
        #expect(transport.requests.count == 1)
    }

    @Test("replace: the running task is cancelled and the new one runs")
    func replacePolicy() async throws {
        let logger = InMemoryLogger()
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport, logger: logger, duplicatePolicy: .replace))
        let first = immediately { try await pool.send(TestEndpoint(path: "old"), id: "screen") }
        let old = try #require(pool.task(id: "screen"))
        let second = immediately { try await pool.send(TestEndpoint(path: "new"), id: "screen") }
        // The replaced transfer was cancelled at once; the new one waits for its answer.
        #expect(transport.cancels.count == 1)
        transport.answer(.json(#"{"ok": true}"#))
        #expect(try await second.value.request.url?.path == "/v1/new")
        #expect(isCancelled(await first.result))
        #expect(old.state == .cancelled)
        #expect(old.error?.isCancelled == true)
        #expect(pool.activeTasks.isEmpty)
        #expect(logger.count(.cancelled) == 1)
        #expect(logger.count(.finished) == 1)
    }

    // MARK: Cancellation

    @Test("cancel(id:) ends a running task at once as cancelled and cancels the transport")
    func cancelByID() async throws {
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        let result = immediately { try await pool.send(TestEndpoint(), id: "slow") }
        #expect(transport.starts.count == 1)
        #expect(pool.cancel(id: "slow"))
        #expect(pool.cancel(id: "slow") == false)
        // Within cancel(id:): the task left the table and its transfer was cancelled.
        #expect(pool.activeTasks.isEmpty)
        #expect(transport.cancels.count == 1)
        #expect(isCancelled(await result.result))
    }

    @Test("cancelling the calling Swift task reaches the transport")
    func swiftCancellation() async throws {
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        let caller = immediately { try await pool.send(TestEndpoint(), id: "t") }
        #expect(transport.starts.count == 1)
        caller.cancel()
        // The cancellation handler ran within cancel(): the task ended and its transfer was cancelled.
        #expect(transport.cancels.count == 1)
        #expect(pool.activeTasks.isEmpty)
        #expect(isCancelled(await caller.result))
    }

    @Test(
        "a joined caller that is cancelled withdraws alone; the others still get the answer",
        arguments: 0..<3)
    func joinedWithdraw(withdrawing index: Int) async throws {
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        var callers: [Task<Response, any Error>] = []
        for count in 1...3 {
            callers.append(immediately { try await pool.send(TestEndpoint(), id: "shared") })
            #expect(pool.task(id: "shared")?.waiterCount == count)
        }
        callers[index].cancel()
        #expect(isCancelled(await callers[index].result))
        #expect(pool.task(id: "shared")?.waiterCount == 2)
        #expect(transport.cancels.count == 0)
        transport.answer()
        for (position, caller) in callers.enumerated() where position != index {
            #expect(try await caller.value.statusCode == 200)
        }
        #expect(transport.requests.count == 1)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("a send whose Swift task is already cancelled ends as cancelled")
    func alreadyCancelled() async {
        let pool = TaskPool.stubbed(delay: 5)
        let caller = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await pool.send(TestEndpoint(), id: "x")
        }
        #expect(isCancelled(await caller.result))
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("a send reaches the transport on the caller's executor, before its first wait, awaited or with a handler")
    func startsOnCallersExecutor() async throws {
        let onCallersExecutor = Locked<[Bool]>([])
        let pool = TaskPool.stubbed { _, _ in
            onCallersExecutor.withLock { $0.append(QueueTaskExecutor.isCurrent) }
            return .json("{}")
        }
        let executor = QueueTaskExecutor()
        try await withTaskExecutorPreference(executor) {
            #expect(QueueTaskExecutor.isCurrent)
            #expect(try await pool.send(TestEndpoint(), id: "inline").statusCode == 200)
            let status = try await withCheckedThrowingContinuation { continuation in
                pool.send(TestEndpoint(), id: "handler") { continuation.resume(with: $0.map(\.statusCode)) }
            }
            #expect(status == 200)
        }
        // A send's transfer starts where its caller runs, rather than waking another thread.
        #expect(onCallersExecutor.withLock { $0 } == [true, true])
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("a completion handler is never called on the sending thread, even when the transport answers at once")
    func handlerOffTheSendingThread() async throws {
        let pool = TaskPool.stubbed { _, _ in .json("{}") }
        let threads = Locked<(sender: pthread_t?, handler: pthread_t?)>((nil, nil))
        let done = Locked<CheckedContinuation<Int, Never>?>(nil)
        let handled = DispatchSemaphore(value: 0)
        let status = await withCheckedContinuation { continuation in
            done.withLock { $0 = continuation }
            Thread.detachNewThread {
                threads.withLock { $0.sender = pthread_self() }
                pool.send(TestEndpoint(), id: "at once") { result in
                    threads.withLock { $0.handler = pthread_self() }
                    handled.signal()
                    done.withLock { $0.take() }?.resume(returning: (try? result.get())?.statusCode ?? -1)
                }
                // The sending thread lives until the handler has run (60 s at most): the id of a thread that
                // has ended can be the next new thread's (glibc reuses the memory it is the address of).
                _ = handled.wait(timeout: .now() + 60)
            }
        }
        #expect(status == 200)
        let (sender, handler) = threads.withLock { $0 }
        let onSender = try pthread_equal(#require(sender), #require(handler)) != 0
        #expect(!onSender)
    }

    // MARK: Completion handlers

    @Test("completion variants call back exactly once with the value or the error")
    func completionHandlers() async throws {
        struct Item: Decodable, Sendable, Equatable { let id: Int }
        let pool = TaskPool.stubbed { request, _ in
            request.url!.path.hasSuffix("missing")
                ? .json(#"{"message": "nope"}"#, statusCode: 404) : .json(#"{"id": 3}"#)
        }
        let calls = Counter()
        let item: Item = try await withCheckedThrowingContinuation { continuation in
            pool.send(TestEndpoint(), parser: DecodableParser<Item>()) { result in
                calls.increment()
                continuation.resume(with: result)
            }
        }
        #expect(item == Item(id: 3))
        let failure: NetworkError? = await withCheckedContinuation { continuation in
            pool.send(TestEndpoint(path: "missing")) { result in
                calls.increment()
                if case .failure(let error) = result {
                    continuation.resume(returning: error)
                } else {
                    continuation.resume(returning: nil)
                }
            }
        }
        #expect(failure?.statusCode == 404)
        #expect(failure?.serverError?.message == "nope")
        // An endpoint that cannot be built fails through the completion too.
        let invalid: NetworkError? = await withCheckedContinuation { continuation in
            pool.send(TestEndpoint(baseURL: "nope")) { result in
                calls.increment()
                continuation.resume(returning: result.failureValue)
            }
        }
        guard case .invalidEndpoint = invalid else {
            Issue.record("expected invalidEndpoint")
            return
        }
        #expect(calls.count == 3)
    }

    @Test("a completion caller can cancel by the derived id")
    func completionCancelByDerivedID() async throws {
        let pool = TaskPool.stubbed(delay: 10)
        let endpoint = TestEndpoint(task: .urlParameters(["page": 1]))
        let error: NetworkError? = await withCheckedContinuation { continuation in
            pool.send(endpoint) { continuation.resume(returning: $0.failureValue) }
            #expect(pool.cancel(id: try! pool.taskID(for: endpoint)))
        }
        #expect(error?.isCancelled == true)
    }
}

/// A task executor that runs jobs on a serial queue of its own, so a test can tell whether code ran there.
final class QueueTaskExecutor: TaskExecutor {
    private static let key = DispatchSpecificKey<Bool>()
    private let queue = DispatchQueue(label: "QueueTaskExecutor")

    init() { queue.setSpecific(key: Self.key, value: true) }

    /// Whether the calling code runs on a `QueueTaskExecutor`'s queue.
    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

@Suite("Joining: only the same call on the wire")
struct JoinTests {
    /// A loopback server that answers after `delay` with the request's `Authorization` and `Cookie` as the body.
    static func echoServer(delay: TimeInterval = 0.3) throws -> MockServer {
        try MockServer(port: 0) { request in
            let echoed =
                (request.value(forHTTPHeaderField: "Authorization") ?? "-") + "|"
                + (request.value(forHTTPHeaderField: "Cookie") ?? "-") + "|"
                + (request.value(forHTTPHeaderField: "Accept-Language") ?? "-")
            return MockResponse(StubResponse(body: Data(echoed.utf8)), faults: [.delayHead(delay)])
        }
    }

    @Test(
        "calls that differ only in a header each get their own answer, under join",
        arguments: [
            ("Authorization", "Bearer A", "Bearer B"), ("Cookie", "sid=A", "sid=B"), ("Accept-Language", "de", "fr"),
        ])
    func headersMakeADifferentCall(name: String, first: String, second: String) async throws {
        let server = try Self.echoServer()
        defer { server.stop() }
        let pool = TaskPool()
        async let a = pool.send(TestEndpoint(baseURL: server.baseURL, path: "me", headers: [name: first]))
        async let b = pool.send(TestEndpoint(baseURL: server.baseURL, path: "me", headers: [name: second]))
        let (one, two) = try await (a, b)
        #expect(String(decoding: one.body, as: UTF8.self).contains(first))
        #expect(String(decoding: two.body, as: UTF8.self).contains(second))
        #expect(server.requests.count == 2)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("the same call, credentials and all, still joins: one request, one answer for both")
    func sameCallJoins() async throws {
        let server = try Self.echoServer()
        defer { server.stop() }
        let pool = TaskPool()
        let endpoint = TestEndpoint(baseURL: server.baseURL, path: "me", headers: ["Authorization": "Bearer A"])
        async let a = pool.send(endpoint)
        async let b = pool.send(endpoint)
        let (one, two) = try await (a, b)
        #expect(one.body == two.body)
        #expect(server.requests.count == 1)
    }

    @Test("under an id you give, a different call is a duplicate, never a join")
    func explicitIDDifferentCall() async throws {
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        let a = immediately { try await pool.send(TestEndpoint(headers: ["Authorization": "Bearer A"]), id: "me") }
        do {
            _ = try await pool.send(TestEndpoint(headers: ["Authorization": "Bearer B"]), id: "me")
            Issue.record("a different call joined the running one")
        } catch {
            guard case .duplicateTask(let id) = error else { throw error }
            #expect(id == "me")
        }
        transport.answer()
        #expect(try await a.value.request.value(forHTTPHeaderField: "Authorization") == "Bearer A")
    }

    @Test("two calls with page_token=P2 and P3 run together under derived ids")
    func pageTokensInFlight() async throws {
        let pool = TaskPool.stubbed(delay: 0.2)
        async let two = pool.send(TestEndpoint(task: .urlParameters(["page_token": "P2"])))
        async let three = pool.send(TestEndpoint(task: .urlParameters(["page_token": "P3"])))
        let (p2, p3) = try await (two, three)
        #expect(p2.request.url?.query == "page_token=P2")
        #expect(p3.request.url?.query == "page_token=P3")
    }

    @Test("an endpoint with interceptors of its own never joins: both run, the second under the id with (2)")
    func ownInterceptorsDoNotJoin() async throws {
        struct Signer: RequestInterceptor {
            let token: String
            func adapt(_ request: URLRequest, context: AttemptContext) async throws -> URLRequest {
                var request = request
                request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
                return request
            }
        }
        struct Signed: Endpoint {
            let baseURL: String
            let token: String
            var path: String { "me" }
            var interceptors: [any RequestInterceptor] { [Signer(token: token)] }
        }
        let server = try Self.echoServer()
        defer { server.stop() }
        let pool = TaskPool()
        let id = try pool.taskID(for: Signed(baseURL: server.baseURL, token: "A"))
        let a = immediately { try await pool.send(Signed(baseURL: server.baseURL, token: "A")) }
        let b = immediately { try await pool.send(Signed(baseURL: server.baseURL, token: "B")) }
        #expect(Set(pool.activeTasks.map(\.id)) == [id, id + " (2)"])
        let (one, two) = try await (a.value, b.value)
        #expect(
            Set([one.body, two.body].map { String(decoding: $0, as: UTF8.self).prefix(9) }) == [
                "Bearer A|", "Bearer B|",
            ])
        #expect(server.requests.count == 2)
    }
}
