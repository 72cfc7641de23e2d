/// Which of a task's timers an entry is.
enum TimerKind: UInt8, Sendable, CaseIterable {
    /// The task's deadline: it fails with ``NetworkError/deadlineExceeded(seconds:)``.
    case deadline
    /// The task's next stall check.
    case stall
    /// The end of the wait before the task's next attempt.
    case retry
}

/// Due times, earliest first: a binary min-heap of entries, at most one per key and kind, which knows
/// where each entry is, so that a task that ends takes its entries out at once and no entry outlives
/// what it is for. A value: its owner guards it.
struct TimerHeap<Key: Hashable> {
    struct Entry {
        /// When it is due, by `MonotonicClock`.
        var time: UInt64
        let key: Key
        let kind: TimerKind
        /// What it stands for: a deadline's seconds (for its error), a stall threshold.
        let seconds: Double
    }

    /// Where an entry is in `entries`, by key and kind.
    private struct Slot: Hashable {
        let key: Key
        let kind: TimerKind
    }

    private var entries: [Entry] = []
    private var slots: [Slot: Int] = [:]

    /// How many entries there are.
    var count: Int { entries.count }

    /// When the earliest entry is due, or `nil` when there is none.
    var earliest: UInt64? { entries.first?.time }

    /// Whether `key` has an entry of `kind`.
    func contains(_ kind: TimerKind, of key: Key) -> Bool { slots[Slot(key: key, kind: kind)] != nil }

    /// Adds an entry for `key` of `kind`, due at `time`, replacing the one it had of that kind.
    mutating func insert(_ time: UInt64, for key: Key, kind: TimerKind, seconds: Double) {
        remove(kind, of: key)
        entries.append(Entry(time: time, key: key, kind: kind, seconds: seconds))
        slots[Slot(key: key, kind: kind)] = entries.count - 1
        siftUp(entries.count - 1)
    }

    /// Takes out `key`'s entry of `kind`, if it has one.
    mutating func remove(_ kind: TimerKind, of key: Key) {
        guard !entries.isEmpty, let slot = slots[Slot(key: key, kind: kind)] else { return }
        _ = take(at: slot)
    }

    /// Takes out every entry of `key`.
    mutating func removeAll(of key: Key) {
        guard !entries.isEmpty else { return }
        for kind in TimerKind.allCases { remove(kind, of: key) }
    }

    /// Takes out the earliest entry if it is due at `now`.
    mutating func popDue(at now: UInt64) -> Entry? {
        guard let first = entries.first, first.time <= now else { return nil }
        return take(at: 0)
    }

    private mutating func take(at slot: Int) -> Entry {
        let taken = entries[slot]
        slots.removeValue(forKey: Slot(key: taken.key, kind: taken.kind))
        let last = entries.removeLast()
        if slot < entries.count {
            entries[slot] = last
            slots[Slot(key: last.key, kind: last.kind)] = slot
            if slot > 0, entries[slot].time < entries[(slot - 1) / 2].time {
                siftUp(slot)
            } else {
                siftDown(slot)
            }
        }
        // A heap that has drained, by ends or by firing, keeps the capacity it grew to: give a large table back.
        if entries.isEmpty, entries.capacity > 64 {
            entries = []
            slots = [:]
        }
        return taken
    }

    private mutating func siftUp(_ start: Int) {
        var slot = start
        while slot > 0 {
            let parent = (slot - 1) / 2
            guard entries[slot].time < entries[parent].time else { break }
            swapAt(slot, parent)
            slot = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var slot = start
        while true {
            let left = 2 * slot + 1
            guard left < entries.count else { return }
            let right = left + 1
            let child = right < entries.count && entries[right].time < entries[left].time ? right : left
            guard entries[child].time < entries[slot].time else { return }
            swapAt(slot, child)
            slot = child
        }
    }

    private mutating func swapAt(_ a: Int, _ b: Int) {
        entries.swapAt(a, b)
        slots[Slot(key: entries[a].key, kind: entries[a].kind)] = a
        slots[Slot(key: entries[b].key, kind: entries[b].kind)] = b
    }
}
