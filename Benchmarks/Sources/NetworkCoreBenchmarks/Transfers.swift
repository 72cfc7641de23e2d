// The transfers suite: a large file downloaded to disk and uploaded from disk over loopback, through
// NetworkCore's pool and with curl, against the same nginx; and Server-Sent Events through the parser
// (the EventStream executable, which counts allocations).
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

/// A file on nginx's side: `GET /transfer/NAME` serves it, `PUT /upload/NAME` stores a body there.
struct TransferEndpoint: Endpoint {
    let baseURL: String
    let path: String
    var method: HTTPMethod = .get
    var task: HTTPTask = .plain
    var timeout: TimeInterval? { 600 }
}

/// Raw `URLSession`, no NetworkCore: a data task whose delegate writes each chunk to a file as it
/// comes, the least a download to disk over FoundationNetworking does.
final class RawDownload: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: `handle` and `continuation` are touched on the session's serial queue only.
    private var handle: FileHandle?
    private var continuation: CheckedContinuation<Int, any Error>?

    func download(_ url: URL, to destination: URL) async throws -> Int {
        guard FileManager.default.createFile(atPath: destination.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        handle = try FileHandle(forWritingTo: destination)
        let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        return try await withCheckedThrowingContinuation { continuation in
            self.continuation = continuation
            session.dataTask(with: url).resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        try? handle?.write(contentsOf: data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? handle?.close()
        let status = (task.response as? HTTPURLResponse)?.statusCode ?? 0
        if let error { continuation?.resume(throwing: error) } else { continuation?.resume(returning: status) }
        continuation = nil
    }
}

/// Raw AsyncHTTPClient, no NetworkCore: each body chunk written to a file as it comes, with the client the
/// NetworkCore/AHC side uses.
func rawDownload(_ url: String, to destination: URL, with client: HTTPClient) async throws -> UInt {
    guard FileManager.default.createFile(atPath: destination.path, contents: nil) else {
        throw CocoaError(.fileWriteUnknown)
    }
    let handle = try FileHandle(forWritingTo: destination)
    defer { try? handle.close() }
    let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(600))
    for try await buffer in response.body { try handle.write(contentsOf: Data(buffer.readableBytesView)) }
    return response.status.code
}

/// The largest resident size seen while `body` runs, sampled every 5 ms from another thread.
func peakResident<T>(during body: () async throws -> T) async rethrows -> (T, peak: Int) {
    let peak = Locked(0)
    let running = Locked(true)
    let sampler = Thread {
        while running.withLock({ $0 }) {
            let resident = currentResident()
            peak.withLock { $0 = max($0, resident) }
            usleep(5_000)
        }
    }
    sampler.start()
    let value = try await body()
    running.withLock { $0 = false }
    let resident = currentResident()
    return (value, peak.withLock { max($0, resident) })
}

/// A value behind a lock.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}

/// Runs a program to its end; returns its exit status.
@discardableResult
func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Int32 {
    fflush(nil)  // what this process printed comes before what the program prints
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// Writes `megabytes` MiB of pseudo-random bytes (one random MiB repeated) to `url`, unless a file of
/// that size is there.
func makeSourceFile(at url: URL, megabytes: Int) throws {
    let size = megabytes << 20
    if let existing = try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int, existing == size {
        return
    }
    var generator = SystemRandomNumberGenerator()
    let block = Data((0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
    }
    let handle = try FileHandle(forWritingTo: url)
    for _ in 0..<megabytes { try handle.write(contentsOf: block) }
    try handle.close()
}

/// The transfers suite: for `--transfer-mb` MiB (1,024 unless told), in `repetitions` rounds, each of curl
/// and NetworkCore (a pool over `URLSessionTransport`, one over `AsyncHTTPClientTransport`, one over
/// `NIOTransport`) downloads the file to disk and uploads it back,
/// taking turns in an order that alternates by round. Reports throughput, the ratio to curl, and the
/// resident memory NetworkCore's process grew by during each transfer.
func transfers(_ options: Options) async throws -> [Row] {
    let megabytes = options.transferMegabytes
    let size = megabytes << 20
    let www = URL(fileURLWithPath: options.www)
    let transferDirectory = www.appendingPathComponent("transfer")
    let uploads = www.appendingPathComponent("upload")
    try FileManager.default.createDirectory(at: transferDirectory, withIntermediateDirectories: true)
    let source = transferDirectory.appendingPathComponent("big.bin")
    print("\n## Transfers: \(megabytes) MiB to a file and from a file, curl and NetworkCore taking turns\n")
    try makeSourceFile(at: source, megabytes: megabytes)
    // Downloads go beside nginx's files (in memory when nginx.sh could put them there), not to the disk.
    let scratch = www.deletingLastPathComponent().appendingPathComponent("downloads-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let destination = scratch.appendingPathComponent("big.bin")
    let pool = TaskPool(configuration: .init(transport: URLSessionTransport()))
    let chunkedPool = TaskPool(configuration: .init(transport: URLSessionTransport(fileUploads: .chunked)))
    let ahcTransport = AsyncHTTPClientTransport()
    let ahcPool = TaskPool(configuration: .init(transport: ahcTransport))
    let nioTransport = NIOTransport()
    let nioPool = TaskPool(configuration: .init(transport: nioTransport))
    let curl = "/usr/bin/curl"

    enum Direction: String, CaseIterable { case download, upload }
    enum Side: String, CaseIterable {
        case curl
        case urlSession = "URLSession"
        case networkCore = "NetworkCore"
        case chunked = "NetworkCore, chunked"
        case rawAsyncHTTPClient = "AsyncHTTPClient"
        case asyncHTTPClient = "NetworkCore/AHC"
        case nio = "NetworkCore/NIO"

        /// Who takes part: raw URLSession and raw AsyncHTTPClient in downloads (the least each engine does),
        /// a chunked body in uploads.
        static func taking(_ direction: Direction) -> [Side] {
            allCases.filter {
                direction == .download ? $0 != .chunked : $0 != .urlSession && $0 != .rawAsyncHTTPClient
            }
        }
    }
    struct Key: Hashable {
        let direction: Direction
        let side: Side
    }
    var seconds: [Key: [Double]] = [:]
    var growth: [Key: [Int]] = [:]
    var ratios: [Key: [Double]] = [:]

    for round in 0..<options.repetitions {
        for direction in Direction.allCases {
            var times: [Side: Double] = [:]
            let sides = Side.taking(direction)
            for side in round.isMultiple(of: 2) ? sides : sides.reversed() {
                let key = Key(direction: direction, side: side)
                try? FileManager.default.removeItem(at: destination)
                let name = "big-\(side).bin".replacingOccurrences(of: " ", with: "")
                let uploaded = uploads.appendingPathComponent(name)
                try? FileManager.default.removeItem(at: uploaded)
                let url = "\(options.baseURL)/\(direction == .download ? "transfer/big.bin" : "upload/\(name)")"
                let start = now()
                switch (side, direction) {
                case (.curl, .download):
                    let status = try run(curl, ["-sS", "--fail", "-o", destination.path, url])
                    precondition(status == 0, "curl download failed: \(status)")
                case (.curl, .upload):
                    let status = try run(curl, ["-sS", "--fail", "-o", "/dev/null", "-T", source.path, url])
                    precondition(status == 0, "curl upload failed: \(status)")
                case (.urlSession, _):
                    let status = try await RawDownload().download(URL(string: url)!, to: destination)
                    precondition(status == 200, "URLSession download: status \(status)")
                case (.rawAsyncHTTPClient, _):
                    let status = try await rawDownload(url, to: destination, with: ahcTransport.client)
                    precondition(status == 200, "AsyncHTTPClient download: status \(status)")
                case (.networkCore, .download), (.chunked, .download), (.asyncHTTPClient, .download), (.nio, .download):
                    let before = currentResident()
                    let (response, peak) = try await peakResident {
                        try await (side == .asyncHTTPClient ? ahcPool : side == .nio ? nioPool : pool).download(
                            TransferEndpoint(baseURL: options.baseURL, path: "transfer/big.bin"), to: destination)
                    }
                    precondition(response.statusCode == 200, "download: status \(response.statusCode)")
                    growth[key, default: []].append(peak - before)
                case (.networkCore, .upload), (.chunked, .upload), (.asyncHTTPClient, .upload), (.nio, .upload):
                    let before = currentResident()
                    let endpoint = TransferEndpoint(
                        baseURL: options.baseURL, path: "upload/\(name)", method: .put,
                        task: .file(source, contentType: "application/octet-stream"))
                    let (response, peak) = try await peakResident {
                        let sender = [.chunked: chunkedPool, .asyncHTTPClient: ahcPool, .nio: nioPool][side] ?? pool
                        return try await sender.send(endpoint)
                    }
                    precondition((200..<300).contains(response.statusCode), "upload: status \(response.statusCode)")
                    growth[key, default: []].append(peak - before)
                }
                let elapsed = Double(now() - start) / 1e9
                times[side] = elapsed
                seconds[key, default: []].append(elapsed)
                // Every byte arrived: the size always, the content in the first round.
                let written = direction == .download ? destination : uploaded
                let count = (try? FileManager.default.attributesOfItem(atPath: written.path)[.size] as? Int) ?? -1
                precondition(count == size, "\(side) \(direction): \(count) bytes of \(size)")
                if round == 0 {
                    let same = try run("/usr/bin/cmp", ["-s", source.path, written.path]) == 0
                    precondition(same, "\(side) \(direction): the content differs")
                }
                try? FileManager.default.removeItem(at: uploaded)
            }
            for side in sides where side != .curl {
                ratios[Key(direction: direction, side: side), default: []].append(times[.curl]! / times[side]!)
            }
        }
    }
    try? FileManager.default.removeItem(at: source)
    try? FileManager.default.removeItem(at: destination)

    try await ahcTransport.shutdown()
    await nioTransport.shutdown()
    print("direction  client                MB/s (min/median/max)   ×curl (min/median/max)   resident growth, MB (max)")
    var rows: [Row] = []
    for direction in Direction.allCases {
        for side in Side.taking(direction) {
            let key = Key(direction: direction, side: side)
            let rates = seconds[key]!.map { Double(size) / $0 / 1e6 }
            let ratio = ratios[key] ?? []
            let peak = growth[key].map { Double($0.max()!) / 1e6 }
            print(
                padded(direction.rawValue, 11) + padded(side.rawValue, 22)
                    + padded("\(fmt(rates.min()!))/\(fmt(median(rates)))/\(fmt(rates.max()!))", 24)
                    + padded(
                        ratio.isEmpty
                            ? "-" : "\(fmt(ratio.min()!, 3))/\(fmt(median(ratio), 3))/\(fmt(ratio.max()!, 3))", 25)
                    + (peak.map { fmt($0, 1) } ?? "-"))
            var detail: [String: Double] = [
                "megabytes": Double(megabytes), "mb_per_second": median(rates), "mb_per_second_min": rates.min()!,
                "mb_per_second_max": rates.max()!,
            ]
            if !ratio.isEmpty {
                detail["ratio_vs_curl"] = median(ratio)
                detail["ratio_vs_curl_min"] = ratio.min()!
                detail["ratio_vs_curl_max"] = ratio.max()!
            }
            if let peak { detail["resident_growth_mb_max"] = peak }
            rows.append(
                Row(
                    suite: "transfers-\(direction.rawValue)", client: side.rawValue, payload: nil, inflight: 1,
                    rps: nil, p50_us: nil, p99_us: nil, cpu_us_per_req: nil, rps_ratio_vs_urlsession: nil,
                    cpu_ratio_vs_urlsession: nil, detail: detail))
        }
    }
    return rows
}

/// Runs the EventStream executable (built beside this one) and reads its figures.
func eventStream(_ options: Options) throws -> [Row] {
    print("")
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("EventStream")
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("eventstream-\(getpid()).json")
    defer { try? FileManager.default.removeItem(at: output) }
    let status = try run(
        binary.path, ["--events", String(options.sseEvents)], environment: ["EVENTSTREAM_OUTPUT": output.path])
    precondition(status == 0, "EventStream failed: \(status)")
    let detail = try JSONDecoder().decode([String: Double].self, from: Data(contentsOf: output))
    return [
        Row(
            suite: "events", client: "NetworkCore", payload: nil, inflight: nil, rps: nil, p50_us: nil, p99_us: nil,
            cpu_us_per_req: nil, rps_ratio_vs_urlsession: nil, cpu_ratio_vs_urlsession: nil, detail: detail)
    ]
}
