// NetworkCore benchmarks: throughput, latency and client CPU against raw URLSession, task-pool scale,
// and parse cost. Run with `Benchmarks/run`, which starts nginx and builds this in release mode.
import AsyncHTTPClient
import Foundation
import NIOCore
import NetworkCore
import NetworkCoreAsyncHTTPClient
import NetworkCoreNIO
import ResidentMemory

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

// MARK: Options

struct Options {
    var baseURL = ""
    var requests = 2_000
    var warmUp = 200
    var repetitions = 3
    var rounds = 8
    var poolRounds = 30
    var inflight = [1, 8, 64, 256]
    /// Whether the throughput suite runs `wrk` for nginx's ceiling (`--ceiling none` leaves it out, so that
    /// `Benchmarks/perf-stat` counts the clients' work alone).
    var ceiling = true
    var scale = [1_000, 10_000, 100_000]
    var output = "results/latest.json"
    var suites: Set<String> = [
        "throughput", "pool", "queue", "cache", "parse", "memory", "transfers", "events", "inspector", "websocket",
        "http2",
    ]
    /// nginx's document root, where the transfers suite puts its file and nginx stores uploads.
    var www = ""
    /// nginx's HTTP/2 server (`https://localhost:PORT`) and its certificate, for the http2 suite.
    var http2BaseURL: String?
    var http2Certificate: String?
    var transferMegabytes = 1_024
    var sseEvents = 100_000
    var clients = Client.standard
    var payloads = Payload.allCases

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            let value = iterator.next() ?? ""
            switch argument {
            case "--base-url": options.baseURL = value
            case "--requests": options.requests = Int(value) ?? options.requests
            case "--repetitions": options.repetitions = Int(value) ?? options.repetitions
            case "--rounds": options.rounds = max(1, Int(value) ?? options.rounds)
            case "--pool-rounds": options.poolRounds = max(1, Int(value) ?? options.poolRounds)
            case "--inflight": options.inflight = value.split(separator: ",").compactMap { Int($0) }
            case "--scale": options.scale = value.split(separator: ",").compactMap { Int($0) }
            case "--output": options.output = value
            case "--suites": options.suites = Set(value.split(separator: ",").map(String.init))
            case "--clients": options.clients = value.split(separator: ",").map { Client.named(String($0)) }
            case "--payloads": options.payloads = value.split(separator: ",").map { Payload.named(String($0)) }
            case "--www": options.www = value
            case "--h2-base-url": options.http2BaseURL = value
            case "--h2-cert": options.http2Certificate = value
            case "--transfer-mb": options.transferMegabytes = max(1, Int(value) ?? options.transferMegabytes)
            case "--sse-events": options.sseEvents = max(1, Int(value) ?? options.sseEvents)
            case "--ceiling": options.ceiling = value != "none"
            default: fatalError("unknown option \(argument)")
            }
        }
        precondition(!options.baseURL.isEmpty, "--base-url is required")
        return options
    }
}

// MARK: Models and endpoints

struct Small: Decodable, Sendable {
    struct Entry: Decodable, Sendable {
        let id: Int
        let name: String
        let score: Double
        let active: Bool
    }
    let id: Int
    let name: String
    let entries: [Entry]
}

struct Page: Decodable, Sendable {
    struct Movie: Decodable, Sendable {
        let id: Int
        let title: String
        let overview: String
        let posterPath: String?
        let releaseDate: String
        let voteAverage: Double
        let voteCount: Int
        let genreIDs: [Int]
        enum CodingKeys: String, CodingKey {
            case id, title, overview
            case posterPath = "poster_path"
            case releaseDate = "release_date"
            case voteAverage = "vote_average"
            case voteCount = "vote_count"
            case genreIDs = "genre_ids"
        }
    }
    let page: Int
    let results: [Movie]
    let totalPages: Int
    enum CodingKeys: String, CodingKey {
        case page, results
        case totalPages = "total_pages"
    }
}

struct FileEndpoint: Endpoint {
    let baseURL: String
    let path: String
}

enum Payload: String, CaseIterable, Sendable {
    case small = "small.json"
    case page = "page.json"
}

