/// What a ``TimerHeap`` holds entries for: each owner has at most one entry of each kind, and keeps
/// where it is in the heap, so that removing it needs no search.
protocol TimerHeapOwner: AnyObject {
    /// Where this owner's entry of `kind` is in the heap, or `nil` when it has none. Only the heap sets it.
    func timerSlot(_ kind: TimerKind) -> Int?
    func setTimerSlot(_ kind: TimerKind, _ slot: Int?)
}

/// Which of a task's timers an entry is.
enum TimerKind: Sendable {
    /// The task's deadline: it fails with ``NetworkError/deadlineExceeded(seconds:)``.
    case deadline
    /// The task's next stall check.
    case stall
}

/// Due times, earliest first: a binary min-heap of entries, each for one owner and kind, which tells
/// each owner where its entries are, so that an owner that ends takes them out at once and no entry
/// outlives what it is for. Not thread-safe: its owner guards it (the pool, with its lock).
struct TimerHeap<Owner: TimerHeapOwner> {
    struct Entry {
        /// When it is due, by `MonotonicClock`.
        var time: UInt64
        let owner: Owner
        let kind: TimerKind
        /// What it stands for: a deadline's seconds (for its error), a stall threshold.
        let seconds: Double
    }

    private var entries: [Entry] = []

    /// How many entries there are.
    var count: Int { entries.count }

    /// When the earliest entry is due, or `nil` when there is none.
    var earliest: UInt64? { entries.first?.time }

    /// Adds an entry for `owner` of `kind`, due at `time`, replacing the one it had of that kind.
    mutating func insert(_ time: UInt64, for owner: Owner, kind: TimerKind, seconds: Double) {
        remove(kind, of: owner)
        entries.append(Entry(time: time, owner: owner, kind: kind, seconds: seconds))
        owner.setTimerSlot(kind, entries.count - 1)
        siftUp(entries.count - 1)
    }

    /// Takes out `owner`'s entry of `kind`, if it has one.
    mutating func remove(_ kind: TimerKind, of owner: Owner) {
        guard let slot = owner.timerSlot(kind) else { return }
        _ = take(at: slot)
    }

    /// Takes out the earliest entry if it is due at `now`.
    mutating func popDue(at now: UInt64) -> Entry? {
        guard let first = entries.first, first.time <= now else { return nil }
        return take(at: 0)
    }

    private mutating func take(at slot: Int) -> Entry {
        let taken = entries[slot]
        taken.owner.setTimerSlot(taken.kind, nil)
        let last = entries.removeLast()
        if slot < entries.count {
            entries[slot] = last
            last.owner.setTimerSlot(last.kind, slot)
            if slot > 0, entries[slot].time < entries[(slot - 1) / 2].time {
                siftUp(slot)
            } else {
                siftDown(slot)
            }
        }
        // A heap that has drained, by ends or by firing, keeps the capacity it grew to: give a large table back.
        if entries.isEmpty, entries.capacity > 64 { entries = [] }
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
        entries[a].owner.setTimerSlot(entries[a].kind, a)
        entries[b].owner.setTimerSlot(entries[b].kind, b)
    }
}
