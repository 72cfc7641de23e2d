// The task-pool suite: what registering, looking up, cancelling and finishing a task costs while N
// tasks are tracked, through the pool and for the same work done without it.
import AllocatedBytes
import Foundation
import NetworkCore
import ScaleTransport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One side of the pool suite: the pool itself, or the same work done without it.
protocol TaskRegistry: AnyObject {
    /// Sends a request that never answers under each id, and keeps track of its task.
    func register(_ ids: ArraySlice<String>)
    /// How many of `ids` are tracked.
    func lookup(_ ids: ArraySlice<String>) -> Int
    /// Cancels the tasks of `ids`.
    func cancel(_ ids: ArraySlice<String>)
    /// Sends a request that is answered at once under each id; returns when every one has ended.
    func finish(_ ids: ArraySlice<String>) async
    /// Cancels everything still tracked.
    func cancelAll()
}

let scaleEndpoint = FileEndpoint(baseURL: "https://stub.example", path: "item")

final class PoolRegistry: TaskRegistry {
    let pool: TaskPool

    /// `timed`: every task has a deadline and a stall check (an hour each, so that neither fires).
    init(timed: Bool = false) {
        pool = TaskPool(
            configuration: .init(
                transport: ScaleTransport(), resourceTimeout: timed ? 3_600 : nil, stallThreshold: timed ? 3_600 : nil,
                // Every task tracked and running: this suite measures tracking, the queue suite queueing.
                maximumConcurrentTasks: .max, maximumTasksPerHost: .max))
    }

    func register(_ ids: ArraySlice<String>) {
        for id in ids { pool.send(scaleEndpoint, id: id) { _ in } }
    }

    func lookup(_ ids: ArraySlice<String>) -> Int {
        var found = 0
        for id in ids where pool.task(id: id) != nil { found += 1 }
        return found
    }

    func cancel(_ ids: ArraySlice<String>) {
        for id in ids { pool.cancel(id: id) }
    }

    func finish(_ ids: ArraySlice<String>) async {
        await Counter.untilAll(ids.count) { finished in
            for id in ids { pool.send(scaleEndpoint, id: id) { _ in finished.increment() } }
        }
    }

    func cancelAll() { pool.cancelAll() }
}

/// Without the pool: the endpoint's request built, a Swift task started that calls the same
/// transport, and its handle kept in a dictionary by id.
final class HandleRegistry: TaskRegistry {
    let transport = ScaleTransport()
    let headers = TaskPool.Configuration.standardHeaders
    var handles: [String: Task<Void, Never>] = [:]

    private func request() -> URLRequest {
        guard let request = try? scaleEndpoint.urlRequest(defaultHeaders: headers) else { fatalError("bad endpoint") }
        return request
    }

    func register(_ ids: ArraySlice<String>) {
        for id in ids {
            let request = request()
            handles[id] = Task { [transport] in
                _ = try? await transport.send(request, context: TransportContext(taskID: id))
            }
        }
    }

    func lookup(_ ids: ArraySlice<String>) -> Int {
        var found = 0
        for id in ids where handles[id] != nil { found += 1 }
        return found
    }

    func cancel(_ ids: ArraySlice<String>) {
        for id in ids { handles.removeValue(forKey: id)?.cancel() }
    }

    func finish(_ ids: ArraySlice<String>) async {
        await Counter.untilAll(ids.count) { finished in
            for id in ids {
                let request = request()
                Task { [transport] in
                    _ = try? await transport.send(request, context: TransportContext(taskID: id))
                    finished.increment()
                }
            }
        }
    }

    func cancelAll() {
        handles.values.forEach { $0.cancel() }
        handles.removeAll()
    }
}

/// Counts completions and calls `onDone` once when `target` is reached.
final class Counter: @unchecked Sendable {
    // @unchecked Sendable: `count` and `onDone` are guarded by `lock`.
    private let lock = NSLock()
    private var count = 0
    private let target: Int
    var onDone: (@Sendable () -> Void)? {
        get { lock.withLock { _onDone } }
        set { lock.withLock { _onDone = newValue } }
    }
    private var _onDone: (@Sendable () -> Void)?

    init(target: Int) { self.target = target }

    /// Calls `start` with a counter of `count` completions and returns once it has counted them all.
    static func untilAll(_ count: Int, _ start: (Counter) -> Void) async {
        let finished = Counter(target: count)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            finished.onDone = { continuation.resume() }
            start(finished)
        }
    }

    func increment() {
        let done = lock.withLock { () -> (@Sendable () -> Void)? in
            count += 1
            return count == target ? _onDone : nil
        }
        done?()
    }
}

/// Bytes allocated and not freed (glibc's `mallinfo2`, see `AllocatedBytes`): exact, unlike resident
/// memory, which reuse of freed pages makes depend on what ran before.
func allocatedBytes() -> Int { Int(nc_allocated_bytes()) }

/// Waits for the tasks just started or cancelled to run as far as they go (park, or end), so that
/// they do not run beside the next measurement.
func letTasksSettle(_ milliseconds: UInt64) async { try? await Task.sleep(nanoseconds: milliseconds * 1_000_000) }

enum PoolOperation: String, CaseIterable {
    case register, lookup, cancel
    case finish = "send→finish"

    var key: String { self == .finish ? "send_to_finish" : rawValue }
}

