import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A test element for the scheduler.
final class Job: CustomStringConvertible, Hashable {
    let name: String
    init(_ name: String) { self.name = name }
    var description: String { name }
    static func == (lhs: Job, rhs: Job) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

@Suite("Scheduling: the scheduler value (limits, priorities, the queue)")
struct SchedulerTests {
    @Test("within the limits every task starts; past them, tasks wait and start as slots free")
    func limits() {
        var scheduler = Scheduler<Job>(maximumTotal: 3, maximumPerHost: 2)
        let jobs = (0..<6).map { Job("\($0)") }
        let result1 = scheduler.admit(jobs[0], host: "a", priority: .normal)
        #expect(result1)
        let result2 = scheduler.admit(jobs[1], host: "a", priority: .normal)
        #expect(result2)
        let result3 = scheduler.admit(jobs[2], host: "a", priority: .normal)  // host full
        #expect(!result3)
        let result4 = scheduler.admit(jobs[3], host: "b", priority: .normal)
        #expect(result4)
        let result5 = scheduler.admit(jobs[4], host: "b", priority: .normal)  // pool full
        #expect(!result5)
        #expect(scheduler.running == 3 && scheduler.queuedCount == 2)
        // A slot of host a frees: its own waiting task takes it (the pool has room for one).
        let result6 = scheduler.release(host: "a")
        #expect(result6.map(\.name) == ["2"])
        // A slot of host b frees: b's waiting task.
        let result7 = scheduler.release(host: "b")
        #expect(result7.map(\.name) == ["4"])
        #expect(scheduler.queuedCount == 0 && scheduler.running == 3)
        #expect(scheduler.running(host: "a") == 2 && scheduler.running(host: "b") == 1)
    }

    @Test("waiting tasks start by priority, then in the order they came, across hosts")
    func priorities() {
        var scheduler = Scheduler<Job>(maximumTotal: 1, maximumPerHost: 1)
        let first = Job("first")
        let result8 = scheduler.admit(first, host: "a", priority: .normal)
        #expect(result8)
        let queued: [(String, String, RequestPriority)] = [
            ("low1", "a", .low), ("normal1", "b", .normal), ("background", "c", .background), ("high1", "b", .high),
            ("normal2", "a", .normal), ("high2", "c", .high), ("low2", "b", .low),
        ]
        for (name, host, priority) in queued {
            let result = scheduler.admit(Job(name), host: host, priority: priority); #expect(!result)
        }
        #expect(
            scheduler.queueOrder.map(\.name) == ["high1", "high2", "normal1", "normal2", "low1", "low2", "background"])
        var order: [String] = []
        var host = "a"
        for _ in 0..<queued.count {
            let next = scheduler.release(host: host)
            #expect(next.count == 1)
            order.append(next[0].name)
            host = queued.first { $0.0 == next[0].name }!.1
        }
        #expect(order == ["high1", "high2", "normal1", "normal2", "low1", "low2", "background"])
        let last = scheduler.release(host: host)
        #expect(last.isEmpty && scheduler.running == 0)
    }

    /// One step of a scheduler's table: a task sent, a slot freed, or a transport's report of a host's capacity.
    enum Step {
        case admit(String, host: String)
        case release(host: String)
        case capacity(Int, host: String)
    }

