import Foundation

/// A ``CacheStore`` in memory, up to a number of bytes; past it the least recently used answers go first.
///
/// ```swift
/// let pool = TaskPool(configuration: .init(cache: MemoryCacheStore(byteLimit: 10 << 20)))
/// ```
/// An answer larger than the limit is not kept. It lasts as long as the store.
public final class MemoryCacheStore: CacheStore, @unchecked Sendable {
    // @unchecked Sendable: `entries` is only touched under its own lock, in this file.
    /// The most bytes (bodies, headers and keys, roughly) the store keeps.
    public let byteLimit: Int
    private let entries: Locked<LeastRecentlyUsed<CachedResponse>>

    /// Creates a store that keeps up to `byteLimit` bytes (at least 0).
    public init(byteLimit: Int = 10 << 20) {
        self.byteLimit = max(0, byteLimit)
        entries = Locked(LeastRecentlyUsed(limit: self.byteLimit))
    }

    /// The answer stored under `key`, now the most recently used.
    public func response(forKey key: String) -> CachedResponse? {
        entries.withLock { $0.value(forKey: key) }
    }

    /// Stores `response` under `key`, then forgets the least recently used answers while over the limit.
    public func store(_ response: CachedResponse, forKey key: String) {
        let cost = Self.cost(of: response, key: key)
        entries.withLock { _ = $0.insert(response, cost: cost, forKey: key) }
    }

    /// Forgets the answer under `key`.
    public func removeResponse(forKey key: String) {
        entries.withLock { _ = $0.remove(key) }
    }

    /// Forgets every answer.
    public func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    /// The bytes the store holds now, by its own count.
    public var byteCount: Int { entries.withLock { $0.cost } }

    /// How many answers it holds now.
    public var count: Int { entries.withLock { $0.count } }

    static func cost(of response: CachedResponse, key: String) -> Int {
        response.body.count + key.utf8.count + response.url.utf8.count
            + response.headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 4 } + 128
    }
}

/// Values by key with a cost each, the least recently used first out when the total passes a limit:
/// a dictionary of nodes in a doubly linked list kept in an array, the free slots reused.
struct LeastRecentlyUsed<Value> {
    private struct Node {
        var key: String
        var value: Value?
        var cost: Int
        var newer = -1
        var older = -1
    }

    let limit: Int
    private var nodes: [Node] = []
    private var free: [Int] = []
    private var index: [String: Int] = [:]
    private var newest = -1
    private var oldest = -1
    /// The total cost held.
    private(set) var cost = 0

    init(limit: Int) { self.limit = limit }

    var count: Int { index.count }

    /// The keys from the least to the most recently used.
    var keysOldestFirst: [String] {
        var keys: [String] = []
        var slot = oldest
        while slot >= 0 {
            keys.append(nodes[slot].key)
            slot = nodes[slot].newer
        }
        return keys
    }

    /// The value under `key`, which becomes the most recently used.
    mutating func value(forKey key: String) -> Value? {
        guard let slot = index[key] else { return nil }
        unlink(slot)
        link(slot)
        return nodes[slot].value
    }

    /// Puts `value` under `key` as the most recently used, then removes the least recently used while the
    /// total cost is over the limit. A value costing more than the limit is not kept (and `key` is freed).
    /// - Returns: the keys removed to make room (not `key` itself when replaced).
    mutating func insert(_ value: Value, cost: Int, forKey key: String) -> [String] {
        _ = remove(key)
        guard cost <= limit else { return [] }
        let node = Node(key: key, value: value, cost: cost)
        let slot: Int
        if let reused = free.popLast() {
            nodes[reused] = node
            slot = reused
        } else {
            nodes.append(node)
            slot = nodes.count - 1
        }
        index[key] = slot
        link(slot)
        self.cost += cost
        var evicted: [String] = []
        while self.cost > limit, oldest >= 0, oldest != slot {
            let key = nodes[oldest].key
            _ = remove(key)
            evicted.append(key)
        }
        return evicted
    }

    /// Removes the value under `key`; returns its cost, if it was there.
    mutating func remove(_ key: String) -> Int? {
        guard let slot = index.removeValue(forKey: key) else { return nil }
        unlink(slot)
        let removed = nodes[slot].cost
        cost -= removed
        nodes[slot].value = nil
        free.append(slot)
        return removed
    }

    mutating func removeAll() {
        self = LeastRecentlyUsed(limit: limit)
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (nodes[slot].newer, nodes[slot].older)
        if newer >= 0 { nodes[newer].older = older } else { newest = older }
        if older >= 0 { nodes[older].newer = newer } else { oldest = newer }
        nodes[slot].newer = -1
        nodes[slot].older = -1
    }

    private mutating func link(_ slot: Int) {
        nodes[slot].older = newest
        nodes[slot].newer = -1
        if newest >= 0 { nodes[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }
}