enum Client: String, CaseIterable, Sendable {
    case raw = "URLSession"
    /// Raw URLSession again, measured in turns of its own: its ratio to `raw` is what noise alone gives.
    case rawControl = "URLSession (control)"
    case networkCore = "NetworkCore/URLSession"
    /// AsyncHTTPClient without the pool: the same requests, headers and client configuration as the
    /// transport's (64 connections), each answer collected and decoded.
    case asyncHTTPClient = "AsyncHTTPClient"
    case networkCoreAsyncHTTPClient = "NetworkCore/AsyncHTTPClient"
    case networkCoreNIOTransport = "NetworkCore/NIOTransport"
    /// `URLSessionTransport` called directly, without the pool: splits NetworkCore's cost into transport and pool.
    case transport = "URLSessionTransport alone"
    /// `AsyncHTTPClientTransport` called directly, without the pool: the same split over AsyncHTTPClient.
    case asyncHTTPClientTransport = "AsyncHTTPClientTransport alone"
    /// AsyncHTTPClient as a user makes it, `HTTPClient(eventLoopGroup:)`: its defaults (8 connections a host).
    case asyncHTTPClientDefaults = "AsyncHTTPClient (defaults)"
    /// The pool as a user writes it over AsyncHTTPClient: `TaskPool(configuration: .init(transport:
    /// AsyncHTTPClientTransport()))`, every setting its default; paired with ``asyncHTTPClientDefaults``.
    case networkCoreAsyncHTTPClientDefaults = "NetworkCore/AHC (defaults)"

    /// The clients a run measures unless `--clients` names others.
    static let standard: [Client] = [
        .raw, .rawControl, .networkCore, .asyncHTTPClient, .networkCoreAsyncHTTPClient, .networkCoreNIOTransport,
    ]
}

extension CaseIterable {
    /// The case a command-line option names by its Swift name (`small`, `networkCore`).
    static func named(_ name: String) -> Self {
        guard let value = allCases.first(where: { "\($0)" == name }) else {
            fatalError("unknown \(Self.self) \(name); use \(allCases.map { "\($0)" }.joined(separator: ", "))")
        }
        return value
    }
}

// MARK: Measuring

func cpuSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
        getrusage(RUSAGE_SELF, &usage)
    #endif
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

struct Sample {
    let rps: Double
    let p50: Double
    let p99: Double
    let cpuPerRequest: Double
}

func percentile(_ sorted: [UInt64], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]) / 1_000
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// A median with an interval around it that assumes nothing of the values' distribution: the values
/// ranked n/2 ∓ 0.98·√n, a 95% interval for the median once there are about 20 values (with fewer it
/// widens to the lowest and the highest).
struct MedianInterval: CustomStringConvertible {
    let low: Double
    let median: Double
    let high: Double

    init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let count = Double(sorted.count)
        let spread = 0.98 * count.squareRoot()
        low = sorted[max(0, Int((count / 2 - spread).rounded(.down)) - 1)]
        median = sorted[sorted.count / 2]
        high = sorted[min(sorted.count - 1, Int((count / 2 + spread).rounded(.up)))]
    }

    /// `"0.981 (0.962–0.995)"`.
    var description: String { "\(fmt(median, 3)) (\(fmt(low, 3))–\(fmt(high, 3)))" }
}

/// What a block of calls took: wall and CPU seconds, and each call's latency in nanoseconds.
/// Blocks of one client add up into that client's sample for a repetition.
struct Block {
    var count = 0
    var elapsed = 0.0
    var cpu = 0.0
    var latencies: [UInt64] = []

    static func += (total: inout Block, block: Block) {
        total.count += block.count
        total.elapsed += block.elapsed
        total.cpu += block.cpu
        total.latencies += block.latencies
    }

    var sample: Sample {
        let sorted = latencies.sorted()
        return Sample(
            rps: Double(count) / elapsed, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99),
            cpuPerRequest: cpu / Double(count) * 1e6)
    }
}

/// Runs `count` calls with at most `inflight` at once and measures them.
func measure(count: Int, inflight: Int, _ call: @escaping @Sendable (Int) async throws -> Void) async -> Block {
    let latencies = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: count)
    defer { latencies.deallocate() }
    nonisolated(unsafe) let sink = latencies
    let cpuStart = cpuSeconds()
    let start = now()
    await withTaskGroup(of: Void.self) { group in
        var next = 0
        func launch(_ index: Int) {
            group.addTask {
                let begin = now()
                do { try await call(index) } catch { fatalError("request \(index) failed: \(error)") }
                sink[index] = now() - begin
            }
        }
        while next < count, next < inflight {
            launch(next)
            next += 1
        }
        while await group.next() != nil, next < count {
            launch(next)
            next += 1
        }
        await group.waitForAll()
    }
    return Block(
        count: count, elapsed: Double(now() - start) / 1e9, cpu: cpuSeconds() - cpuStart, latencies: Array(latencies))
}

