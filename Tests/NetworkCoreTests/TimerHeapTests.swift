import Foundation
import Testing

@testable import NetworkCore

extension Int: DenseKey {
    public var denseIndex: Int { self }
}

@Suite("The pool's timer heap")
struct TimerHeapTests {
    /// Pops every entry due at `now`, as (key, kind, time).
    private func drain(_ heap: inout TimerHeap<Int>, at now: UInt64) -> [(Int, TimerKind, UInt64)] {
        var popped: [(Int, TimerKind, UInt64)] = []
        while let entry = heap.popDue(at: now) { popped.append((entry.key, entry.kind, entry.time)) }
        return popped
    }

    @Test("an entry keeps its kind and its time to 4 ns, rounded down, in 16 bytes")
    func packedEntry() {
        #expect(MemoryLayout<TimerHeap<TaskKey>.Entry>.stride == 16)
        #expect(TimerKind.allCases.count <= 4)
        for kind in TimerKind.allCases {
            for time: UInt64 in [0, 3, 4, 1_000_000_007, .max] {
                let entry = TimerHeap<Int>.Entry(time: time, key: 7, kind: kind)
                #expect(entry.kind == kind && entry.key == 7)
                #expect(entry.time == time / 4 * 4)
            }
        }
        var heap = TimerHeap<Int>()
        heap.insert(1_000_000_007, for: 1, kind: .stall)
        #expect(heap.popDue(at: 1_000_000_003) == nil)
        #expect(heap.popDue(at: 1_000_000_004)?.kind == .stall)
    }

    @Test(
        "a record's deadline and stall threshold, packed in 8 bytes, read back as given: none stays none, a NaN stays a NaN",
        arguments: [nil, 0, 0.25, 30, -1, .infinity, -.infinity, .greatestFiniteMagnitude] as [TimeInterval?])
    func packedSeconds(_ seconds: TimeInterval?) {
        #expect(PackedSeconds(seconds).value == seconds)
        #expect(PackedSeconds(.nan).value?.isNaN == true)
        #expect(MemoryLayout<PackedSeconds>.size == 8)
    }

    @Test("a meter's unset times and unknown counts, packed in their own 8 bytes, read back as set")
    func packedOptional() {
        for value: UInt64? in [nil, 0, 1_000_000_007, .max - 1] {
            #expect(PackedOptional(wrappedValue: value).wrappedValue == value)
        }
        for value: Int? in [nil, 0, -1, .max - 1] {
            var packed = PackedOptional<Int>(wrappedValue: 5)
            packed.wrappedValue = value
            #expect(packed.wrappedValue == value)
        }
        #expect(MemoryLayout<PackedOptional<UInt64>>.size == 8 && MemoryLayout<TaskMeter>.size == 152)
    }

    @Test("entries come out earliest first, only once due, and none is left once all are out")
    func order() {
        var heap = TimerHeap<Int>()
        let owners = Array(0..<50)
        var generator = SystemRandomNumberGenerator()
        var times: [UInt64] = []
        for owner in owners {
            // Multiples of 4: an entry keeps its time to 4 ns (`packedEntry`).
            let deadline = 4 * UInt64.random(in: 1...250, using: &generator)
            let stall = 4 * UInt64.random(in: 1...250, using: &generator)
            heap.insert(deadline, for: owner, kind: .deadline)
            heap.insert(stall, for: owner, kind: .stall)
            times += [deadline, stall]
        }
        #expect(heap.count == 100)
        #expect(heap.earliest == times.min())
        #expect(heap.popDue(at: times.min()! - 1) == nil)
        let early = drain(&heap, at: 500)
        #expect(early.map(\.2) == times.filter { $0 <= 500 }.sorted())
        let rest = drain(&heap, at: .max)
        #expect(rest.map(\.2) == times.filter { $0 > 500 }.sorted())
        #expect(heap.count == 0)
        #expect(heap.earliest == nil)
        #expect(owners.allSatisfy { !heap.contains(.deadline, of: $0) && !heap.contains(.stall, of: $0) })
    }

