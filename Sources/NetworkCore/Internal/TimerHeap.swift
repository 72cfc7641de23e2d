/// Which of a task's timers an entry is.
/// At most four kinds: a ``TimerHeap`` entry keeps its kind in two bits.
enum TimerKind: UInt8, Sendable, CaseIterable {
    /// The task's deadline: it fails with ``NetworkError/deadlineExceeded(seconds:)``.
    case deadline
    /// The task's next stall check.
    case stall
    /// The end of the wait before the task's next attempt.
    case retry
}

/// A key that names a small number, unique among the keys alive at once (a task's slot in the pool's
/// records), so that a ``TimerHeap`` keeps its entries' places in an array rather than a table.
protocol DenseKey: Equatable {
    /// A number from 0, unique among the keys with entries at once.
    var denseIndex: Int { get }
}

/// Due times, earliest first: a binary min-heap of entries, at most one per key and kind, which knows
/// where each entry is, so that a task that ends takes its entries out at once and no entry outlives
/// what it is for. Where each entry is lies in an array by the key's ``DenseKey/denseIndex`` and the
/// kind: a sift moves entries with no hashing. A value: its owner guards it.
struct TimerHeap<Key: DenseKey> {
    /// 16 bytes for a task's key: what an entry stands for (a deadline's seconds, a stall threshold) is its
    /// task's to say, and its kind rides in the two low bits of its time.
    struct Entry {
        /// When it is due, by `MonotonicClock`, to 4 ns (a time is rounded down: an entry is due at most 3 ns
        /// before its time), and its kind.
        private let packed: UInt64
        let key: Key

        init(time: UInt64, key: Key, kind: TimerKind) {
            packed = time & ~3 | UInt64(kind.rawValue)
            self.key = key
        }

        var time: UInt64 { packed & ~3 }
        var kind: TimerKind { TimerKind(rawValue: UInt8(truncatingIfNeeded: packed & 3)) ?? .deadline }
    }

    private var entries: [Entry] = []
    /// Where each entry is in `entries`, plus one (0: none), at `denseIndex * kinds + kind`.
    private var places: [Int32] = []
    private static var kinds: Int { TimerKind.allCases.count }

    /// How many entries there are.
    var count: Int { entries.count }

    /// When the earliest entry is due, or `nil` when there is none.
    var earliest: UInt64? { entries.first?.time }

    /// Whether `key` has an entry of `kind`.
    func contains(_ kind: TimerKind, of key: Key) -> Bool { slot(of: key, kind) != nil }

    /// Where `key`'s entry of `kind` is in `entries`, if it has one.
    private func slot(of key: Key, _ kind: TimerKind) -> Int? {
        let place = key.denseIndex * Self.kinds + Int(kind.rawValue)
        guard place < places.count, places[place] > 0 else { return nil }
        let slot = Int(places[place]) - 1
        // An entry of an earlier key that had the same index is not this key's.
        return slot < entries.count && entries[slot].key == key ? slot : nil
    }

    /// Records that the entry at `slot` is there (or, with `nil`, that it has gone).
    private mutating func place(_ entry: Entry, at slot: Int?) {
        let place = entry.key.denseIndex * Self.kinds + Int(entry.kind.rawValue)
        if place >= places.count {
            guard slot != nil else { return }
            places.append(contentsOf: repeatElement(0, count: max(place + 1 - places.count, places.count)))
        }
        places[place] = slot.map { Int32($0 + 1) } ?? 0
    }

    /// Adds an entry for `key` of `kind`, due at `time`, replacing the one it had of that kind.
    mutating func insert(_ time: UInt64, for key: Key, kind: TimerKind) {
        remove(kind, of: key)
        let entry = Entry(time: time, key: key, kind: kind)
        entries.append(entry)
        place(entry, at: entries.count - 1)
        siftUp(entries.count - 1)
    }

    /// Takes out `key`'s entry of `kind`, if it has one.
    mutating func remove(_ kind: TimerKind, of key: Key) {
        guard !entries.isEmpty, let slot = slot(of: key, kind) else { return }
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
        place(taken, at: nil)
        let last = entries.removeLast()
        if slot < entries.count {
            entries[slot] = last
            place(last, at: slot)
            if slot > 0, entries[slot].time < entries[(slot - 1) / 2].time {
                siftUp(slot)
            } else {
                siftDown(slot)
            }
        }
        // A heap that has drained, by ends or by firing, keeps the capacity it grew to: give a large table back.
        if entries.isEmpty, entries.capacity > 64 {
            entries = []
            places = []
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
        place(entries[a], at: a)
        place(entries[b], at: b)
    }
}