// MARK: The clients

final class Clients: Sendable {
    let session: URLSession
    let pool: TaskPool
    let nioPool: TaskPool
    let transport: URLSessionTransport
    let nioTransport: AsyncHTTPClientTransport
    /// A client configured as ``nioTransport``'s, used directly.
    let asyncHTTPClient: HTTPClient
    let ownNIOTransport = NIOTransport()
    let ownNIOPool: TaskPool
    /// AsyncHTTPClient and the pool over it as a user writes them, every setting its default.
    let defaultsClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
    let defaultsTransport = AsyncHTTPClientTransport()
    let defaultsPool: TaskPool
    let baseURL: String

    init(baseURL: String) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 64
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
        // The pools run as many requests at once to nginx as the raw session opens connections to it (64),
        // and let every caller's request be in flight, as the raw session does.
        let limits = (total: 256, perHost: 64)
        pool = TaskPool(
            configuration: .init(
                transport: URLSessionTransport(configuration: configuration), maximumConcurrentTasks: limits.total,
                maximumTasksPerHost: limits.perHost))
        transport = URLSessionTransport(configuration: configuration)
        var nio = AsyncHTTPClientTransport.defaultConfiguration
        nio.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        nioTransport = AsyncHTTPClientTransport(configuration: nio)
        nio.redirectConfiguration = .disallow  // as the transport sets it
        asyncHTTPClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: nio)
        nioPool = TaskPool(
            configuration: .init(
                transport: nioTransport, maximumConcurrentTasks: limits.total, maximumTasksPerHost: limits.perHost))
        ownNIOPool = TaskPool(
            configuration: .init(
                transport: ownNIOTransport, maximumConcurrentTasks: limits.total, maximumTasksPerHost: limits.perHost))
        defaultsPool = TaskPool(configuration: .init(transport: defaultsTransport))
    }

    func call(_ client: Client, _ payload: Payload, index: Int) async throws {
        switch (client, payload) {
        case (.raw, .small), (.rawControl, .small): try await raw(Small.self, payload)
        case (.raw, .page), (.rawControl, .page): try await raw(Page.self, payload)
        case (.asyncHTTPClient, .small): try await rawAsyncHTTPClient(Small.self, payload)
        case (.asyncHTTPClient, .page): try await rawAsyncHTTPClient(Page.self, payload)
        case (.asyncHTTPClientDefaults, .small): try await rawAsyncHTTPClient(Small.self, payload, with: defaultsClient)
        case (.asyncHTTPClientDefaults, .page): try await rawAsyncHTTPClient(Page.self, payload, with: defaultsClient)
        case (.networkCoreAsyncHTTPClientDefaults, .small):
            _ = try await defaultsPool.send(endpoint(payload), parser: DecodableParser<Small>(), id: "r\(index)")
        case (.networkCoreAsyncHTTPClientDefaults, .page):
            _ = try await defaultsPool.send(endpoint(payload), parser: DecodableParser<Page>(), id: "r\(index)")
        case (.transport, .small): try await transportAlone(Small.self, payload, through: transport)
        case (.transport, .page): try await transportAlone(Page.self, payload, through: transport)
        case (.asyncHTTPClientTransport, .small): try await transportAlone(Small.self, payload, through: nioTransport)
        case (.asyncHTTPClientTransport, .page): try await transportAlone(Page.self, payload, through: nioTransport)
        case (.networkCore, .small):
            _ = try await pool.send(endpoint(payload), parser: DecodableParser<Small>(), id: "r\(index)")
        case (.networkCore, .page):
            _ = try await pool.send(endpoint(payload), parser: DecodableParser<Page>(), id: "r\(index)")
        case (.networkCoreAsyncHTTPClient, .small):
            _ = try await nioPool.send(endpoint(payload), parser: DecodableParser<Small>(), id: "r\(index)")
        case (.networkCoreAsyncHTTPClient, .page):
            _ = try await nioPool.send(endpoint(payload), parser: DecodableParser<Page>(), id: "r\(index)")
        case (.networkCoreNIOTransport, .small):
            _ = try await ownNIOPool.send(endpoint(payload), parser: DecodableParser<Small>(), id: "r\(index)")
        case (.networkCoreNIOTransport, .page):
            _ = try await ownNIOPool.send(endpoint(payload), parser: DecodableParser<Page>(), id: "r\(index)")
        }
    }

    private func endpoint(_ payload: Payload) -> FileEndpoint { FileEndpoint(baseURL: baseURL, path: payload.rawValue) }

    /// The same request the pool sends: its standard headers (`Accept`, `User-Agent`) included.
    private func raw<T: Decodable>(_ type: T.Type, _ payload: Payload) async throws {
        var request = URLRequest(url: URL(string: "\(baseURL)/\(payload.rawValue)")!)
        request.allHTTPHeaderFields = TaskPool.Configuration.standardHeaders
        let (data, response) = try await session.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
        _ = try JSONDecoder().decode(T.self, from: data)
    }

    /// The same request the pool sends over ``nioTransport`` (the pool's standard headers, and the
    /// `Accept-Encoding` the transport adds), sent by a client configured as the transport's.
    private func rawAsyncHTTPClient<T: Decodable>(
        _ type: T.Type, _ payload: Payload, with client: HTTPClient? = nil
    ) async throws {
        var request = HTTPClientRequest(url: "\(baseURL)/\(payload.rawValue)")
        for (name, value) in TaskPool.Configuration.standardHeaders { request.headers.add(name: name, value: value) }
        request.headers.add(name: "Accept-Encoding", value: "gzip, deflate")
        let response = try await (client ?? asyncHTTPClient).execute(request, timeout: .seconds(60))
        guard response.status == .ok else { throw URLError(.badServerResponse) }
        let body = try await response.body.collect(upTo: 32 << 20)
        _ = try JSONDecoder().decode(T.self, from: Data(body.readableBytesView))
    }

    /// The request the pool builds, sent by one of the pools' transports without the pool.
    private func transportAlone<T: Decodable>(
        _ type: T.Type, _ payload: Payload, through transport: any Transport
    ) async throws {
        let request = try endpoint(payload).urlRequest(defaultHeaders: TaskPool.Configuration.standardHeaders)
        let (data, response) = try await transport.send(request, context: TransportContext(taskID: payload.rawValue))
        guard response.statusCode == 200 else { throw URLError(.badServerResponse) }
        _ = try JSONDecoder().decode(T.self, from: data)
    }
}

