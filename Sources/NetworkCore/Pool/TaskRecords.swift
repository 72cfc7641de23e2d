extension PoolState {
    /// Every task's record, in an array indexed by the key's slot: finding a record is an index, with no
    /// hashing (a pool looks its tasks up a dozen times a request), and a record is changed where it lies,
    /// never copied. A freed slot is used again under the next generation, so that the key of a task that
    /// is gone finds nothing: a key's generation equals its slot's only while the slot holds its record.
    ///
    /// A freed slot holds an empty record (``Record/vacant``), not `nil`: the generations already say which
    /// slots are in use, and an optional record's case is read through the runtime at every look-up.
    struct Records {
        private var slots: [Record] = []
        private var generations: [UInt32] = []
        private var free: [UInt32] = []
        /// How many records there are.
        private(set) var count = 0

        /// Adds the record `make` makes for its new key; returns the key.
        mutating func insert(_ make: (TaskKey) -> Record) -> TaskKey {
            count += 1
            if let slot = free.popLast() {
                let key = TaskKey(slot: slot, generation: generations[Int(slot)])
                slots[Int(slot)] = make(key)
                return key
            }
            let key = TaskKey(slot: UInt32(slots.count), generation: 0)
            slots.append(make(key))
            generations.append(0)
            return key
        }

        /// Runs `body` on the record of `key` in place; `nil` when there is none.
        mutating func update<T>(_ key: TaskKey, _ body: (inout Record) -> T) -> T? {
            let slot = Int(key.slot)
            guard slot < generations.count, generations[slot] == key.generation else { return nil }
            return body(&slots[slot])
        }

        /// Takes out the record of `key`: its slot is free for the next, under a new generation.
        mutating func remove(_ key: TaskKey) {
            let slot = Int(key.slot)
            guard slot < generations.count, generations[slot] == key.generation else { return }
            slots[slot] = .vacant
            generations[slot] &+= 1
            free.append(key.slot)
            count -= 1
            // Once a burst has drained, the arrays are given back.
            if count == 0, slots.count > PoolState.keptCapacity {
                slots = []
                generations = []
                free = []
            }
        }

        /// The record of `key`, copied (for tests).
        subscript(key: TaskKey) -> Record? {
            let slot = Int(key.slot)
            guard slot < generations.count, generations[slot] == key.generation else { return nil }
            return slots[slot]
        }
    }
}
