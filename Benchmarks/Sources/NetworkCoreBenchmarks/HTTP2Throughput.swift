import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import NetworkCore
import NetworkCoreNIO

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The http2 suite: `small.json` over HTTP/2 from nginx's TLS server (`--h2-base-url`, its certificate in
/// `--h2-cert`), at each `--inflight`, by the pool over NIOTransport and by AsyncHTTPClient used directly (its
/// HTTP/2, `execute`, `collect`, `JSONDecoder`), in rounds of turns as the throughput suite runs; then
/// `h2load` (Debian's `nghttp2-client`) for the protocol's ceiling on one connection. The ratio that counts
/// is the pool's rate over AsyncHTTPClient's, paired by round.
func http2Throughput(_ options: Options) async throws -> [Row] {
    guard let base = options.http2BaseURL, let certificate = options.http2Certificate else {
        print("\n(the http2 suite needs --h2-base-url and --h2-cert: Benchmarks/run passes both)")
        return []
    }
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .file(certificate)
    let transport = NIOTransport(configuration: .init(tls: tls))
    // The pool runs as many tasks for the host as the server's streams allow (it tells the pool).
    let pool = TaskPool(configuration: .init(transport: transport, maximumConcurrentTasks: 256))
    var configuration = HTTPClient.Configuration()
    configuration.tlsConfiguration = tls
    configuration.redirectConfiguration = .disallow
    let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    let endpoint = FileEndpoint(baseURL: base, path: Payload.small.rawValue)
    let calls: [(name: String, call: @Sendable (Int) async throws -> Void)] = [
        (
            "AsyncHTTPClient (HTTP/2)",
            { _ in
                var request = HTTPClientRequest(url: "\(base)/\(Payload.small.rawValue)")
                for (name, value) in TaskPool.Configuration.standardHeaders {
                    request.headers.add(name: name, value: value)
                }
                request.headers.add(name: "Accept-Encoding", value: "gzip, deflate")
                let response = try await client.execute(request, timeout: .seconds(60))
                guard response.status == .ok else { throw URLError(.badServerResponse) }
                let body = try await response.body.collect(upTo: 32 << 20)
                _ = try JSONDecoder().decode(Small.self, from: Data(body.readableBytesView))
            }
        ),
        (
            "NetworkCore/NIOTransport (HTTP/2)",
            { index in _ = try await pool.send(endpoint, parser: DecodableParser<Small>(), id: "h2.\(index)") }
        ),
    ]
    // Both speak HTTP/2 with the server, checked once before measuring.
    let first = try await pool.send(endpoint)
    var check = HTTPClientRequest(url: "\(base)/\(Payload.small.rawValue)")
    check.method = .GET
    let direct = try await client.execute(check, timeout: .seconds(10))
    _ = try await direct.body.collect(upTo: 1 << 20)
    guard first.head.httpVersion == "HTTP/2.0", direct.version.major == 2 else {
        print(
            "\n(the http2 suite: the server did not answer over HTTP/2: \(first.head.httpVersion ?? "?"), \(direct.version))"
        )
        return []
    }
    print(
        "\n## HTTP/2: \(options.requests) requests a client a repetition, \(options.repetitions) repetitions in rounds of turns, nginx over TLS\n"
    )
    print("in flight  client                                req/s (min/med/max)        p50 µs  p99 µs  CPU µs/req")
    var rows: [Row] = []
    var paired: [String] = []
    for inflight in options.inflight {
        for (_, call) in calls { _ = await measure(count: options.warmUp, inflight: inflight, call) }
        let rounds = max(1, min(options.rounds, options.requests / (4 * inflight)))
        var samples: [Int: [Sample]] = [:]
        var ratios: [Double] = []
        for _ in 0..<options.repetitions {
            var totals: [Int: Block] = [:]
            for round in 0..<rounds {
                let size = options.requests / rounds + (round < options.requests % rounds ? 1 : 0)
                var turns: [Int: Sample] = [:]
                for turn in calls.indices {
                    let index = (turn + round) % calls.count
                    let block = await measure(count: size, inflight: inflight, calls[index].call)
                    totals[index, default: Block()] += block
                    turns[index] = block.sample
                }
                if let direct = turns[0], let ours = turns[1] { ratios.append(ours.rps / direct.rps) }
            }
            for (index, total) in totals { samples[index, default: []].append(total.sample) }
        }
        for index in calls.indices {
            let list = samples[index]!
            let rps = list.map(\.rps)
            var row = Row(
                suite: "http2", client: calls[index].name, payload: Payload.small.rawValue, inflight: inflight,
                rps: median(rps), p50_us: median(list.map(\.p50)), p99_us: median(list.map(\.p99)),
                cpu_us_per_req: median(list.map(\.cpuPerRequest)), rps_ratio_vs_urlsession: nil,
                cpu_ratio_vs_urlsession: nil, detail: ["rps_min": rps.min()!, "rps_max": rps.max()!])
            if index == 1, let interval = MedianInterval(ratios) {
                row.detail?["paired_rps_ratio_vs_asynchttpclient"] = interval.median
                row.detail?["paired_rps_ratio_vs_asynchttpclient_low"] = interval.low
                row.detail?["paired_rps_ratio_vs_asynchttpclient_high"] = interval.high
                row.detail?["paired_rounds"] = Double(ratios.count)
                paired.append(padded(String(inflight), 11) + padded(String(ratios.count), 8) + interval.description)
            }
            rows.append(row)
            print(
                padded(String(inflight), 11) + padded(calls[index].name, 38)
                    + padded("\(fmt(rps.min()!))/\(fmt(median(rps)))/\(fmt(rps.max()!))", 27)
                    + padded(fmt(row.p50_us!), 8) + padded(fmt(row.p99_us!), 8) + fmt(row.cpu_us_per_req!))
        }
        if let row = h2load(url: "\(base)/\(Payload.small.rawValue)", inflight: inflight) { rows.append(row) }
    }
    print("\nNetworkCore/NIOTransport over AsyncHTTPClient, both on HTTP/2, by round (median, 95% interval)\n")
    print("in flight  rounds  ×rps vs AsyncHTTPClient")
    paired.forEach { print($0) }
    try await client.shutdown()
    await transport.shutdown()
    return rows
}

/// nginx's ceiling over HTTP/2 on this machine: `h2load` (Debian's `nghttp2-client`, which `Benchmarks/run`
/// installs) on one connection with `inflight` streams at once, 5 s after 1 s of warm-up. It reads the
/// answers and does nothing with them. `nil`, with a note, when it cannot run.
func h2load(url: String, inflight: Int) -> Row? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["h2load", "-c1", "-m\(inflight)", "-D5", "--warm-up-time=1", url]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch {
        print("(h2load could not run: \(error))")
        return nil
    }
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    // "finished in 5.00s, 41234.40 req/s, 12.3MB/s"
    guard process.terminationStatus == 0,
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("finished in") }),
        let field = line.split(separator: ",").dropFirst().first,
        let rps = Double(field.trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
    else {
        print("(h2load gave no rate: exit \(process.terminationStatus))")
        return nil
    }
    print(padded(String(inflight), 11) + padded("h2load (nginx's ceiling)", 38) + fmt(rps))
    return Row(
        suite: "http2", client: "h2load", payload: Payload.small.rawValue, inflight: inflight, rps: rps, p50_us: nil,
        p99_us: nil, cpu_us_per_req: nil, rps_ratio_vs_urlsession: nil, cpu_ratio_vs_urlsession: nil,
        detail: ["connections": 1, "seconds": 5])
}