    @Test(
        "a transport's report of a host's capacity is that host's limit: more start when it grows, fewer when it shrinks; ignored when the app set the limit",
        arguments: [
            // Following the transport: per host 2 by default, the pool 6 in all.
            (
                true,
                [
                    (Step.admit("a1", host: "a"), ["a1"]), (.admit("a2", host: "a"), ["a2"]),
                    (.admit("a3", host: "a"), []), (.admit("a4", host: "a"), []), (.admit("b1", host: "b"), ["b1"]),
                    // The server of a allows 4 streams: both waiting tasks of a start; b keeps its limit of 2.
                    (.capacity(4, host: "a"), ["a3", "a4"]), (.admit("a5", host: "a"), []),
                    (.admit("b2", host: "b"), ["b2"]), (.admit("b3", host: "b"), []),
                    // Down to 1: nothing stops, but a's freed slots are not refilled until it runs under 1.
                    (.capacity(1, host: "a"), []), (.release(host: "a"), []), (.release(host: "a"), []),
                    (.release(host: "a"), []), (.release(host: "a"), ["a5"]),
                    // 0 counts as 1; b is untouched by a's reports.
                    (.capacity(0, host: "a"), []), (.release(host: "b"), ["b3"]),
                ]
            ),
            // The app set the per-host limit: reports change nothing.
            (
                false,
                [
                    (Step.admit("a1", host: "a"), ["a1"]), (.admit("a2", host: "a"), ["a2"]),
                    (.admit("a3", host: "a"), []), (.capacity(4, host: "a"), []), (.release(host: "a"), ["a3"]),
                ]
            ),
        ] as [(Bool, [(Step, [String])])])
    func transportCapacity(followsTransport: Bool, steps: [(Step, [String])]) {
        var scheduler = Scheduler<Job>(maximumTotal: 6, maximumPerHost: 2, followsTransport: followsTransport)
        for (index, (step, expected)) in steps.enumerated() {
            let started: [Job]
            switch step {
            case .admit(let name, let host):
                let job = Job(name)
                started = scheduler.admit(job, host: host, priority: .normal) ? [job] : []
            case .release(let host):
                started = scheduler.release(host: host)
            case .capacity(let count, let host):
                started = scheduler.setCapacity(count, host: host)
            }
            #expect(started.map(\.name) == expected, "step \(index): \(step)")
        }
        #expect(scheduler.queuedCount == 0)
    }

    /// One step of a table of pausing and the network: a task sent (a socket takes no slot), a slot freed, the
    /// app's pause and resume, the network gone and back.
    enum HoldStep {
        case admit(String)
        case socket(String)
        case release
        case pause
        case resume
        case offline
        case online
    }

    @Test(
        "offline holds the queue as a pause does, each hold released on its own: tasks start only when the pool is neither paused nor offline, sockets first",
        arguments: [
            // Offline: nothing starts, not even a freed slot's next task; back online, the waiting ones start.
            [
                (HoldStep.admit("a"), ["a"]), (.offline, []), (.admit("b"), []), (.socket("s"), []),
                (.admit("c"), []), (.release, []), (.online, ["s", "b", "c"]), (.admit("d"), []),
                (.release, ["d"]),
            ],
            // Paused and offline: the network back starts nothing while paused; the resume does.
            [
                (HoldStep.pause, []), (.admit("a"), []), (.offline, []), (.admit("b"), []), (.online, []),
                (.offline, []), (.resume, []), (.socket("s"), []), (.online, ["s", "a", "b"]),
            ],
            // Resumed while offline: nothing until the network; gone twice, back once.
            [
                (HoldStep.offline, []), (.offline, []), (.pause, []), (.admit("a"), []), (.resume, []),
                (.online, ["a"]), (.online, []), (.admit("b"), ["b"]), (.socket("s"), ["s"]),
            ],
        ] as [[(HoldStep, [String])]])
    func offlineAndPause(_ steps: [(HoldStep, [String])]) {
        // Two slots, one host.
        var scheduler = Scheduler<Job>(maximumTotal: 2, maximumPerHost: 2)
        for (index, (step, expected)) in steps.enumerated() {
            var started: [Job] = []
            switch step {
            case .admit(let name):
                let job = Job(name)
                if scheduler.admit(job, host: "h", priority: .normal) { started = [job] }
            case .socket(let name):
                let job = Job(name)
                if scheduler.admitWithoutSlot(job) { started = [job] }
            case .release: started = scheduler.release(host: "h")
            case .pause: scheduler.pause()
            case .resume: started = scheduler.resume()
            case .offline: started = scheduler.setOffline(true)
            case .online: started = scheduler.setOffline(false)
            }
            #expect(started.map(\.name) == expected, "step \(index): \(step)")
        }
        #expect(scheduler.queuedCount == 0)
        #expect(!scheduler.isHolding)
    }

