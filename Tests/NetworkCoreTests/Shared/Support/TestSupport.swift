import Foundation
import NetworkCore
import Testing

/// An endpoint whose every part a test can set.
struct TestEndpoint: Endpoint {
    var baseURL = "https://api.example.com/v1"
    var path = "items"
    var method: HTTPMethod = .get
    var task: HTTPTask = .plain
    var headers: [String: String] = [:]
    var timeout: TimeInterval?
    var sampleData: Data?
}

extension InMemoryLogger {
    /// How many events of this kind were logged.
    func count(_ kind: TaskEvent.Kind) -> Int { events(kind).count }
}

/// Counts how often something happened, from any thread.
final class Counter: @unchecked Sendable {  // `lock` guards `value`.
    private let lock = NSLock()
    private var value = 0

    @discardableResult
    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

extension TaskPool {
    /// A pool over a stub transport, with a recording logger.
    static func stubbed(
        delay: TimeInterval = 0, policy: DuplicatePolicy = .join, logger: InMemoryLogger = InMemoryLogger(),
        responder: @escaping StubTransport.Responder = { _, _ in .json(#"{"ok": true}"#) }
    ) -> TaskPool {
        TaskPool(
            configuration: .init(
                transport: StubTransport(delay: delay, responder: responder), logger: logger, duplicatePolicy: policy))
    }
}

/// Waits until `condition` holds or `seconds` (times ``slowRunScale``) pass; returns whether it held.
/// A wait, not a bound on the behaviour, so it stretches in a slow run, and its default is generous: it
/// returns as soon as the condition holds, and when a suite starts, its tests all begin at once on 2
/// processors, so that a task a test has just made may wait seconds for a thread (a 2 s default once
/// ran out so). If the calling task is cancelled, it stops waiting and answers with the condition as it
/// is then, rather than polling without pause until the deadline.
func eventually(within seconds: Double = 10, _ condition: () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds * slowRunScale)
    while Date() < deadline {
        if await condition() { return true }
        do { try await Task.sleep(nanoseconds: 5_000_000) } catch { break }
    }
    return await condition()
}

/// How much longer wall-clock bounds may be in this run: 6 under a sanitizer (`NETWORKCORE_SLOW_RUN`
/// is set by `.ci/run` for its ThreadSanitizer pass), else 1. Under ThreadSanitizer, with every test
/// running at once on 2 cores, suites took 4 to 10 times as long as in the normal run, which keeps
/// the tight bounds. Used only where a bound is not what tells the behaviour apart.
let slowRunScale: Double = ProcessInfo.processInfo.environment["NETWORKCORE_SLOW_RUN"] == nil ? 1 : 6

/// What a command of the toolchain (`swift package`, `swift-api-digester`) run by a test needs of the test's
/// environment: its `PATH`, to find the toolchain, and `HOME`, where SwiftPM keeps its caches.
let toolchainEnvironment = [
    "HOME": NSHomeDirectory(), "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
]

/// Whether this is a sanitizer run, where wall-clock bounds that must stay tight to mean anything
/// (shorter than a server's delay) are not checked; the normal run checks them.
let isSlowRun = slowRunScale > 1

/// Whether a result failed with ``NetworkError/cancelled``.
func isCancelled<Value>(_ result: Result<Value, any Error>) -> Bool {
    if case .failure(let error as NetworkError) = result { return error.isCancelled }
    return false
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// Progress values as a task reports them, from any thread.
final class ProgressLog: @unchecked Sendable {  // `lock` guards `values`.
    private let lock = NSLock()
    private var stored: [TransferProgress] = []
    /// How many values came, to wait for.
    let count = Tally()
    func append(_ value: TransferProgress) {
        lock.withLock { stored.append(value) }
        count.increment()
    }
    var values: [TransferProgress] { lock.withLock { stored } }
}

/// The pool, for the server's handler to read the task table from while a request is in flight.
final class PoolBox: @unchecked Sendable {  // `lock` guards `stored`.
    private let lock = NSLock()
    private var stored: TaskPool?
    var pool: TaskPool? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return stored
        }
        set {
            lock.lock()
            stored = newValue
            lock.unlock()
        }
    }
}

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

/// The bytes httpbin's `/range/N` answers: the alphabet, again and again.
func alphabet(_ count: Int) -> Data {
    Data((0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) })
}

