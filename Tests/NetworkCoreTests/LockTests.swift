import Testing

@testable import NetworkCore

@Suite("Lock and Locked")
struct LockTests {
    @Test("Locked excludes: concurrent increments from 8 tasks are all counted")
    func lockedCountsEveryIncrement() async {
        let counter = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
                }
            }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }

    @Test("Lock guards state outside it: a read-then-write from 4 tasks loses nothing")
    func lockGuardsOutsideState() async {
        final class Box: @unchecked Sendable {  // `value` is guarded by `lock`.
            let lock = Lock()
            var value = 0
        }
        let box = Box()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<5_000 {
                        box.lock.withLock {
                            let read = box.value
                            box.value = read + 1
                        }
                    }
                }
            }
        }
        #expect(box.lock.withLock { box.value } == 20_000)
    }

    @Test("copies of a Locked share one value; a throwing body leaves the lock usable")
    func copiesShareAndThrowsUnlock() {
        struct Boom: Error {}
        let original = Locked([String]())
        let copy = original
        copy.withLock { $0.append("a") }
        #expect(original.withLock { $0 } == ["a"])
        #expect(throws: Boom.self) { try original.withLock { (_: inout [String]) throws(Boom) in throw Boom() } }
        original.withLock { $0.append("b") }  // would deadlock had the throw left the mutex locked
        #expect(copy.withLock { $0 } == ["a", "b"])
    }
}
