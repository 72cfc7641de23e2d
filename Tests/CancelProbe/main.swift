// Cancels sends at every point of their life over real loopback HTTP, in a process of its own, so that a
// crash in the platform's networking library is a failed test (`EarlyCancelTests`), not a dead suite.
//
// Usage: cancel-probe WAY COUNT. WAY is how each send is cancelled: `task` (the Swift task awaiting it),
// `id` (`cancel(id:)` after a completion-handler send), `replace` (a send under the same id with
// `DuplicatePolicy.replace`), `deadline` (a resource timeout), `all` (`cancelAll()`), `retry` (`cancel(id:)`
// while an interceptor retries), `retry-after` (`cancel(id:)` while `RetryPolicy(maximumRetryAfter: .infinity)`
// waits for a `Retry-After` in the year 9999, which once trapped converting the wait). Each send is
// cancelled after one of a cycle of waits, from none (before the transfer is resumed) to after the answer.
// Prints one line of counts and exits 0 when every send ended exactly once and no task is left; 1 otherwise.
// `upload` and `upload-chunked` cancel file uploads of 4 MiB (with `Content-Length`, or chunked) while the
// body is being sent: FoundationNetworking's own file upload trapped then ("libcurl.Easy Code=43").
// Seven more ways test other things in a process of their own: `dequeue`, `cache-crash`, `ipv6`,
// `unsafe-continuation`, `stream-pause`, `connectivity` and `durable-kill` (below).
import Foundation
import NetworkCore
import NetworkCoreTesting

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Get: Endpoint {
    let baseURL: String
    let path: String
    var resourceTimeout: TimeInterval?
    var interceptors: [any RequestInterceptor] = []
    /// A file to send with POST, for the `upload` ways.
    var file: URL?

    var method: HTTPMethod { file == nil ? .get : .post }
    var task: HTTPTask { file.map { .file($0, contentType: "application/octet-stream") } ?? .plain }
}

/// Retries every failure but a cancel, at once: the send goes on attempt after attempt until cancelled.
struct RetryAlways: RequestInterceptor {
    func retry(_ request: URLRequest, failing failure: NetworkError, context: AttemptContext) async -> RetryDecision {
        failure.isCancelled ? .doNotRetry : .retry(after: 0)
    }
}

/// A flag one task sets and another reads.
final class Flag: @unchecked Sendable {  // `lock` guards `value`.
    private let lock = NSLock()
    private var value = false

    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// Counts outcomes and sends whose outcome came more than once, from any thread.
final class Tally: @unchecked Sendable {  // `lock` guards every field.
    private let lock = NSLock()
    private var ends: [Int: Int] = [:]
    private(set) var succeeded = 0
    private(set) var cancelled = 0
    private(set) var failed = 0
    private(set) var other: [String] = []

    func record(_ index: Int, _ result: Result<Response, NetworkError>) {
        lock.withLock {
            ends[index, default: 0] += 1
            switch result {
            case .success: succeeded += 1
            case .failure(.cancelled): cancelled += 1
            case .failure(.deadlineExceeded): failed += 1
            case .failure(let error):
                failed += 1
                if other.count < 5 { other.append(String(describing: error)) }
            }
        }
    }

