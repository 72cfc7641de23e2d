import Foundation
import Testing

@testable import NetworkCore

/// An owner of heap entries that keeps its slots as a task does.
final class SlotOwner: TimerHeapOwner {
    let name: Int
    var slots: [TimerKind: Int] = [:]

    init(_ name: Int) { self.name = name }

    func timerSlot(_ kind: TimerKind) -> Int? { slots[kind] }
    func setTimerSlot(_ kind: TimerKind, _ slot: Int?) { slots[kind] = slot }
}

@Suite("The pool's timer heap")
struct TimerHeapTests {
    /// Pops every entry due at `now`, as (owner, kind, time).
    private func drain(_ heap: inout TimerHeap<SlotOwner>, at now: UInt64) -> [(Int, TimerKind, UInt64)] {
        var popped: [(Int, TimerKind, UInt64)] = []
        while let entry = heap.popDue(at: now) { popped.append((entry.owner.name, entry.kind, entry.time)) }
        return popped
    }

    @Test("entries come out earliest first, only once due, and each owner knows where its entries are")
    func order() {
        var heap = TimerHeap<SlotOwner>()
        let owners = (0..<50).map(SlotOwner.init)
        var generator = SystemRandomNumberGenerator()
        var times: [UInt64] = []
        for owner in owners {
            let deadline = UInt64.random(in: 1...1_000, using: &generator)
            let stall = UInt64.random(in: 1...1_000, using: &generator)
            heap.insert(deadline, for: owner, kind: .deadline, seconds: 1)
            heap.insert(stall, for: owner, kind: .stall, seconds: 2)
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
        #expect(owners.allSatisfy { $0.slots.values.allSatisfy { _ in false } })
    }

    @Test("removing an owner's entry takes out that one alone, wherever it is, and setting it again replaces it")
    func removal() {
        var heap = TimerHeap<SlotOwner>()
        let owners = (0..<40).map(SlotOwner.init)
        for owner in owners {
            heap.insert(UInt64(1_000 - owner.name * 10), for: owner, kind: .deadline, seconds: 1)
            heap.insert(UInt64(owner.name * 7 + 3), for: owner, kind: .stall, seconds: 1)
        }
        // Every third owner ends: both its entries go; every fifth sets its stall check again, later.
        for owner in owners where owner.name % 3 == 0 {
            heap.remove(.deadline, of: owner)
            heap.remove(.stall, of: owner)
            #expect(owner.slots.isEmpty)
        }
        for owner in owners where owner.name % 3 != 0 && owner.name % 5 == 0 {
            heap.insert(5_000 + UInt64(owner.name), for: owner, kind: .stall, seconds: 1)
        }
        let kept = owners.filter { $0.name % 3 != 0 }
        #expect(heap.count == kept.count * 2)
        // Removing what is not there does nothing.
        heap.remove(.stall, of: owners[0])
        #expect(heap.count == kept.count * 2)
        for owner in kept {
            // The slots each owner holds point at its own entries.
            #expect(owner.slots.count == 2)
        }
        let popped = drain(&heap, at: .max)
        #expect(popped.count == kept.count * 2)
        #expect(popped.map(\.2) == popped.map(\.2).sorted())
        var expected: [(Int, TimerKind, UInt64)] = []
        for owner in kept {
            expected.append((owner.name, .deadline, UInt64(1_000 - owner.name * 10)))
            expected.append(
                (owner.name, .stall, owner.name % 5 == 0 ? 5_000 + UInt64(owner.name) : UInt64(owner.name * 7 + 3)))
        }
        let key = { (entry: (Int, TimerKind, UInt64)) in "\(entry.0) \(entry.1) \(entry.2)" }
        #expect(Set(popped.map(key)) == Set(expected.map(key)))
        #expect(kept.allSatisfy { $0.slots.isEmpty })
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
