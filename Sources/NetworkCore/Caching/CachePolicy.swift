import Foundation

/// How a task uses the pool's cache (``TaskPool/Configuration/cache``): per pool
/// (``TaskPool/Configuration/cachePolicy``), per endpoint (``Endpoint/cachePolicy``) or per call
/// (``Endpoint/caching(_:)``), the most specific winning.
///
/// Only `GET` and `HEAD` answers held in memory are read from and written to the cache; downloads to a
/// file, streams and event streams always go to the network. A request that carries its own validators
/// (`If-None-Match`, `If-Modified-Since`) or a `Range` bypasses the cache.
/// ```swift
/// let page = try await pool.send(Movies.nowPlaying(page: 1).caching(.networkFirst))
/// print(page.source)   // .network, or .stale when the server could not be reached
/// ```
public enum CachePolicy: Sendable, Hashable {
    /// HTTP caching as RFC 9111 describes it (the default): a fresh stored answer is used without
    /// asking the server; a stale one is validated (`If-None-Match`, `If-Modified-Since`), used while
    /// revalidating within its `stale-while-revalidate`, or used when the server fails within its
    /// `stale-if-error`; `no-store`, `no-cache`, `must-revalidate`, `Vary` and the request's own
    /// `Cache-Control` are obeyed.
    case followProtocol
    /// A stored answer at most `maxAge` seconds old is used whatever its freshness says; an older one,
    /// or none, goes to the network as ``followProtocol`` does.
    case cacheFirst(maxAge: TimeInterval)
    /// The network first (validating a stored answer when it can); when the server cannot be reached or
    /// answers with a 5xx, the stored answer is used, however old: an offline fallback.
    case networkFirst
    /// The network always; the answer is still stored for other policies to use.
    case networkOnly
    /// The stored answer, however old, and never the network: ``NetworkError/notCached(url:)`` when
    /// there is none.
    case cacheOnly
}