// MARK: Suites

struct Row: Encodable {
    let suite: String
    let client: String
    let payload: String?
    let inflight: Int?
    let rps: Double?
    let p50_us: Double?
    let p99_us: Double?
    let cpu_us_per_req: Double?
    let rps_ratio_vs_urlsession: Double?
    let cpu_ratio_vs_urlsession: Double?
    var detail: [String: Double]? = nil
}

func fmt(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }

/// `text` padded with spaces to a table column of `width` characters.
func padded(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }

func throughput(_ options: Options, clients: Clients) async -> [Row] {
    var rows: [Row] = []
    var paired: [String] = []
    var pairedDirect: [String] = []
    print(
        "\n## Throughput: \(options.requests) requests a client after \(options.warmUp) warm-up, \(options.repetitions) repetitions, each in up to \(options.rounds) rounds of turns\n"
    )
    print(
        "payload     in flight  client                        req/s (min/med/max)        p50 µs  p99 µs  CPU µs/req  ×rps vs raw (min/med/max)  ×CPU vs raw"
    )
    for payload in options.payloads {
        for inflight in options.inflight {
            for client in options.clients {
                _ = await measure(count: options.warmUp, inflight: inflight) {
                    try await clients.call(client, payload, index: $0)
                }
            }
            // A repetition's N requests per client run in rounds, the clients taking turns in an order that
            // rotates each round, so that the machine's drift falls on every client alike. A round keeps at
            // least 4 × `inflight` requests, so that filling and draining the window stays a small part of it.
            let rounds = max(1, min(options.rounds, options.requests / (4 * inflight)))
            var samples: [Client: [Sample]] = [:]
            // Besides each repetition's ratios: each round's turn against raw URLSession's in the same round.
            // Paired, so that the machine's drift between rounds cancels out; many, so that their median
            // is precise enough to compare with a target a few percent away.
            var pairedRPS: [Client: [Double]] = [:]
            var pairedCPU: [Client: [Double]] = [:]
            // The pool over AsyncHTTPClient against the same client used directly, paired the same way.
            var pairedAHC: [Client: [Double]] = [:]
            for _ in 0..<options.repetitions {
                var totals: [Client: Block] = [:]
                for round in 0..<rounds {
                    let size = options.requests / rounds + (round < options.requests % rounds ? 1 : 0)
                    var turns: [Client: Sample] = [:]
                    for turn in options.clients.indices {
                        let client = options.clients[(turn + round) % options.clients.count]
                        let block = await measure(count: size, inflight: inflight) {
                            try await clients.call(client, payload, index: $0)
                        }
                        totals[client, default: Block()] += block
                        turns[client] = block.sample
                    }
                    if let direct = turns[.asyncHTTPClient] {
                        for client in [Client.networkCoreAsyncHTTPClient, .networkCoreNIOTransport] {
                            if let sample = turns[client] {
                                pairedAHC[client, default: []].append(sample.rps / direct.rps)
                            }
                        }
                    }
                    // The defaults against the defaults: what a user of each writes.
                    if let direct = turns[.asyncHTTPClientDefaults],
                        let sample = turns[.networkCoreAsyncHTTPClientDefaults]
                    {
                        pairedAHC[.networkCoreAsyncHTTPClientDefaults, default: []].append(sample.rps / direct.rps)
                    }
                    guard let raw = turns[.raw] else { continue }
                    for (client, sample) in turns where client != .raw {
                        pairedRPS[client, default: []].append(sample.rps / raw.rps)
                        pairedCPU[client, default: []].append(sample.cpuPerRequest / raw.cpuPerRequest)
                    }
                }
                for (client, total) in totals { samples[client, default: []].append(total.sample) }
            }
            // Without raw URLSession in the run (`--clients`), there is nothing to compare with.
            let raw = samples[.raw] ?? []
            for client in options.clients {
                let list = samples[client]!
                let rpsRatios = zip(list, raw).map { $0.rps / $1.rps }
                let cpuRatios = zip(list, raw).map { $0.cpuPerRequest / $1.cpuPerRequest }
                let compared = client != .raw && !raw.isEmpty
                let rps = list.map(\.rps)
                var row = Row(
                    suite: "throughput", client: client.rawValue, payload: payload.rawValue, inflight: inflight,
                    rps: median(rps), p50_us: median(list.map(\.p50)), p99_us: median(list.map(\.p99)),
                    cpu_us_per_req: median(list.map(\.cpuPerRequest)),
                    rps_ratio_vs_urlsession: compared ? median(rpsRatios) : nil,
                    cpu_ratio_vs_urlsession: compared ? median(cpuRatios) : nil,
                    detail: !compared
                        ? ["rps_min": rps.min()!, "rps_max": rps.max()!]
                        : [
                            "rps_min": rps.min()!, "rps_max": rps.max()!, "rps_ratio_min": rpsRatios.min()!,
                            "rps_ratio_max": rpsRatios.max()!, "cpu_ratio_min": cpuRatios.min()!,
                            "cpu_ratio_max": cpuRatios.max()!,
                        ])
                if let rpsPaired = MedianInterval(pairedRPS[client] ?? []),
                    let cpuPaired = MedianInterval(pairedCPU[client] ?? [])
                {
                    let pairedRounds = pairedRPS[client]?.count ?? 0
                    row.detail?["paired_rounds"] = Double(pairedRounds)
                    for (name, interval) in [("rps", rpsPaired), ("cpu", cpuPaired)] {
                        row.detail?["paired_\(name)_ratio"] = interval.median
                        row.detail?["paired_\(name)_ratio_low"] = interval.low
                        row.detail?["paired_\(name)_ratio_high"] = interval.high
                    }
                    paired.append(
                        padded(payload.rawValue, 12) + padded(String(inflight), 11) + padded(client.rawValue, 30)
                            + padded(String(pairedRounds), 8) + padded(rpsPaired.description, 25)
                            + cpuPaired.description)
                }
                if let versusDirect = MedianInterval(pairedAHC[client] ?? []) {
                    row.detail?["paired_rps_ratio_vs_asynchttpclient"] = versusDirect.median
                    row.detail?["paired_rps_ratio_vs_asynchttpclient_low"] = versusDirect.low
                    row.detail?["paired_rps_ratio_vs_asynchttpclient_high"] = versusDirect.high
                    pairedDirect.append(
                        padded(payload.rawValue, 12) + padded(String(inflight), 11) + padded(client.rawValue, 30)
                            + padded(String(pairedAHC[client]?.count ?? 0), 8) + versusDirect.description)
                }
                rows.append(row)
                let ratios =
                    !compared
                    ? "-"
                    : "\(fmt(rpsRatios.min()!, 3))/\(fmt(median(rpsRatios), 3))/\(fmt(rpsRatios.max()!, 3))"
                print(
                    padded(payload.rawValue, 12) + padded(String(inflight), 11) + padded(client.rawValue, 30)
                        + padded("\(fmt(rps.min()!))/\(fmt(median(rps)))/\(fmt(rps.max()!))", 27)
                        + padded(fmt(row.p50_us!), 8) + padded(fmt(row.p99_us!), 8)
                        + padded(fmt(row.cpu_us_per_req!), 12)
                        + padded(ratios, 27) + (compared ? fmt(median(cpuRatios), 3) : "-"))
            }
            if options.ceiling, let row = wrk(payload, inflight: inflight, baseURL: options.baseURL) {
                rows.append(row)
            }
        }
    }
    if !paired.isEmpty {
        print(
            "\nThe same ratios by round: each round's turn against raw URLSession's in that round, the median over all rounds\n"
                + "and an interval that holds the true median with 95% confidence (once there are about 20 rounds).\n")
        print(
            "payload     in flight  client                        rounds  ×rps vs raw (95% CI)     ×CPU vs raw (95% CI)"
        )
        paired.forEach { print($0) }
    }
    if !pairedDirect.isEmpty {
        print(
            "\nThe pool over AsyncHTTPClient against the same client used directly (the defaults arm against AsyncHTTPClient with its defaults), by round, as above.\n"
        )
        print("payload     in flight  client                        rounds  ×rps vs AsyncHTTPClient (95% CI)")
        pairedDirect.forEach { print($0) }
    }
    return rows
}

