import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the fault server does to request `index`: decided by the index alone, so the test knows.
enum Fault: String, CaseIterable, Sendable {
    case ok, unavailable, cutOff, slow, malformed

    static func of(_ index: Int) -> Fault {
        switch (index &* 2_654_435_761) % 100 {
        case 0..<10: .unavailable  // 10% 503
        case 10..<15: .cutOff  // 5% connection closed mid-body
        case 15..<20: .slow  // 5% slower than the request timeout
        case 20..<24: .malformed  // 4% malformed JSON
        default: .ok
        }
    }

    /// Whether request `index` is also cancelled by id at a random moment: 3%, spread over every fault (a hash of
    /// the index's own, since the fault depends on the index modulo 100 alone).
    static func isCancelled(_ index: Int) -> Bool { (((index &* 2_654_435_761) & 0xFFFF_FFFF) >> 16) % 100 < 3 }

    static let requestTimeout: TimeInterval = 2

    func reply(for index: Int) -> MockResponse {
        let body = #"{"index": \#(index), "payload": "\#(String(repeating: "x", count: 400))"}"#
        return switch self {
        case .ok: MockResponse(.json(body))
        case .unavailable: MockResponse(.json(#"{"message": "try later"}"#, statusCode: 503))
        case .cutOff: MockResponse(.json(body + String(repeating: " ", count: 4_000)), faults: [.cutMidBody])
        case .slow: MockResponse(.json(body), faults: [.delayHead(Self.requestTimeout + 1)])
        case .malformed: MockResponse(.json(#"{"index": \#(index), "payload": tru"#))
        }
    }
}

struct Indexed: Decodable, Sendable { let index: Int }

/// How a send ended, in the fault's terms.
func classify(_ result: Result<Indexed, NetworkError>, index: Int) -> String {
    switch result {
    case .success(let value): return value.index == index ? "ok" : "wrong body \(value.index)"
    case .failure(let error):
        switch error {
        case .cancelled: return "cancelled"
        case .httpStatus(let response) where response.statusCode == 503: return "unavailable"
        case .timedOut: return "slow"
        case .transport: return "cutOff"
        case .decodingFailed: return "malformed"
        default: return "unexpected \(error)"
        }
    }
}

/// Sends indexed requests at a fault server through a pool, and checks how each ended.
enum FaultLoad {
    /// A server that answers request `…/N` as `Fault.of(N)` says, keeping connections alive as real servers
    /// do, except those the fault cuts off.
    static func server() throws -> MockServer {
        try MockServer(
            recordsRequests: false, keepsAlive: true,
            handler: { request in
                let index = Int(request.url!.lastPathComponent) ?? -1
                return Fault.of(index).reply(for: index)
            })
    }

    /// Calls `launch` for each index in order, which adds that index's work to the group, and keeps at
    /// most `inFlight` launches' worth of child tasks running: the next index is launched each time a child ends.
    static func launchBounded(
        _ indices: Range<Int>, inFlight: Int, _ launch: (inout TaskGroup<Void>, Int) -> Void
    ) async {
        await withTaskGroup(of: Void.self) { group in
            var next = indices.lowerBound
            while next < indices.upperBound, next - indices.lowerBound < inFlight {
                launch(&group, next)
                next += 1
            }
            while await group.next() != nil {
                if next < indices.upperBound {
                    launch(&group, next)
                    next += 1
                }
            }
        }
    }

    /// Sends requests `indices` through `pool`, at most `inFlight` at a time, cancelling the chosen ones by id
    /// unless `cancels` is false (a cancelling child ends early and lets the next send in: with cancels, more
    /// than `inFlight` sends can be in flight at once). `landed`, if given, collects the indices whose cancel
    /// reached a running task (`cancel(id:)` returned true).
    static func run(
        _ indices: Range<Int>, pool: TaskPool, baseURL: String, inFlight: Int, cancels: Bool = true,
        landed: Locked<Set<Int>>? = nil
    ) async
        -> [Int: [String]]
    {
        let outcomes = Locked<[Int: [String]]>([:])
        await launchBounded(indices, inFlight: inFlight) { group, index in
            group.addTask {
                let endpoint = TestEndpoint(baseURL: baseURL, path: "r/\(index)", timeout: Fault.requestTimeout)
                let result: Result<Indexed, NetworkError>
                do {
                    result = .success(
                        try await pool.send(endpoint, parser: DecodableParser<Indexed>(), id: "r\(index)"))
                } catch {
                    result = .failure(error as? NetworkError ?? .transport(error))
                }
                outcomes.withLock { $0[index, default: []].append(classify(result, index: index)) }
            }
            if cancels, Fault.isCancelled(index) {
                group.addTask {
                    // At a random moment in the first 20 ms after the task is registered (or has ended): without
                    // waiting for it, nearly every cancel came after its task had ended (1 in 1,200 landed). The
                    // wait ends as soon as either happens; its bound is only against a hang.
                    _ = await eventually(within: 30) {
                        pool.task(id: "r\(index)") != nil || outcomes.withLock { $0[index] != nil }
                    }
                    try? await Task.sleep(nanoseconds: UInt64.random(in: 0...20_000_000))
                    if pool.cancel(id: "r\(index)") { landed?.withLock { _ = $0.insert(index) } }
                }
            }
        }
        return outcomes.withLock { $0 }
    }

    /// Outcomes that do not match their request's fault, and a count of each outcome.
    static func check(_ outcomes: [Int: [String]]) -> (mismatches: [String], tally: [String: Int]) {
        var mismatches: [String] = []
        var tally: [String: Int] = [:]
        for (index, results) in outcomes {
            let outcome = results[0]
            tally[outcome, default: 0] += 1
            let expected = Fault.of(index).rawValue
            if outcome != expected, !(outcome == "cancelled" && Fault.isCancelled(index)) {
                mismatches.append("#\(index): expected \(expected), got \(outcome)")
            }
        }
        return (mismatches, tally)
    }
}

@Suite("Transport reliability: faulty load, server restart", .serialized, .enabled(if: OwnPass.enabled, OwnPass.reason))
struct TransportReliabilityTests {
    @Test(
        "5,000 requests with 128 in flight against a faulty server: each ends once, as its fault says",
        arguments: TransportUnderTest.faultLoad)
    func loadWithFaults(_ transport: TransportUnderTest) async throws {
        let server = try FaultLoad.server()
        defer { server.stop() }
        // As many at once as the load keeps in flight: the pool's queue is not what this measures.
        let pool = transport.pool(
            .init(
                duplicatePolicy: .reject, resourceTimeout: 30, maximumConcurrentTasks: 256, maximumTasksPerHost: 256))
        let total = 5_000
        let landed = Locked<Set<Int>>([])
        let outcomes = await FaultLoad.run(
            0..<total, pool: pool, baseURL: server.baseURL, inFlight: 128, landed: landed)
        #expect(outcomes.count == total)
        #expect(outcomes.values.allSatisfy { $0.count == 1 }, "a send ended more than once")
        let (mismatches, tally) = FaultLoad.check(outcomes)
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, e.g. \(mismatches.prefix(5))")
        let notCancelled = landed.withLock { $0 }.filter { outcomes[$0] != ["cancelled"] }
        #expect(notCancelled.isEmpty, "cancel landed, yet \(notCancelled.prefix(5).map { outcomes[$0] })")
        for fault in Fault.allCases { #expect(tally[fault.rawValue, default: 0] > 0, "no \(fault.rawValue) outcome") }
        #expect(pool.activeTasks.isEmpty)
        print("fault load (\(transport.name)): \(total) requests; outcomes \(tally.sorted { $0.key < $1.key })")
    }

    @Test(
        "the server is killed mid-run and restarted: with a retry policy every request recovers or fails typed",
        arguments: TransportUnderTest.all)
    func serverRestart(_ transport: TransportUnderTest) async throws {
        let handler: MockServer.Handler = { request in
            MockResponse(.json(#"{"index": \#(Int(request.url!.lastPathComponent) ?? -1)}"#), faults: [.delayHead(0.3)])
        }
        let first = try MockServer(handler: handler)
        let port = first.port
        let pool = transport.pool(
            .init(
                resourceTimeout: 20, interceptors: [RetryPolicy(maximumAttempts: 8, baseDelay: 0.2, maximumDelay: 1)],
                maximumConcurrentTasks: 64, maximumTasksPerHost: 64))
        let restarted = Locked<MockServer?>(nil)
        let chaos = Task {
            try? await Task.sleep(nanoseconds: 500_000_000)
            first.kill()
            try? await Task.sleep(nanoseconds: 700_000_000)
            restarted.withLock { $0 = try? MockServer(port: port, handler: handler) }
        }
        let started = Date()
        let outcomes = await FaultLoad.run(0..<300, pool: pool, baseURL: first.baseURL, inFlight: 64)
        await chaos.value
        defer { restarted.withLock { $0?.stop() } }
        #expect(restarted.withLock { $0 != nil }, "could not restart on port \(port)")
        #expect(outcomes.count == 300)
        #expect(outcomes.values.allSatisfy { $0.count == 1 })
        let tally = outcomes.values.reduce(into: [String: Int]()) { $0[$1[0], default: 0] += 1 }
        #expect(tally.keys.allSatisfy { ["ok", "cutOff", "slow", "cancelled"].contains($0) }, "\(tally)")
        #expect(tally["ok", default: 0] > 150, "\(tally)")
        #expect(Date().timeIntervalSince(started) < 60)
        #expect(pool.activeTasks.isEmpty)
        print(
            "restart (\(transport.name)): \(tally.sorted { $0.key < $1.key }) in \(String(format: "%.1f", Date().timeIntervalSince(started))) s"
        )
    }
}