    @Test("a task whose host is full waits while a later one of another host starts")
    func hostsDoNotBlockEachOther() {
        var scheduler = Scheduler<Job>(maximumTotal: 10, maximumPerHost: 1)
        let result10 = scheduler.admit(Job("a1"), host: "a", priority: .normal)
        #expect(result10)
        let result11 = scheduler.admit(Job("a2"), host: "a", priority: .high)
        #expect(!result11)
        let result12 = scheduler.admit(Job("b1"), host: "b", priority: .low)
        #expect(result12)
        #expect(scheduler.queueOrder.map(\.name) == ["a2"])
    }

    @Test("removing and reprioritising a waiting task; pause and resume lose and double nothing")
    func removeReprioritizePause() {
        var scheduler = Scheduler<Job>(maximumTotal: 1, maximumPerHost: 1)
        let result13 = scheduler.admit(Job("running"), host: "h", priority: .normal)
        #expect(result13)
        let jobs = (0..<4).map { Job("q\($0)") }
        for job in jobs { let result = scheduler.admit(job, host: "h", priority: .normal); #expect(!result) }
        let result15 = scheduler.remove(jobs[1], host: "h")
        #expect(result15)
        let result16 = scheduler.remove(jobs[1], host: "h")
        #expect(!result16)
        let result17 = scheduler.reprioritize(jobs[3], host: "h", to: .high)
        #expect(result17)
        let result18 = scheduler.reprioritize(Job("never queued"), host: "h", to: .high)
        #expect(!result18)
        #expect(scheduler.queueOrder.map(\.name) == ["q3", "q0", "q2"])
        scheduler.pause()
        let result19 = scheduler.release(host: "h")  // paused: nothing starts
        #expect(result19.isEmpty)
        let result20 = scheduler.admit(Job("new"), host: "other", priority: .high)  // nor a new task
        #expect(!result20)
        let result21 = scheduler.resume()  // one slot
        #expect(result21.map(\.name) == ["q3"])
        var started = ["q3"]
        while scheduler.running > 0 {
            let next = scheduler.release(host: started.last == "new" ? "other" : "h")
            started += next.map(\.name)
        }
        #expect(started == ["q3", "new", "q0", "q2"])
        #expect(scheduler.queuedCount == 0 && scheduler.queueOrder.isEmpty)
    }

    @Test(
        "a task without a slot (a socket) starts at once, but waits while paused: in the queue's order after the rest, removable, started first on resume"
    )
    func withoutSlot() {
        var scheduler = Scheduler<Job>(maximumTotal: 1, maximumPerHost: 1)
        let running = scheduler.admit(Job("running"), host: "h", priority: .normal)
        let socket = scheduler.admitWithoutSlot(Job("socket"))  // the pool is full, but it takes no slot
        #expect(running && socket && scheduler.running == 1)
        scheduler.pause()
        let queued = scheduler.admit(Job("queued"), host: "h", priority: .normal)
        let (heldJob, droppedJob) = (Job("held"), Job("dropped"))
        let held = scheduler.admitWithoutSlot(heldJob)
        let dropped = scheduler.admitWithoutSlot(droppedJob)
        #expect(!queued && !held && !dropped)
        #expect(scheduler.queuedCount == 3)
        #expect(scheduler.queueOrder.map(\.name) == ["queued", "held", "dropped"])
        let reprioritized = scheduler.reprioritize(heldJob, host: "h", to: .high)
        #expect(reprioritized)
        #expect(scheduler.queueOrder.map(\.name) == ["queued", "held", "dropped"])
        let removed = scheduler.remove(droppedJob, host: "h")
        let removedAgain = scheduler.remove(droppedJob, host: "h")
        #expect(removed && !removedAgain)
        let released = scheduler.release(host: "h")  // paused: nothing starts
        #expect(released.isEmpty)
        let resumed = scheduler.resume()
        #expect(resumed.map(\.name) == ["held", "queued"])
        #expect(scheduler.running == 1)  // the queued task's slot; the socket took none
        let again = scheduler.resume()
        #expect(scheduler.queuedCount == 0 && again.isEmpty)
    }

    @Test("1,000 tasks over 100 hosts: every one starts exactly once, never over the limits")
    func many() {
        var scheduler = Scheduler<Job>(maximumTotal: 64, maximumPerHost: 5)
        var running: [Job] = []
        var runningHosts: [String: Int] = [:]
        var startedNames = Set<String>()
        var duplicates = 0
        var hostOf: [ObjectIdentifier: String] = [:]
        func started(_ job: Job) {
            running.append(job)
            runningHosts[hostOf[ObjectIdentifier(job)]!, default: 0] += 1
            if !startedNames.insert(job.name).inserted { duplicates += 1 }
        }
        var jobs: [Job] = []
        for index in 0..<1_000 {
            let job = Job("\(index)")
            jobs.append(job)
            let host = "h\(index % 100)"
            hostOf[ObjectIdentifier(job)] = host
            if scheduler.admit(job, host: host, priority: RequestPriority(rawValue: index % 4)!) { started(job) }
        }
        #expect(running.count == 64)
        var maximum = (total: 0, host: 0)
        while let job = running.popLast() {
            let host = hostOf[ObjectIdentifier(job)]!
            runningHosts[host]! -= 1
            for next in scheduler.release(host: host) { started(next) }
            maximum.total = max(maximum.total, running.count)
            maximum.host = max(maximum.host, runningHosts.values.max() ?? 0)
        }
        #expect(startedNames.count == 1_000 && duplicates == 0)
        #expect(maximum.total <= 64 && maximum.host <= 5)
        #expect(scheduler.running == 0 && scheduler.queuedCount == 0)
    }
}

/// A loopback server that holds each request for a while, counting how many it holds at once.
final class ConcurrencyServer: @unchecked Sendable {
    // @unchecked Sendable: every var is guarded by `lock`.
    let server: MockServer
    private let lock = NSLock()
    private var now = 0
    private var peak = 0
    private var order: [String] = []
    private let hold: TimeInterval
    private let gate = DispatchSemaphore(value: 0)
    private var gated = false

