// The cache suite: the TMDB-like page answered from the pool's cache (memory, disk) against the same page
// fetched from nginx on loopback through the same pool, one request at a time.
import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Latencies of `count` sends of the page: from a memory store, from a disk store (both with
/// `cacheFirst`, the entry stored by a first fetch), and over the network (`networkOnly`), in
/// alternating rounds; p50 and p99 in µs, and the network's p50 over each cache's by round.
func cacheHits(_ options: Options) async throws -> [Row] {
    let count = 2_000
    let rounds = max(3, options.repetitions)
    print(
        "\n## Cache: the page (\(Payload.page.rawValue)) from a memory store, a disk store and nginx on loopback, \(count) sends a round, \(rounds) rounds\n"
    )
    let page = FileEndpoint(baseURL: options.baseURL, path: Payload.page.rawValue)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nc-bench-cache-\(UUID())")
    defer { try? FileManager.default.removeItem(at: directory) }
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    let transport = URLSessionTransport(configuration: configuration)
    let memory = TaskPool(
        configuration: .init(transport: transport, cache: MemoryCacheStore(), cachePolicy: .cacheFirst(maxAge: 3_600)))
    let disk = TaskPool(
        configuration: .init(
            transport: transport, cache: try DiskCacheStore(directory: directory),
            cachePolicy: .cacheFirst(maxAge: 3_600)))
    let network = TaskPool(
        configuration: .init(transport: transport, cache: MemoryCacheStore(), cachePolicy: .networkOnly))
    for pool in [memory, disk, network] {
        let first = try await pool.send(page)
        precondition(first.statusCode == 200 && first.body.count > 1_000, "the page did not load: \(first.statusCode)")
    }
    /// `fromCache`: every answer must come from the store (fresh or not: `cacheFirst` takes either).
    func latencies(_ pool: TaskPool, fromCache: Bool) async throws -> [Double] {
        var values: [Double] = []
        values.reserveCapacity(count)
        for _ in 0..<count {
            let start = now()
            let response = try await pool.send(page)
            values.append(Double(now() - start) / 1_000)
            precondition((response.source != .network) == fromCache, "unexpected source \(response.source)")
        }
        return values.sorted()
    }
    var all: [String: [Double]] = [:]
    var ratios: [String: [Double]] = [:]
    for round in 0..<rounds {
        var thisRound: [String: Double] = [:]
        let order: [(String, TaskPool, Bool)] = [
            ("memory", memory, true), ("disk", disk, true), ("network", network, false),
        ]
        for (name, pool, fromCache) in round.isMultiple(of: 2) ? order : order.reversed() {
            let values = try await latencies(pool, fromCache: fromCache)
            all[name, default: []] += values
            thisRound[name] = values[values.count / 2]
        }
        ratios["memory", default: []].append(thisRound["network"]! / thisRound["memory"]!)
        ratios["disk", default: []].append(thisRound["network"]! / thisRound["disk"]!)
    }
    print("source    p50 µs  p99 µs  network p50 / this p50 by round (min/med/max)")
    var rows: [Row] = []
    for name in ["memory", "disk", "network"] {
        let values = all[name]!.sorted()
        let (p50, p99) = (values[values.count / 2], values[values.count * 99 / 100])
        let ratio = ratios[name].map { "\(fmt($0.min()!, 1))/\(fmt(median($0), 1))/\(fmt($0.max()!, 1))" } ?? "-"
        print(padded(name, 10) + padded(fmt(p50, 1), 8) + padded(fmt(p99, 1), 8) + ratio)
        var detail: [String: Double] = ["sends": Double(values.count)]
        if let ratio = ratios[name] { detail["speedup_median"] = median(ratio) }
        rows.append(
            Row(
                suite: "cache", client: name, payload: Payload.page.rawValue, inflight: 1, rps: nil, p50_us: p50,
                p99_us: p99, cpu_us_per_req: nil, rps_ratio_vs_urlsession: nil, cpu_ratio_vs_urlsession: nil,
                detail: detail))
    }
    return rows
}