/// The spool files of stream uploads now in the temporary directory.
func spoolFiles() -> Set<String> {
    let names =
        (try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? []
    return Set(names.filter { $0.hasPrefix(".networkcore-upload-") })
}

/// Splits a `multipart/form-data` body at `boundary` into its parts' header blocks and contents.
func multipartParts(_ body: Data, boundary: String) -> [(headers: String, content: Data)]? {
    let delimiter = Data("--\(boundary)".utf8)
    var parts: [(String, Data)] = []
    guard body.starts(with: delimiter) else { return nil }
    var rest = body[(body.startIndex + delimiter.count)...]
    while true {
        if rest.starts(with: Data("--\r\n".utf8)) { return rest.count == 4 ? parts : nil }
        guard rest.starts(with: Data("\r\n".utf8)), let blank = rest.range(of: Data("\r\n\r\n".utf8)) else {
            return nil
        }
        let headers = String(decoding: rest[(rest.startIndex + 2)..<blank.lowerBound], as: UTF8.self)
        guard let next = rest.range(of: Data("\r\n".utf8) + delimiter, in: blank.upperBound..<rest.endIndex) else {
            return nil
        }
        parts.append((headers, Data(rest[blank.upperBound..<next.lowerBound])))
        rest = rest[next.upperBound...]
    }
}

/// The error `send` throws, or `nil` when it returns.
func networkFailure(_ send: () async throws(NetworkError) -> Response) async -> NetworkError? {
    do {
        _ = try await send()
        return nil
    } catch {
        return error
    }
}

/// The limit of a ``NetworkError/responseTooLarge(limit:)``, or `nil` for any other outcome.
func responseLimit(of error: NetworkError?) -> Int? {
    guard case .responseTooLarge(let limit)? = error else { return nil }
    return limit
}

/// A one-way gate for ordering tests without sleeps or polls: waiters suspend until it opens; once open,
/// waiting returns at once.
final class Latch: @unchecked Sendable {
    // @unchecked Sendable: `state` and `bounded` are guarded by `lock`.
    private let lock = NSLock()
    private var state: (open: Bool, waiters: [CheckedContinuation<Void, Never>]) = (false, [])

    init() {}

    /// Whether it has opened.
    var isOpen: Bool {
        lock.lock()
        defer { lock.unlock() }
        return state.open
    }

    /// Waiters with a bound, by an id of their own.
    private var bounded: [UUID: CheckedContinuation<Bool, Never>] = [:]

    /// Opens it: every waiter goes on, and later ones do not wait.
    func open() {
        lock.lock()
        let waiters = state.open ? [] : state.waiters
        state = (true, [])
        let boundedWaiters = bounded.values
        bounded = [:]
        lock.unlock()
        for waiter in waiters { waiter.resume() }
        for waiter in boundedWaiters { waiter.resume(returning: true) }
    }

    /// Waits until it opens (true), or `seconds` have passed (false).
    func wait(upTo seconds: TimeInterval) async -> Bool {
        let id = UUID()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            lock.lock()
            if state.open {
                lock.unlock()
                return continuation.resume(returning: true)
            }
            bounded[id] = continuation
            lock.unlock()
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                lock.lock()
                let waiting = bounded.removeValue(forKey: id)
                lock.unlock()
                waiting?.resume(returning: false)
            }
        }
    }

    /// Waits until it opens.
    func wait() async {
        await withCheckedContinuation { continuation in
            lock.lock()
            if state.open {
                lock.unlock()
                continuation.resume()
            } else {
                state.waiters.append(continuation)
                lock.unlock()
            }
        }
    }
}