    init(hold: TimeInterval, gated: Bool = false) throws {
        self.hold = hold
        self.gated = gated
        let box = Box()
        server = try MockServer(port: 0) { request in MockResponse(box.server!.serve(request.urlRequest)) }
        box.server = self
    }

    private final class Box: @unchecked Sendable { weak var server: ConcurrencyServer? }

    private func serve(_ request: URLRequest) -> StubResponse {
        let gated = lock.withLock { () -> Bool in
            now += 1
            peak = max(peak, now)
            order.append(request.url?.lastPathComponent ?? "")
            return self.gated
        }
        if gated { _ = gate.wait(timeout: .now() + 10) } else { Thread.sleep(forTimeInterval: hold) }
        lock.withLock { now -= 1 }
        return .json("{}")
    }

    /// Lets one held request go (with `gated`); from then on requests are held for `hold` only.
    func open() {
        lock.withLock { gated = false }
        gate.signal()
    }

    var peakConcurrency: Int { lock.withLock { peak } }
    var requestOrder: [String] { lock.withLock { order } }
    var baseURL: String { server.baseURL }
    func stop() { server.stop() }
}

@Suite("Scheduling: limits, priorities, pause and resume in the pool, counted at real servers", .serialized)
struct SchedulingTests {
    @Test("the per-host limit in effect: the configuration's, else what the transport carries, else 6")
    func perHostLimitInEffect() {
        let session = URLSessionConfiguration.ephemeral
        session.httpMaximumConnectionsPerHost = 64
        let fromTransport = TaskPool(configuration: .init(transport: URLSessionTransport(configuration: session)))
        #expect(fromTransport.maximumTasksPerHost == 64)
        let configured = TaskPool(
            configuration: .init(transport: URLSessionTransport(configuration: session), maximumTasksPerHost: 4))
        #expect(configured.maximumTasksPerHost == 4)
        let unknown = TaskPool(configuration: .init(transport: StubTransport { _, _ in .json("{}") }))
        #expect(unknown.maximumTasksPerHost == 6)
    }