/// nginx's own ceiling on this machine for `payload` at `inflight` connections: `wrk` (Debian's package,
/// which `Benchmarks/run` installs) for 5 s, on as many threads as the machine has cores (at most one a
/// connection). It reads the answers and does nothing with them, so no client can reach it. `nil`, with a
/// note, when `wrk` cannot run.
func wrk(_ payload: Payload, inflight: Int, baseURL: String) -> Row? {
    let threads = max(1, min(ProcessInfo.processInfo.activeProcessorCount, inflight))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["wrk", "-t\(threads)", "-c\(inflight)", "-d5s", "\(baseURL)/\(payload.rawValue)"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch {
        print("(wrk could not run: \(error))")
        return nil
    }
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0,
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Requests/sec:") }),
        let rps = Double(line.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces))
    else {
        print("(wrk gave no rate: exit \(process.terminationStatus))")
        return nil
    }
    print(padded(payload.rawValue, 12) + padded(String(inflight), 11) + padded("wrk (nginx's ceiling)", 30) + fmt(rps))
    return Row(
        suite: "throughput", client: "wrk", payload: payload.rawValue, inflight: inflight, rps: rps, p50_us: nil,
        p99_us: nil, cpu_us_per_req: nil, rps_ratio_vs_urlsession: nil, cpu_ratio_vs_urlsession: nil,
        detail: ["threads": Double(threads), "seconds": 5])
}