/// A count a test can wait for without polling: `await tally.reaches(3)`.
final class Tally: @unchecked Sendable {
    // @unchecked Sendable: `state` is guarded by `lock`.
    private let lock = NSLock()
    private var state: (value: Int, waiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)]) = (0, [])

    init() {}

    /// The count now.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return state.value
    }

    /// Counts one more; those waiting for the new count go on.
    func increment() {
        lock.lock()
        state.value += 1
        let value = state.value
        let ready = state.waiters.filter { $0.target <= value }
        state.waiters.removeAll { $0.target <= value }
        lock.unlock()
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Waits until the count is at least `target`.
    func reaches(_ target: Int) async {
        await withCheckedContinuation { continuation in
            lock.lock()
            if state.value >= target {
                lock.unlock()
                continuation.resume()
            } else {
                state.waiters.append((target, continuation))
                lock.unlock()
            }
        }
    }
}

/// Runs `operation` in a Swift task that starts on this thread and runs here until its first suspension
/// (`Task.immediate`, where the platform has it). A send inside it has, when this returns, registered its
/// task, joined or attached its caller and, with no interceptors, handed its request to the transport: a
/// test can look at the pool without waiting for anything.
func immediately<T: Sendable>(
    _ operation: sending @escaping @isolated(any) () async throws -> T
) -> Task<T, any Error> {
    #if compiler(>=6.2)
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            return Task.immediate(operation: operation)
        }
    #endif
    return Task(operation: operation)
}

/// `date` as an HTTP date in its preferred form: "Sun, 06 Nov 1994 08:49:37 GMT".
func httpDate(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
}

/// The suites that need the machine to themselves: load and faults (thousands of requests, the process's live
/// object counts), fuzzing, child processes killed or timed, and the toolchain's own tools. Run beside the
/// others they starve them (a 2-core machine's `swift test` failed the loopback suite's timings and the load
/// suite's counts), so `Scripts/test` runs each in a pass of its own and sets `NETWORKCORE_OWN_PASSES=1`;
/// plain `swift test` skips them and says so.
enum OwnPass {
    /// The environment variable that lets these suites run.
    static let environmentKey = "NETWORKCORE_OWN_PASSES"
    /// Whether they run: `Scripts/test`, or a caller who runs one alone (`NETWORKCORE_OWN_PASSES=1 swift test
    /// --filter ReliabilityTests`).
    static let enabled = ProcessInfo.processInfo.environment[environmentKey] == "1"
    /// Why one is skipped.
    static let reason: Comment =
        "needs the machine to itself: Scripts/test runs it in a pass of its own (NETWORKCORE_OWN_PASSES=1 with --filter)"
}

/// Streams `endpoint`'s body of `size` bytes through `pool` (task id "big"), reads one chunk, then reads nothing:
/// what the task has received must settle (the transport stopped reading, and the server waits), below a quarter
/// of the body: unchanged over five looks 100 ms apart, within 10 s (on a loaded machine the windows take a while
/// to fill, and a server sends in bursts). Reading on must then get every byte.
func expectBackPressure(_ pool: TaskPool, reading endpoint: some Endpoint, size: Int) async throws {
    let stream = try await pool.stream(endpoint, id: "big")
    var iterator = stream.makeAsyncIterator()
    var read = try #require(try await iterator.next()).count
    var held = -1
    var unchanged = 0
    for _ in 0..<100 where unchanged < 5 {
        try await Task.sleep(nanoseconds: 100_000_000)
        // The task still runs: its transfer has not read the whole body.
        let now = try #require(pool.task(id: "big")).bytesReceived
        unchanged = now == held ? unchanged + 1 : 0
        held = now
    }
    #expect(unchanged == 5, "what was received never settled: \(held) of \(size)")
    #expect(held < size / 4, "received \(held) of \(size) while nobody read")
    while let chunk = try await iterator.next() { read += chunk.count }
    #expect(read == size)
}
