import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The samples of Docs/CachingAndScheduling.md, compiled with the tests (never run: they name a server that
/// does not exist). `GuideSamplesTests` checks that the guide's Swift blocks show exactly these lines.
func cachingGuide() async throws {
    // GUIDE-BEGIN
    enum Movies: Endpoint {
        case nowPlaying(page: Int)
        case genres
        case rate(id: Int, value: Double)

        var baseURL: String { "https://api.example.com/3" }
        var path: String {
            switch self {
            case .nowPlaying: "movie/now_playing"
            case .genres: "genre/movie/list"
            case .rate(let id, _): "movie/\(id)/rating"
            }
        }
        var method: HTTPMethod {
            if case .rate = self { return .post }
            return .get
        }
        var task: HTTPTask {
            switch self {
            case .nowPlaying(let page): .urlParameters(["page": page])
            case .genres: .plain
            case .rate(_, let value): .bodyParameters(["value": value])
            }
        }
        // Genres hardly change: any stored list less than a day old will do.
        var cachePolicy: CachePolicy? {
            if case .genres = self { return .cacheFirst(maxAge: 86_400) }
            return nil
        }
    }

    let caches = FileManager.default.temporaryDirectory.appendingPathComponent("MoviesCache")
    let store = try DiskCacheStore(directory: caches, byteLimit: 50 << 20)
    let pool = TaskPool(configuration: .init(cache: store))

    let page = try await pool.send(Movies.nowPlaying(page: 1))
    print(page.source, page.age ?? 0)  // network 0 the first time; cache 12.0 while it is fresh

    // One call that must not come from the cache, one that may come from nowhere else:
    _ = try await pool.send(Movies.nowPlaying(page: 1).caching(.networkOnly))
    do {
        _ = try await pool.send(Movies.nowPlaying(page: 2).caching(.cacheOnly))
    } catch {
        if case .notCached(let url) = error { print("nothing stored for", url) }
    }

    // An app that shows the last page it got when the network is gone:
    let offline = TaskPool(configuration: .init(cache: store, cachePolicy: .networkFirst))
    let last = try await offline.send(Movies.nowPlaying(page: 1))
    if last.source == .stale { print("offline: showing the page from \(Int(last.age ?? 0)) s ago") }

    // A POST that succeeds forgets what is stored for its URL.
    _ = try await pool.send(Movies.rate(id: 550, value: 8.5))

    struct Shared: CacheStore {
        func response(forKey key: String) -> CachedResponse? { nil }
        func store(_ response: CachedResponse, forKey key: String) {}
        func removeResponse(forKey key: String) {}
        func removeAll() {}
    }
    let memory = TaskPool(configuration: .init(cache: MemoryCacheStore(byteLimit: 10 << 20)))
    let custom = TaskPool(configuration: .init(cache: Shared()))
    _ = (memory, custom)

    // At most 16 requests at once, 4 to any one host; the rest wait in the pool's queue.
    let scheduled = TaskPool(configuration: .init(maximumConcurrentTasks: 16, maximumTasksPerHost: 4))
    scheduled.send(Movies.nowPlaying(page: 2).prioritized(.background), id: "prefetch") { _ in }
    let first = try await scheduled.send(Movies.nowPlaying(page: 1).prioritized(.high))
    scheduled.reprioritize(id: "prefetch", to: .normal)  // the user scrolled: it is wanted sooner
    print(first.statusCode, scheduled.queuedCount)

    scheduled.pause()  // e.g. the app goes to the background: nothing new starts
    scheduled.send(Movies.genres, id: "genres") { _ in }  // waits in the queue, its deadline running
    print(scheduled.activeTaskSnapshots.map { "\($0.id) \($0.phase) \($0.queuePosition ?? 0)" })
    scheduled.resume()  // the waiting tasks start, by priority
    // GUIDE-END
}
