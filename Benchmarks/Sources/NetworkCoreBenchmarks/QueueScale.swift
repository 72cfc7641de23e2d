// The queue suite: 100,000 tasks waiting in a pool's queue across 100 hosts, what each costs to enqueue,
// the bytes it holds while waiting, and what leaving the queue adds to a task that is answered at once.
import Foundation
import NetworkCore
import ScaleTransport

/// For each round: a paused pool (64 at once, 6 per host) is sent `count` tasks over 100 hosts, all of
/// which wait (enqueue cost and bytes per waiting task); then it resumes and every task runs and is
/// answered by the stub at once; the same sends to a pool without limits are the baseline. The queue's
/// own share per task is the difference, by round.
func queueScale(_ options: Options) async -> [Row] {
    let count = 100_000
    let hosts = 100
    print("\n## Queue: \(count) tasks waiting across \(hosts) hosts (stub transport, 64 at once, 6 per host)\n")
    print("round  enqueue ns/task  bytes/waiting task  drain ns/task  unlimited ns/task  queue's own share ns/task")
    let endpoints = (0..<hosts).map { FileEndpoint(baseURL: "https://h\($0).stub.example", path: "item") }
    var enqueue: [Double] = []
    var bytes: [Double] = []
    var own: [Double] = []
    var drains: [Double] = []
    var plains: [Double] = []
    for round in 0..<max(1, min(5, options.poolRounds / 3)) {
        let pool = TaskPool(
            configuration: .init(transport: ScaleTransport(), maximumConcurrentTasks: 64, maximumTasksPerHost: 6))
        pool.pause()
        let finished = Counter(target: count)
        let done = AsyncStream<Void> { continuation in finished.onDone = { continuation.finish() } }
        let before = allocatedBytes()
        var start = now()
        for index in 0..<count {
            pool.send(endpoints[index % hosts], id: "quick-\(round)-\(index)") { _ in finished.increment() }
        }
        enqueue.append(Double(now() - start) / Double(count))
        bytes.append(Double(allocatedBytes() - before) / Double(count))
        precondition(pool.queuedCount == count, "\(pool.queuedCount) of \(count) queued")
        start = now()
        pool.resume()
        for await _ in done {}
        let drain = Double(now() - start) / Double(count)

        let unlimited = TaskPool(
            configuration: .init(transport: ScaleTransport(), maximumConcurrentTasks: .max, maximumTasksPerHost: .max))
        start = now()
        await Counter.untilAll(count) { finished in
            for index in 0..<count {
                unlimited.send(endpoints[index % hosts], id: "quick-\(round)-\(index)") { _ in finished.increment() }
            }
        }
        let plain = Double(now() - start) / Double(count)
        drains.append(drain)
        plains.append(plain)
        own.append(drain - plain)
        print(
            padded(String(round + 1), 7) + padded(fmt(enqueue.last!), 17) + padded(fmt(bytes.last!), 20)
                + padded(fmt(drain), 15) + padded(fmt(plain), 19) + fmt(drain - plain))
        await letTasksSettle(200)
    }
    print(
        "median enqueue \(fmt(median(enqueue))) ns, \(fmt(median(bytes))) bytes a waiting task, queue's own share \(fmt(median(own))) ns a task"
    )
    return [
        Row(
            suite: "queue", client: "NetworkCore", payload: nil, inflight: count, rps: nil, p50_us: nil, p99_us: nil,
            cpu_us_per_req: nil, rps_ratio_vs_urlsession: nil, cpu_ratio_vs_urlsession: nil,
            detail: [
                "tasks": Double(count), "hosts": Double(hosts), "enqueue_ns": median(enqueue),
                "bytes_per_queued_task": median(bytes), "drain_ns": median(drains), "unlimited_ns": median(plains),
                "queue_own_ns": median(own),
            ])
    ]
}
