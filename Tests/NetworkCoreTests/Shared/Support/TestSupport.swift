import Foundation
import NetworkCore

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
/// A wait, not a bound on the behaviour, so it stretches in a slow run. If the calling task is
/// cancelled, it stops waiting and answers with the condition as it is then, rather than polling
/// without pause until the deadline.
func eventually(within seconds: Double = 2, _ condition: () async -> Bool) async -> Bool {
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
    func append(_ value: TransferProgress) { lock.withLock { stored.append(value) } }
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