/// How much the process keeps after many requests: raw URLSession first, then NetworkCore over it,
/// each after a warm-up, 64 in flight, against nginx (another process, so only the client counts).
func memoryGrowth(clients: Clients) async -> [Row] {
    let count = 20_000
    print("\n## Memory kept after \(count) requests (small.json, 64 in flight, after 3,000 warm-up requests)\n")
    print("client                        resident before  after        growth   bytes kept per request")
    var rows: [Row] = []
    for client in [Client.raw, .networkCore] {
        _ = await measure(count: 3_000, inflight: 64) { try await clients.call(client, .small, index: $0) }
        let before = residentBytes()
        _ = await measure(count: count, inflight: 64) { try await clients.call(client, .small, index: $0) }
        try? await Task.sleep(nanoseconds: 500_000_000)
        let after = residentBytes()
        let growth = Double(after - before) / Double(before)
        let perRequest = Double(after - before) / Double(count)
        print(
            padded(client.rawValue, 30) + padded("\(before / 1024) KiB", 17) + padded("\(after / 1024) KiB", 13)
                + padded(String(format: "%+.1f%%", growth * 100), 9)
                + fmt(perRequest))
        rows.append(
            Row(
                suite: "memory", client: client.rawValue, payload: Payload.small.rawValue, inflight: 64, rps: nil,
                p50_us: nil, p99_us: nil, cpu_us_per_req: nil, rps_ratio_vs_urlsession: nil,
                cpu_ratio_vs_urlsession: nil,
                detail: [
                    "requests": Double(count), "resident_before": Double(before), "resident_after": Double(after),
                    "growth": growth, "bytes_kept_per_request": perRequest,
                ]))
    }
    return rows
}