    @Test("removing a key's entry takes out that one alone, wherever it is, and setting it again replaces it")
    func removal() {
        var heap = TimerHeap<Int>()
        let owners = Array(0..<40)
        for owner in owners {
            heap.insert(UInt64(4_000 - owner * 40), for: owner, kind: .deadline)
            heap.insert(UInt64(owner * 28 + 12), for: owner, kind: .stall)
        }
        // Every third owner ends: both its entries go; every fifth sets its stall check again, later.
        for owner in owners where owner % 3 == 0 {
            heap.removeAll(of: owner)
            #expect(!heap.contains(.deadline, of: owner) && !heap.contains(.stall, of: owner))
        }
        for owner in owners where owner % 3 != 0 && owner % 5 == 0 {
            heap.insert(20_000 + UInt64(owner * 4), for: owner, kind: .stall)
        }
        let kept = owners.filter { $0 % 3 != 0 }
        #expect(heap.count == kept.count * 2)
        // Removing what is not there does nothing.
        heap.remove(.stall, of: owners[0])
        #expect(heap.count == kept.count * 2)
        for owner in kept {
            #expect(heap.contains(.deadline, of: owner) && heap.contains(.stall, of: owner))
        }
        let popped = drain(&heap, at: .max)
        #expect(popped.count == kept.count * 2)
        #expect(popped.map(\.2) == popped.map(\.2).sorted())
        var expected: [(Int, TimerKind, UInt64)] = []
        for owner in kept {
            expected.append((owner, .deadline, UInt64(4_000 - owner * 40)))
            expected.append((owner, .stall, owner % 5 == 0 ? 20_000 + UInt64(owner * 4) : UInt64(owner * 28 + 12)))
        }
        let key = { (entry: (Int, TimerKind, UInt64)) in "\(entry.0) \(entry.1) \(entry.2)" }
        #expect(Set(popped.map(key)) == Set(expected.map(key)))
        #expect(kept.allSatisfy { !heap.contains(.deadline, of: $0) && !heap.contains(.stall, of: $0) })
    }

    @Test("the pool keeps a timer for each running task's deadline and stall check, and none once it ends")
    func poolTimers() async throws {
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { request, _ in
                    if request.url!.path.hasSuffix("held") { try await Task.sleep(nanoseconds: 30_000_000_000) }
                    return .json("{}")
                }, resourceTimeout: 600, stallThreshold: 600, maximumTasksPerHost: 64))
        for index in 0..<20 { pool.send(TestEndpoint(path: "held"), id: "held \(index)") { _ in } }
        #expect(pool.timerCount == 40)
        _ = try await pool.send(TestEndpoint(path: "quick"), id: "quick")
        #expect(pool.timerCount == 40)
        #expect(pool.cancel(id: "held 3"))
        #expect(pool.timerCount == 38)
        #expect(pool.cancelAll() == 19)
        #expect(pool.activeTasks.isEmpty)
        #expect(pool.timerCount == 0)
    }

    @Test("deadlines of many tasks fire in order of their times, each at its own")
    func deadlinesInOrder() async throws {
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { _, _ in
                    try await Task.sleep(nanoseconds: 30_000_000_000)
                    return .json("{}")
                }))
        let ended = Locked<[String]>([])
        let deadlines = [0.4, 0.1, 0.3, 0.2]
        let started = Date()
        let elapsed = Locked<[String: TimeInterval]>([:])
        for (index, seconds) in deadlines.enumerated() {
            pool.send(DeadlineEndpoint(resourceTimeout: seconds), id: "t\(index)") { result in
                guard case .failure(.deadlineExceeded(let limit)) = result else { return }
                ended.withLock { $0.append("\(limit)") }
                elapsed.withLock { $0["\(limit)"] = Date().timeIntervalSince(started) }
            }
        }
        #expect(await eventually(within: 5) { ended.withLock { $0.count } == 4 })
        #expect(ended.withLock { $0 } == ["0.1", "0.2", "0.3", "0.4"])
        for seconds in deadlines {
            // Never early; late only by what this machine's scheduling adds.
            #expect(elapsed.withLock { $0["\(seconds)"] ?? 0 } >= seconds)
        }
        #expect(pool.timerCount == 0)
    }
}