    @Test("the pool never runs more than its limits: per host and in all, counted at two servers")
    func limitsAtTheServer() async throws {
        // Each request is held long enough for the next ones to arrive while it is: under a sanitizer, with the
        // whole suite on 2 cores, 20 ms once let the two servers see at most 3 at once between them.
        let hold = 0.02 * slowRunScale
        let (a, b) = (try ConcurrencyServer(hold: hold), try ConcurrencyServer(hold: hold))
        defer { a.stop(); b.stop() }
        let logger = InMemoryLogger()
        let pool = TaskPool(configuration: .init(logger: logger, maximumConcurrentTasks: 5, maximumTasksPerHost: 3))
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<60 {
                let server = index % 2 == 0 ? a : b
                group.addTask {
                    (try? await pool.send(TestEndpoint(baseURL: server.baseURL, path: "r\(index)"))) != nil
                }
            }
            var succeeded = 0
            for await ok in group where ok { succeeded += 1 }
            #expect(succeeded == 60)
        }
        #expect(a.peakConcurrency <= 3 && b.peakConcurrency <= 3)
        #expect(a.peakConcurrency + b.peakConcurrency >= 4)  // the limits were reached, not just kept
        #expect(a.requestOrder.count == 30 && b.requestOrder.count == 30)
        #expect(logger.count(.queued) > 0 && logger.count(.started) == 60 && logger.count(.finished) == 60)
        #expect(pool.activeTasks.isEmpty && pool.queuedCount == 0)
    }

    @Test("waiting tasks start by priority: high, normal, low, background; the table shows each one's place")
    func priorityOrder() async throws {
        let server = try ConcurrencyServer(hold: 0.01, gated: true)
        defer { server.stop() }
        let pool = TaskPool(configuration: .init(maximumConcurrentTasks: 1))
        let done = Tally()
        // Admitted at once: the one slot is taken when `send` returns.
        pool.send(TestEndpoint(baseURL: server.baseURL, path: "first"), id: "first") { _ in done.increment() }
        let queued: [(String, RequestPriority)] = [
            ("low", .low), ("normal", .normal), ("background", .background), ("high", .high), ("normal2", .normal),
        ]
        for (name, priority) in queued {
            pool.send(TestEndpoint(baseURL: server.baseURL, path: name).prioritized(priority), id: name) { _ in
                done.increment()
            }
        }
        #expect(pool.queuedCount == 5)
        let rows = pool.activeTaskSnapshots
        #expect(rows.first { $0.id == "first" }?.queuePosition == nil)
        #expect(rows.first { $0.id == "high" }?.queuePosition == 1)
        #expect(rows.first { $0.id == "background" }?.queuePosition == 5)
        #expect(rows.first { $0.id == "low" }?.phase == "queued")
        #expect(pool.debugDescription.contains("queued #2"))
        #expect(pool.task(id: "low")?.phase == .queued && pool.task(id: "low")?.priority == .low)
        // Moved up while it waits: background goes before the normal ones.
        #expect(pool.reprioritize(id: "background", to: .high))
        #expect(!pool.reprioritize(id: "nobody", to: .high))
        server.open()
        await done.reaches(6)
        #expect(server.requestOrder == ["first", "high", "background", "normal", "normal2", "low"])
    }