func parseCost(_ options: Options) async throws -> [Row] {
    print(
        "\n## Parse cost: DecodableParser vs JSONDecoder on the same TMDB-like page (median of \(options.repetitions))\n"
    )
    let (bytes, _) = try await URLSession(configuration: .ephemeral).data(
        from: URL(string: "\(options.baseURL)/page.json")!)
    let iterations = 2_000
    var ratios: [Double] = []
    var plain: [Double] = []
    var parser: [Double] = []
    let decodable = DecodableParser<Page>()
    for _ in 0..<options.repetitions {
        var start = now()
        for _ in 0..<iterations { _ = try JSONDecoder().decode(Page.self, from: bytes) }
        let a = Double(now() - start) / Double(iterations)
        start = now()
        for _ in 0..<iterations { _ = try decodable.parse(bytes) }
        let b = Double(now() - start) / Double(iterations)
        plain.append(a)
        parser.append(b)
        ratios.append(b / a)
    }
    print("page bytes  JSONDecoder µs  DecodableParser µs  ratio (min/med/max)")
    print(
        padded("\(bytes.count)", 12) + padded(fmt(median(plain) / 1000, 1), 16)
            + padded(fmt(median(parser) / 1000, 1), 20)
            + "\(fmt(ratios.min()!, 3))/\(fmt(median(ratios), 3))/\(fmt(ratios.max()!, 3))")
    return [
        Row(
            suite: "parse", client: "DecodableParser", payload: Payload.page.rawValue, inflight: nil, rps: nil,
            p50_us: nil, p99_us: nil, cpu_us_per_req: nil, rps_ratio_vs_urlsession: nil, cpu_ratio_vs_urlsession: nil,
            detail: [
                "jsondecoder_us": median(plain) / 1000, "parser_us": median(parser) / 1000,
                "ratio_median": median(ratios), "ratio_min": ratios.min()!, "ratio_max": ratios.max()!,
            ])
    ]
}

// MARK: Main

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
print("# NetworkCore benchmarks, \(ProcessInfo.processInfo.activeProcessorCount) cores, against \(options.baseURL)")
let clients = Clients(baseURL: options.baseURL)
var rows: [Row] = []
if options.suites.contains("throughput") { rows += await throughput(options, clients: clients) }
// Memory before the pool suite, whose 100,000 parked tasks leave the process much larger.
if options.suites.contains("memory") { rows += await memoryGrowth(clients: clients) }
if options.suites.contains("pool") { rows += await poolScale(options) }
if options.suites.contains("queue") { rows += await queueScale(options) }
if options.suites.contains("cache") { rows += try await cacheHits(options) }
if options.suites.contains("inspector") { rows += await inspectorCost(options) }
if options.suites.contains("parse") { rows += try await parseCost(options) }
if options.suites.contains("events") { rows += try eventStream(options) }
if options.suites.contains("websocket") { rows += try await webSocketThroughput(options) }
if options.suites.contains("http2") { rows += try await http2Throughput(options) }
if options.suites.contains("transfers") {
    precondition(!options.www.isEmpty, "the transfers suite needs --www, nginx's document root")
    rows += try await transfers(options)
}
try await clients.nioTransport.shutdown()
try await clients.asyncHTTPClient.shutdown().get()  // top-level code picks the future-returning overload
try await clients.defaultsClient.shutdown().get()
try await clients.defaultsTransport.shutdown()
await clients.ownNIOTransport.shutdown()
let encoder = JSONEncoder()
encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
let output = URL(fileURLWithPath: options.output)
try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
try encoder.encode(rows).write(to: output)
print("\nwrote \(rows.count) rows to \(options.output)")
