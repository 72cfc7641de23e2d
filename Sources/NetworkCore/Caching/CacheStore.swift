import Foundation

/// Where a ``TaskPool``'s cache keeps its answers: ``MemoryCacheStore``, ``DiskCacheStore``, or a store
/// of your own.
///
/// Keys are 64 hexadecimal digits, a digest of the request's method, URL and credentials: a store never
/// sees a credential, and answers for different credentials never share a key. A store decides what it
/// keeps and for how long; the pool decides, per RFC 9111, what it stores and which stored answer it may
/// use. Every method may be called from any thread at once.
public protocol CacheStore: Sendable {
    /// The answer stored under `key`, if any; a store that cannot read it whole returns `nil` (and
    /// should forget it).
    func response(forKey key: String) -> CachedResponse?
    /// Stores `response` under `key`, replacing what was there.
    func store(_ response: CachedResponse, forKey key: String)
    /// Forgets the answer under `key`, if any.
    func removeResponse(forKey key: String)
    /// Forgets every answer.
    func removeAll()
}