    @Test("pause holds every new task, cancel by id reaches a waiting one, resume sends the rest exactly once")
    func pauseAndResume() async throws {
        let server = try ConcurrencyServer(hold: 0.005)
        defer { server.stop() }
        let logger = InMemoryLogger()
        let pool = TaskPool(configuration: .init(logger: logger))
        pool.pause()
        #expect(pool.isPaused)
        let outcomes = Locked<[String: [Bool]]>([:])
        let ended = Tally()
        for index in 0..<20 {
            pool.send(TestEndpoint(baseURL: server.baseURL, path: "p\(index)"), id: "p\(index)") { result in
                outcomes.withLock { $0["p\(index)", default: []].append((try? result.get()) != nil) }
                ended.increment()
            }
        }
        // Every send is registered and waits: none was handed to the transport.
        #expect(server.requestOrder.isEmpty && pool.queuedCount == 20 && pool.activeTasks.count == 20)
        #expect(pool.cancel(id: "p7"))
        #expect(pool.queuedCount == 19)
        pool.resume()
        #expect(!pool.isPaused)
        await ended.reaches(20)
        let results = outcomes.withLock { $0 }
        #expect(results.values.allSatisfy { $0.count == 1 })
        #expect(results["p7"] == [false])
        #expect(results.filter { $0.value == [true] }.count == 19)
        #expect(server.requestOrder.count == 19 && !server.requestOrder.contains("p7"))
        #expect(server.peakConcurrency <= 6)
        #expect(pool.activeTasks.isEmpty && pool.queuedCount == 0)
        #expect(logger.count(.started) == 19 && logger.count(.queued) == 20 && logger.count(.cancelled) == 1)
    }

    @Test(
        "offline, the pool sends nothing: 100 sends wait as waiting for network, a deadline ends one there; back online, each other send reaches the server once"
    )
    func waitsForNetwork() async throws {
        let server = try ConcurrencyServer(hold: 0.001)
        defer { server.stop() }
        let logger = InMemoryLogger()
        let network = ManualConnectivity(.offline)
        let inspector = PoolInspector()
        let pool = TaskPool(configuration: .init(logger: logger, inspector: inspector, connectivity: network))
        #expect(pool.isWaitingForNetwork)
        let outcomes = Locked<[String: [Bool]]>([:])
        let ended = Tally()
        for index in 0..<100 {
            pool.send(TestEndpoint(baseURL: server.baseURL, path: "w\(index)"), id: "w\(index)") { result in
                outcomes.withLock { $0["w\(index)", default: []].append((try? result.get()) != nil) }
                ended.increment()
            }
        }
        struct Brief: Endpoint {
            let baseURL: String
            var path: String { "brief" }
            var resourceTimeout: TimeInterval? { 0.2 }
        }
        do {
            _ = try await pool.send(Brief(baseURL: server.baseURL), id: "brief")
            Issue.record("answered while offline")
        } catch {
            guard case .deadlineExceeded(let seconds) = error else { Issue.record("\(error)"); return }
            #expect(seconds == 0.2)
        }
        // Nothing reached the transport; the table and the events say why the sends wait.
        #expect(server.requestOrder.isEmpty && pool.queuedCount == 100 && pool.activeTasks.count == 100)
        #expect(pool.task(id: "w5")?.phase == .waitingForNetwork)
        #expect(pool.activeTaskSnapshots.first { $0.id == "w5" }?.phase == "waiting for network")
        #expect(pool.debugDescription.contains("waiting for network"))
        let inspection = inspector.inspection
        #expect(inspection.isWaitingForNetwork && !inspection.isPaused)
        let inspected = inspection.active.first { $0.id == "w5" }
        #expect(inspected?.state == .queued && inspected?.phase == "waiting for network")
        #expect(logger.count(.waitingForNetwork) == 101 && logger.count(.queued) == 0 && logger.count(.started) == 0)
        // A change that is no change (still offline, or constrained after online) starts nothing twice.
        network.set(.offline)
        #expect(server.requestOrder.isEmpty)
        network.set(.constrained)
        #expect(!pool.isWaitingForNetwork)
        network.set(.online)
        #expect(!inspector.inspection.isWaitingForNetwork)
        await ended.reaches(100)
        let results = outcomes.withLock { $0 }
        #expect(results.count == 100 && results.values.allSatisfy { $0 == [true] })
        #expect(server.requestOrder.count == 100 && Set(server.requestOrder).count == 100)
        #expect(!server.requestOrder.contains("brief"))
        #expect(pool.activeTasks.isEmpty && pool.queuedCount == 0)
        // The pool follows the monitor, not its own guess: gone again, a new send waits.
        network.set(.offline)
        pool.send(TestEndpoint(baseURL: server.baseURL, path: "later"), id: "later") { _ in ended.increment() }
        #expect(pool.task(id: "later")?.phase == .waitingForNetwork)
        #expect(pool.cancel(id: "later"))
        await ended.reaches(101)
        #expect(server.requestOrder.count == 100)
    }