/// Nanoseconds per operation, by operation, of one side's turn in one round.
func turn(
    of registry: some TaskRegistry, extra: ArraySlice<String>, probes: ArraySlice<String>, quick: ArraySlice<String>
)
    async -> [PoolOperation: Double]
{
    var times: [PoolOperation: Double] = [:]
    var start = now()
    registry.register(extra)
    times[.register] = Double(now() - start) / Double(extra.count)
    await letTasksSettle(20)
    start = now()
    let found = registry.lookup(probes)
    times[.lookup] = Double(now() - start) / Double(probes.count)
    precondition(found == probes.count, "lookup found \(found) of \(probes.count)")
    start = now()
    registry.cancel(extra)
    times[.cancel] = Double(now() - start) / Double(extra.count)
    await letTasksSettle(20)
    start = now()
    await registry.finish(quick)
    times[.finish] = Double(now() - start) / Double(quick.count)
    await letTasksSettle(5)
    return times
}

/// The pool suite. For each size N, the pool and the same work without it each start N tasks that
/// never answer (which gives the bytes a tracked task holds); then, in rounds, each in turn (the
/// order alternating) registers B more, looks up B ids at random among the N, cancels the B it
/// registered, and sends B requests that are answered at once, B being N/10 between 100 and 1,000.
/// A round's own share is the pool's time per operation less the other side's in the same round;
/// its median over the rounds is reported with a 95% interval.
func poolScale(_ options: Options) async -> [Row] {
    print(
        "\n## Task pool: N tasks tracked (stub transports, no network), then in \(options.poolRounds) rounds B more registered, B looked up, the B cancelled, B sent and answered\n"
    )
    print(
        "Each round, the pool and the same work without it (request built, Swift task started, its handle kept in a dictionary) take turns;\nthe pool's own share is its time less the other's in the same round: median over the rounds and 95% interval."
    )
    print("tasks     B      operation     pool ns/op  without ns/op  pool's own share ns/op")
    var rows: [Row] = []
    for count in options.scale {
        let pool = PoolRegistry()
        let plain = HandleRegistry()
        let resident = (0..<count).map { "pending-\($0)" }
        var before = allocatedBytes()
        plain.register(resident[...])
        await letTasksSettle(500)
        let bytesBaseline = Double(allocatedBytes() - before) / Double(count)
        before = allocatedBytes()
        pool.register(resident[...])
        await letTasksSettle(500)
        let bytes = Double(allocatedBytes() - before) / Double(count)
        let timed = PoolRegistry(timed: true)
        before = allocatedBytes()
        timed.register(resident[...])
        await letTasksSettle(500)
        let bytesTimed = Double(allocatedBytes() - before) / Double(count)
        timed.cancelAll()

        let batch = max(100, min(1_000, count / 10))
        var times: [PoolOperation: (pool: [Double], plain: [Double], own: [Double])] = [:]
        for round in 0..<options.poolRounds {
            let extra = (0..<batch).map { "pending-r\(round)-\($0)" }
            let probes = (0..<batch).map { _ in resident.randomElement()! }
            let quick = (0..<batch).map { "quick-r\(round)-\($0)" }
            var poolTimes: [PoolOperation: Double] = [:]
            var plainTimes: [PoolOperation: Double] = [:]
            if round.isMultiple(of: 2) {
                poolTimes = await turn(of: pool, extra: extra[...], probes: probes[...], quick: quick[...])
                plainTimes = await turn(of: plain, extra: extra[...], probes: probes[...], quick: quick[...])
            } else {
                plainTimes = await turn(of: plain, extra: extra[...], probes: probes[...], quick: quick[...])
                poolTimes = await turn(of: pool, extra: extra[...], probes: probes[...], quick: quick[...])
            }
            for operation in PoolOperation.allCases {
                let (through, without) = (poolTimes[operation]!, plainTimes[operation]!)
                times[operation, default: ([], [], [])].pool.append(through)
                times[operation, default: ([], [], [])].plain.append(without)
                times[operation, default: ([], [], [])].own.append(through - without)
            }
        }
        precondition(pool.pool.activeTasks.count == count, "the pool tracks \(pool.pool.activeTasks.count) of \(count)")
        pool.cancelAll()
        plain.cancelAll()
        await letTasksSettle(300)
        precondition(pool.pool.activeTasks.isEmpty)

        var detail: [String: Double] = [
            "tasks": Double(count), "batch": Double(batch), "rounds": Double(options.poolRounds),
            "bytes_per_task": bytes, "bytes_per_task_timed": bytesTimed, "bytes_per_task_baseline": bytesBaseline,
        ]
        for operation in PoolOperation.allCases {
            let (through, without, own) = times[operation]!
            let interval = MedianInterval(own)!
            detail["\(operation.key)_ns"] = median(through)
            detail["\(operation.key)_baseline_ns"] = median(without)
            detail["\(operation.key)_own_ns"] = interval.median
            detail["\(operation.key)_own_low_ns"] = interval.low
            detail["\(operation.key)_own_high_ns"] = interval.high
            print(
                padded(String(count), 10) + padded(String(batch), 7) + padded(operation.rawValue, 14)
                    + padded(fmt(median(through)), 12) + padded(fmt(median(without)), 15)
                    + "\(fmt(interval.median)) (\(fmt(interval.low))–\(fmt(interval.high)))")
        }
        print(
            padded(String(count), 10) + padded("", 7) + padded("bytes/task", 14) + padded(fmt(bytes), 12)
                + fmt(bytesBaseline))
        print(padded(String(count), 10) + padded("", 7) + padded("  with timers", 14) + fmt(bytesTimed))
        rows.append(
            Row(
                suite: "pool-scale", client: "NetworkCore", payload: nil, inflight: count, rps: nil, p50_us: nil,
                p99_us: nil, cpu_us_per_req: nil, rps_ratio_vs_urlsession: nil, cpu_ratio_vs_urlsession: nil,
                detail: detail))
    }
    return rows
}