    func ended(_ count: Int) -> (once: Int, twice: Int) {
        lock.withLock {
            ((0..<count).filter { ends[$0] == 1 }.count, ends.values.filter { $0 > 1 }.count)
        }
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let count = Int(arguments[2]), count > 0 else {
    FileHandle.standardError.write(
        Data(
            "usage: cancel-probe task|id|replace|deadline|all|retry|retry-after|upload|upload-chunked|dequeue|cache-crash|ipv6|unsafe-continuation|stream-pause|connectivity|durable-kill COUNT\n"
                .utf8)
    )
    exit(2)
}
let way = arguments[1]
if way == "cache-crash" {
    // Not a cancel: four threads write entries of COUNT KiB to a DiskCacheStore in $NETWORKCORE_CACHE_DIR
    // while the process kills itself with SIGKILL once 20 are on disk, in the middle of the next writes
    // (`CacheCrashTests` then opens the directory). Key n is n in 64 hex digits; entry n's URL names n.
    guard let path = ProcessInfo.processInfo.environment["NETWORKCORE_CACHE_DIR"] else { exit(2) }
    let store = try DiskCacheStore(directory: URL(fileURLWithPath: path), byteLimit: 1 << 30)
    let body = Data(repeating: 0x61, count: count * 1024)
    for lane in 0..<4 {
        Thread.detachNewThread {
            for index in 0..<100_000 {
                let number = lane * 100_000 + index
                let entry = CachedResponse(
                    url: "entry \(number)", statusCode: 200, headers: ["Cache-Control": "max-age=60"], body: body,
                    requestDate: Date(), responseDate: Date())
                store.store(entry, forKey: String(repeating: "0", count: 56) + String(format: "%08x", number))
            }
        }
    }
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        if names.filter({ $0.hasSuffix(".entry") }).count >= 20 { break }
        usleep(5_000)
    }
    usleep(UInt32.random(in: 0..<3_000))
    kill(getpid(), SIGKILL)
}
if way == "durable-kill" {
    // Not a cancel: COUNT durable writes (ids `$NETWORKCORE_DURABLE_ROUND-N`) to $NETWORKCORE_DURABLE_URL, where
    // nothing listens, from four threads, into a DurableStore in $NETWORKCORE_DURABLE_DIR; the process kills
    // itself with SIGKILL at a random moment, mid-write often (`DurableWriteTests`). Each write whose send has
    // returned (it is stored) is written to standard output, unbuffered, as "stored ID"; its path names its id;
    // each attempt's end, as "attempted ID KEY".
    // With $NETWORKCORE_DURABLE_KILL set to `after-stored`, the random moment comes once all COUNT are stored,
    // while the pool sends its kept writes again and again.
    let environment = ProcessInfo.processInfo.environment
    guard let path = environment["NETWORKCORE_DURABLE_DIR"], let url = environment["NETWORKCORE_DURABLE_URL"],
        let round = environment["NETWORKCORE_DURABLE_ROUND"]
    else { exit(2) }
    struct Write: Endpoint {
        let baseURL: String
        let id: String
        let index: Int
        var path: String { "likes/\(id)" }
        var method: HTTPMethod { .post }
        var task: HTTPTask {
            .data(Data(repeating: UInt8(index % 256), count: 32 << 10), contentType: "application/octet-stream")
        }
    }
    /// How many writes are stored; `keys` guards it.
    final class Count: @unchecked Sendable { var value = 0 }
    let keys = NSLock()
    let stored = Count()
    // Each attempt that ended without an answer, with its key, as "attempted ID KEY".
    let pool = TaskPool(
        configuration: .init(
            durableStore: try DurableStore(directory: URL(fileURLWithPath: path)),
            durableOutcomes: { outcome in
                keys.withLock {
                    FileHandle.standardOutput.write(Data("attempted \(outcome.id) \(outcome.idempotencyKey)\n".utf8))
                }
            }))
    for lane in 0..<4 {
        Thread.detachNewThread {
            for index in stride(from: lane, to: count, by: 4) {
                let id = "\(round)-\(index)"
                pool.send(Write(baseURL: url, id: id, index: index).durable(), id: id) { _ in }
                keys.lock()
                FileHandle.standardOutput.write(Data("stored \(id)\n".utf8))
                stored.value += 1
                keys.unlock()
            }
        }
    }
    let killAfter = UInt32(ProcessInfo.processInfo.environment["NETWORKCORE_DURABLE_KILL_MS"].flatMap(Int.init) ?? 600)
    if environment["NETWORKCORE_DURABLE_KILL"] == "after-stored" {
        let give = Date().addingTimeInterval(30)
        while keys.withLock({ stored.value }) < count, Date() < give { usleep(1_000) }
        let killAt = Date().addingTimeInterval(Double.random(in: 0..<Double(killAfter) / 1_000))
        while Date() < killAt {
            pool.sendKeptWrites()
            usleep(500)
        }
    } else {
        usleep(UInt32.random(in: 0..<killAfter) * 1_000)
    }
    kill(getpid(), SIGKILL)
}
if way == "connectivity" {
    // Not a cancel: run inside a network namespace whose one link, $NETWORKCORE_CONNECTIVITY_LINK, is up with an
    // address (`ConnectivityTests`). A `SystemConnectivity` must say online; the link taken down, offline, and
    // a pool following it holds COUNT sends (phase "waiting for network"); the link up again, online, and the
    // sends run. Prints what the monitor said, in order, and the sends' count; exits 0 when all is as said.
    // Spawned and waited for directly: Foundation's `Process.waitUntilExit()` never returned here once the
    // command had ended (the top-level code holds the main thread, whose run loop it waits on).
    func ip(_ arguments: String...) {
        let argv = (["ip"] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        guard posix_spawnp(&pid, "ip", nil, nil, argv, environ) == 0 else { return }
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
    }
    /// Waits up to 10 s for the monitor to say `expected`.
    func reaches(_ expected: Connectivity, _ monitor: SystemConnectivity) -> Bool {
        for _ in 0..<1_000 where monitor.connectivity != expected { usleep(10_000) }
        return monitor.connectivity == expected
    }
    final class Guarded<Value>: @unchecked Sendable {  // `lock` guards `value`.
        private let lock = NSLock()
        private var value: Value
        init(_ value: Value) { self.value = value }
        func withLock<T>(_ body: (inout Value) -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body(&value)
        }
    }
    guard let link = ProcessInfo.processInfo.environment["NETWORKCORE_CONNECTIVITY_LINK"] else { exit(2) }
    let monitor = SystemConnectivity()
    let said = Guarded<[Connectivity]>([monitor.connectivity])
    let observation = monitor.observe { change in said.withLock { $0.append(change) } }
    let sent = Guarded(0)
    let pool = TaskPool(
        configuration: .init(
            transport: StubTransport { _, _ in
                sent.withLock { $0 += 1 }
                return .json("{}")
            }, connectivity: monitor))
    var failures: [String] = []
    if monitor.connectivity != .online { failures.append("not online at first") }
    ip("link", "set", "dev", link, "down")
    if !reaches(.offline, monitor) { failures.append("not offline with the link down") }
    let ended = Guarded(0)
    for index in 0..<count {
        pool.send(Get(baseURL: "http://10.0.0.1", path: "c\(index)"), id: "c\(index)") { result in
            if case .success = result { ended.withLock { $0 += 1 } }
        }
    }
    let waiting = pool.activeTasks.filter { $0.phase == .waitingForNetwork }.count
    if waiting != count || sent.withLock({ $0 }) != 0 { failures.append("\(waiting) waiting for network") }
    ip("link", "set", "dev", link, "up")
    if !reaches(.online, monitor) { failures.append("not online with the link up") }
    for _ in 0..<1_000 where ended.withLock({ $0 }) < count { usleep(10_000) }
    observation.cancel()
    monitor.stop()
    let changes = said.withLock { $0 }.map(\.description).joined(separator: " ")
    print("connectivity=\(changes) waiting=\(waiting) sent=\(sent.withLock { $0 }) ended=\(ended.withLock { $0 })")
    if ended.withLock({ $0 }) != count { failures.append("\(ended.withLock { $0 }) of \(count) ended") }
    if !failures.isEmpty { FileHandle.standardError.write(Data((failures.joined(separator: "; ") + "\n").utf8)) }
    exit(failures.isEmpty ? 0 : 1)
}
if way == "unsafe-continuation" {
    // Not the pool: `withUnsafeContinuation` alone, its continuation handed to another thread under a lock and
    // resumed there at once, often before the closure has returned, COUNT times. Correct Swift, which
    // ThreadSanitizer reports as a race inside `withUnsafeContinuation` (the one report Tests/tsan-suppressions.txt
    // suppresses, `ThreadSanitizerSuppressionTests`). Prints `unsafe-continuation=done rounds=COUNT`.
    final class Slot: @unchecked Sendable {  // `lock` guards `continuation`.
        private let lock = NSLock()
        private var continuation: UnsafeContinuation<Int, Never>?
        func put(_ continuation: UnsafeContinuation<Int, Never>) {
            lock.lock()
            self.continuation = continuation
            lock.unlock()
        }
        func take() -> UnsafeContinuation<Int, Never>? {
            lock.lock()
            defer {
                continuation = nil
                lock.unlock()
            }
            return continuation
        }
    }
    let resumer = DispatchQueue(label: "resumer")
    var sum = 0
    for round in 0..<count {
        let slot = Slot()
        sum &+= await withUnsafeContinuation { (continuation: UnsafeContinuation<Int, Never>) in
            slot.put(continuation)
            resumer.async { slot.take()?.resume(returning: round) }
        }
    }
    print("unsafe-continuation=done rounds=\(count) sum=\(sum)")
    exit(0)
}
if way == "stream-pause" {
    // Not a cancel: COUNT streams of 256 chunks of 64 KiB from a transport that pauses and resumes at once when
    // told, its chunks sent from a thread of its own while the consumer reads them as they come. The stream
    // pauses the transfer past 1 MiB unread and resumes it below 256 KiB, deciding on either thread; a pause
    // told to the transport after the resume decided next would leave the transfer paused while its consumer
    // waits, for ever (here: 3 s without a chunk is a stall, and the stream fails). Prints the counts and
    // exits 0 when every stream arrived whole.
    final class PausingTransfer: TransportControl, @unchecked Sendable {  // `lock` guards `paused`, `cancelled`.
        private let lock = NSLock()
        private var paused = false
        private var cancelled = false
        func cancel() { lock.withLock { cancelled = true } }
        func pauseReceiving() { lock.withLock { paused = true } }
        func resumeReceiving() { lock.withLock { paused = false } }
        var state: (paused: Bool, cancelled: Bool) { lock.withLock { (paused, cancelled) } }
    }
    final class Stalls: @unchecked Sendable {  // `lock` guards `count`.
        private let lock = NSLock()
        private(set) var count = 0
        func add() { lock.withLock { count += 1 } }
    }
    struct PausingTransport: Transport {
        let stalls: Stalls
        func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
            let transfer = PausingTransfer()
            Thread.detachNewThread {
                let chunk = Data(repeating: 7, count: 64 << 10)
                events.receive(
                    head: HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: nil, headerFields: nil)!)
                for _ in 0..<256 {
                    var waited = 0
                    while true {
                        let (paused, cancelled) = transfer.state
                        if cancelled { return }
                        if !paused { break }
                        waited += 1
                        if waited > 30_000 {  // 3 s of 100 µs waits
                            stalls.add()
                            events.fail(URLError(.timedOut))
                            return
                        }
                        usleep(100)
                    }
                    guard events.receive(body: chunk) else { return }
                }
                events.finish()
            }
            return transfer
        }
    }
    let stalls = Stalls()
    let pool = TaskPool(configuration: .init(transport: PausingTransport(stalls: stalls), maximumTasksPerHost: 16))
    // 16 streams at once, so that the producers' and consumers' threads outnumber the cores and are preempted
    // between a decision and its call, as on a loaded machine.
    let lanes = await withTaskGroup(of: (whole: Int, failure: String?).self) { group in
        for lane in 0..<16 {
            group.addTask {
                var whole = 0
                var failure: String?
                for round in stride(from: lane, to: count, by: 16) {
                    do {
                        var bytes = 0
                        let path = "s\(round)"
                        for try await chunk in try await pool.stream(Get(baseURL: "http://stream.invalid", path: path))
                        {
                            bytes += chunk.count
                        }
                        if bytes == 256 * (64 << 10) { whole += 1 } else { failure = failure ?? "\(round): \(bytes) B" }
                    } catch {
                        failure = failure ?? "\(round): \(error)"
                    }
                }
                return (whole, failure)
            }
        }
        var all: [(whole: Int, failure: String?)] = []
        for await lane in group { all.append(lane) }
        return all
    }
    let whole = lanes.map(\.whole).reduce(0, +)
    let failures = lanes.compactMap(\.failure)
    print(
        "way=stream-pause streams=\(count) whole=\(whole) stalls=\(stalls.count)"
            + (failures.isEmpty ? "" : " failures=\(failures.prefix(3))"))
    exit(whole == count ? 0 : 1)
}
if way == "ipv6" {
    // Not a cancel: one send to an IPv6 literal, in a process that, like an app, does not link the opt-in
    // FoundationNetworkingFixes. Prints `ipv6=ok` or `ipv6=error:CODE` (the URLError code) and exits 0.
    let server = try MockServer(port: 0, ipv6: true) { _ in MockResponse(.json(#"{"ok": true}"#)) }
    let outcome: String
    do {
        let response = try await TaskPool().send(Get(baseURL: server.baseURL, path: "x"))
        outcome = "ok:\(response.statusCode)"
    } catch {
        outcome = "error:\(error.urlError.map { String($0.code.rawValue) } ?? String(describing: error))"
    }
    print("ipv6=\(outcome) requests=\(server.requests.count)")
    server.stop()
    exit(0)
}
if way == "dequeue" {
    // Not a cancel of the send itself: COUNT rounds in which a queued send starts on FoundationNetworking's
    // own queue. A pool that runs one task at a time sends A; a second caller joins A; B waits in the queue.
    // The first caller of A is cancelled before A's answer, so that the answer, with no caller waiting to
    // finish it, ends A on the session's queue, and B leaves the queue there. Making B's URLSessionTask on
    // that queue would trap (libdispatch: "dispatch_sync called on queue already owned by current
    // thread"). Prints the counts and exits 0 when every B and every joined A succeeded (the test also asks
    // that most rounds took that path).
    let server = try MockServer(port: 0, recordsRequests: false) { request in
        request.url?.path == "/a" ? MockResponse(.json("{}"), faults: [.delayHead(0.1)]) : MockResponse(.json("{}"))
    }
    let pool = TaskPool(configuration: .init(duplicatePolicy: .join, maximumConcurrentTasks: 1))
    var joined = 0
    var queued = 0
    // Rounds whose first caller left before A's answer: those took the path.
    var firstLeftEarly = 0
    var failures: [String] = []
    for round in 0..<count {
        let first = Task { await pool.sendResult(Get(baseURL: server.baseURL, path: "a"), id: "a\(round)") }
        // Bounded: until A runs.
        for _ in 0..<1_000 where pool.task(id: "a\(round)") == nil { try? await Task.sleep(nanoseconds: 1_000_000) }
        let joining = Flag()
        let second = Task {
            joining.set()
            return await pool.sendResult(Get(baseURL: server.baseURL, path: "a"), id: "a\(round)")
        }
        let third = Task { await pool.sendResult(Get(baseURL: server.baseURL, path: "b"), id: "b\(round)") }
        for _ in 0..<1_000 where pool.queuedCount == 0 || !joining.isSet {
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
        // The second caller joins A as soon as its send begins, before it first waits; give it that moment,
        // so that cancelling the first caller never leaves A without a caller (then A is cancelled for all).
        try? await Task.sleep(nanoseconds: 10_000_000)
        first.cancel()
        switch await second.value {
        case .success: joined += 1
        case .failure(let error): failures.append("joined A \(round): \(error)")
        }
        switch await third.value {
        case .success: queued += 1
        case .failure(let error): failures.append("queued B \(round): \(error)")
        }
        if case .failure(.cancelled) = await first.value { firstLeftEarly += 1 }
    }
    print(
        "way=dequeue rounds=\(count) joinedSucceeded=\(joined) queuedSucceeded=\(queued) firstLeftEarly=\(firstLeftEarly)"
            + (failures.isEmpty ? "" : " failures=\(failures.prefix(3))"))
    server.stop()
    exit(joined == count && queued == count ? 0 : 1)
}
let body = StubResponse(body: Data(repeating: 0x61, count: 4_096))
let server = try MockServer(port: 0, recordsRequests: false) { request in
    switch request.url?.path {
    case "/fail": return MockResponse(StubResponse(statusCode: 503))
    case "/later":
        return MockResponse(StubResponse(statusCode: 503, headers: ["Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"]))
    case "/whole": return MockResponse(body)
    default: return MockResponse(body, faults: [.trickle(pieces: 4, interval: 0.001)])
    }
}
let pool = TaskPool(
    configuration: .init(
        transport: URLSessionTransport(fileUploads: way == "upload-chunked" ? .chunked : .withLength),
        duplicatePolicy: way == "replace" ? .replace : .join,
        interceptors: way == "retry-after" ? [RetryPolicy(maximumRetryAfter: .infinity)] : []))
/// The file the `upload` ways send, removed before the probe exits.
let uploadFile = FileManager.default.temporaryDirectory.appendingPathComponent("cancel-probe-\(getpid()).bin")
if way.hasPrefix("upload") {
    try Data(repeating: 0x62, count: 4 << 20).write(to: uploadFile)
}
/// Microseconds to wait before cancelling: none (before the transfer is resumed), a yield, while
/// connecting, while the body trickles in, after the answer.
let waits: [UInt32] = [0, 0, 1, 0, 20, 0, 100, 0, 300, 0, 1_000, 0, 2_500, 0, 6_000, 0, 20_000]
let tally = Tally()
/// Sends in flight at once: two, so that most cancels meet a transfer just resumed.
let parallel = 2
let started = Date()

func endpoint(_ index: Int) -> Get {
    switch way {
    case "deadline":
        Get(baseURL: server.baseURL, path: "i\(index)", resourceTimeout: Double(waits[index % waits.count]) / 1e6)
    case "retry": Get(baseURL: server.baseURL, path: "fail", interceptors: [RetryAlways()])
    case "retry-after": Get(baseURL: server.baseURL, path: "later")
    case "upload", "upload-chunked": Get(baseURL: server.baseURL, path: "whole", file: uploadFile)
    default: Get(baseURL: server.baseURL, path: index % 2 == 0 ? "whole?i=\(index)" : "trickled?i=\(index)")
    }
}

/// One send of `index`, cancelled the probe's way; returns once its outcome has come.
func probe(_ index: Int) async {
    let wait = waits[index % waits.count]
    let id = "probe-\(index)"
    if way == "task" {
        let task = Task { await pool.sendResult(endpoint(index), id: id) }
        if wait > 0 { try? await Task.sleep(nanoseconds: UInt64(wait) * 1_000) }
        task.cancel()
        return tally.record(index, await task.value)
    }
    if way == "deadline" { return tally.record(index, await pool.sendResult(endpoint(index), id: id)) }
    let (ended, end) = AsyncStream<Void>.makeStream()
    pool.send(endpoint(index), id: id) { result in
        tally.record(index, result)
        end.finish()
    }
    if way == "retry-after" {
        // Until the task waits to retry (bounded): the cancel must end that wait.
        for _ in 0..<5_000 where pool.task(id: id).map({ $0.phase == .sending || $0.phase == .preparing }) ?? false {
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
    } else if wait > 0 {
        try? await Task.sleep(nanoseconds: UInt64(wait) * 1_000)
    }
    switch way {
    case "replace": pool.send(Get(baseURL: server.baseURL, path: "replacement"), id: id) { _ in }
    case "all": pool.cancelAll()
    default: pool.cancel(id: id)
    }
    for await _ in ended {}
}

extension TaskPool {
    func sendResult(_ endpoint: Get, id: String) async -> Result<Response, NetworkError> {
        do { return .success(try await send(endpoint, id: id)) } catch { return .failure(error) }
    }
}

await withTaskGroup(of: Void.self) { group in
    for lane in 0..<parallel {
        group.addTask {
            for index in stride(from: lane, to: count, by: parallel) { await probe(index) }
        }
    }
}
// Replacements and a `cancelAll` from another lane may still be running: wait, bounded, for the pool to empty.
let drainDeadline = Date().addingTimeInterval(10)
while !pool.activeTasks.isEmpty, Date() < drainDeadline { usleep(1_000) }
let (once, twice) = tally.ended(count)
let left = pool.activeTasks.count
print(
    "way=\(way) sends=\(count) endedOnce=\(once) endedTwice=\(twice) succeeded=\(tally.succeeded)"
        + " cancelled=\(tally.cancelled) failed=\(tally.failed) left=\(left)"
        + " seconds=\(String(format: "%.1f", Date().timeIntervalSince(started)))"
        + (tally.other.isEmpty ? "" : " other=\(tally.other)"))
server.stop()
try? FileManager.default.removeItem(at: uploadFile)
exit(once == count && twice == 0 && left == 0 ? 0 : 1)