    @Test("offline, a fresh stored answer is given at once from the cache; what the cache cannot answer waits")
    func cacheWhileOffline() async throws {
        let sent = Locked(0)
        let network = ManualConnectivity()
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { _, _ in
                    sent.withLock { $0 += 1 }
                    return .json("{}", headers: ["Cache-Control": "max-age=600"])
                }, cache: MemoryCacheStore(), connectivity: network))
        _ = try await pool.send(TestEndpoint(path: "stored"))
        network.set(.offline)
        let answer = try await pool.send(TestEndpoint(path: "stored"))
        #expect(answer.source == .cache && sent.withLock { $0 } == 1)
        pool.send(TestEndpoint(path: "new"), id: "new") { _ in }
        #expect(pool.task(id: "new")?.phase == .waitingForNetwork && sent.withLock { $0 } == 1)
        #expect(pool.cancel(id: "new"))
    }

    @Test(
        "a monitor's changes: each once, in order, to every observer until it is cancelled; the sequence starts with the value now"
    )
    func manualConnectivity() async throws {
        let network = ManualConnectivity()
        let seen = Locked<[Connectivity]>([])
        let observation = network.observe { change in seen.withLock { $0.append(change) } }
        for change in [Connectivity.offline, .offline, .online, .constrained, .constrained, .offline] {
            network.set(change)
        }
        #expect(seen.withLock { $0 } == [.offline, .online, .constrained, .offline])
        observation.cancel()
        network.set(.online)
        #expect(seen.withLock { $0 }.count == 4)
        var changes = network.changes.makeAsyncIterator()
        #expect(await changes.next() == .online)
        network.set(.offline)
        #expect(await changes.next() == .offline)
        #expect(Connectivity.allCases.filter(\.isReachable) == [.online, .constrained])
    }

    @Test("a paused pool let go of cancels its waiting tasks: every caller hears, none hangs")
    func pausedPoolReleased() async throws {
        let outcomes = Locked<[Bool]>([])
        do {
            let pool = TaskPool()
            pool.pause()
            for index in 0..<3 {
                pool.send(TestEndpoint(path: "p\(index)"), id: "p\(index)") { result in
                    outcomes.withLock { $0.append(result.isCancelledFailure) }
                }
            }
            #expect(pool.queuedCount == 3)
        }
        // Told as the pool went away, before this line.
        #expect(outcomes.withLock { $0 } == [true, true, true])
    }

    @Test("a deadline counts the time in the queue: a task that waits too long ends there, never sent")
    func deadlineCountsQueueTime() async throws {
        // The first request is held until the test lets it go (10 s at most).
        let server = try ConcurrencyServer(hold: 0, gated: true)
        defer { server.stop() }
        defer { server.open() }
        let pool = TaskPool(configuration: .init(maximumConcurrentTasks: 1))
        pool.send(TestEndpoint(baseURL: server.baseURL, path: "slow")) { _ in }
        struct Quick: Endpoint {
            let baseURL: String
            var path: String { "quick" }
            var resourceTimeout: TimeInterval? { 0.3 }
        }
        do {
            _ = try await pool.send(Quick(baseURL: server.baseURL))
            Issue.record("answered")
        } catch {
            guard case .deadlineExceeded(let seconds) = error else { Issue.record("\(error)"); return }
            #expect(seconds == 0.3)
        }
        // Ended by its deadline while the first request still ran, not when its slot came free.
        #expect(pool.activeTasks.map { $0.request.url?.lastPathComponent } == ["slow"])
        #expect(server.requestOrder.count == 1)
        #expect(!server.requestOrder.contains("quick"))
        #expect(pool.queuedCount == 0)
    }

    @Test("callers joining a running task take no slot; a cancel of the running one starts the next")
    func joinsAndCancels() async throws {
        let server = try ConcurrencyServer(hold: 0.2)
        defer { server.stop() }
        let pool = TaskPool(configuration: .init(maximumConcurrentTasks: 1))
        async let one = pool.send(TestEndpoint(baseURL: server.baseURL, path: "same"))
        async let two = pool.send(TestEndpoint(baseURL: server.baseURL, path: "same"))
        let (a, b) = try await (one, two)
        #expect(a === b && server.requestOrder == ["same"])

        pool.send(TestEndpoint(baseURL: server.baseURL, path: "held"), id: "held") { _ in }
        let next = immediately { try await pool.send(TestEndpoint(baseURL: server.baseURL, path: "next"), id: "next") }
        #expect(pool.queuedCount == 1)
        #expect(pool.cancel(id: "held"))
        _ = try await next.value
        // "held" may reach the server after "next" or not at all: its cancel can beat its connection.
        #expect(server.requestOrder.filter { $0 == "next" }.count == 1)
        #expect(pool.queuedCount == 0 && pool.activeTasks.isEmpty)
    }
}

@Suite("Scheduling: what counts as one host (the origin, as redirects scope credentials)")
struct HostKeyTests {
    @Test(
        "scheme, host and port, lowercased, the default port written; no user info, path, query or fragment",
        arguments: [
            ("https://api.example.com/3/movie?page=1", "https://api.example.com:443"),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"), ("http://[::1]:9000/x", "http://[::1]:9000"),
            ("http://[::1]/x", "http://[::1]:80"),
            ("https://user:secret@host.example:444/p#f", "https://host.example:444"),
            ("http://host.example?q=a@b", "http://host.example:80"),
            ("http://host.example#x@y", "http://host.example:80"),
            ("HTTPS://API.Example.COM/", "https://api.example.com:443"),
            ("http://host.example:80/", "http://host.example:80"),
            ("wss://h.example", "wss://h.example:443"), ("WS://h.example:65535/", "ws://h.example:65535"),
            ("http://h.example:0/", "http://h.example:0"), ("ftp://files.example/x", "ftp://files.example:-1"),
        ])
    func hostKeys(url: String, key: String) {
        #expect(URLParts.origin(of: URL(string: url)) == key)
    }

    @Test("a URL without scheme or host has no origin")
    func noOrigin() {
        #expect(URLParts.origin(of: URL(string: "/relative/path")) == nil)
        #expect(URLParts.origin(of: URL(string: "mailto:someone@example.com")) == nil)
        #expect(URLParts.origin(of: nil) == nil)
    }
}

extension Result where Failure == NetworkError {
    /// Whether this is a failure with `cancelled`.
    var isCancelledFailure: Bool {
        if case .failure(.cancelled) = self { return true }
        return false
    }
}
