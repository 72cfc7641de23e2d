// A soak: many requests through one pool, its resident memory read at every step, to show whether it stays
// flat. Run by `Benchmarks/soak`, which starts nginx and writes the figures into Benchmarks/NOTES.md.
//
// Usage: Soak URL urlsession|asynchttpclient REQUESTS INFLIGHT STEP WARMUP
// Sends REQUESTS GETs of URL (a small JSON document, decoded), INFLIGHT at a time, through a TaskPool over
// URLSessionTransport or AsyncHTTPClientTransport. After every STEP requests, prints one JSON line: the
// requests done, the seconds, the resident memory as it is and after returning free heap pages to the system
// (`malloc_trim`). Then one line with the verdict: after the first WARMUP requests, resident memory stays
// within 5% of its level then (both readings, at every step). Exits 0 when flat and every request succeeded.
//
// It links FoundationNetworkingFixes: without it, FoundationNetworking keeps about 180 bytes of every request
// for good (see Docs/Reliability.md, "Not guaranteed"), and no process that uses URLSession on Linux stays flat.
import Foundation
import FoundationNetworkingFixes
import NetworkCore
import NetworkCoreAsyncHTTPClient
import ResidentMemory

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Small: Decodable, Sendable {
    let id: Int
    let name: String
}

struct Document: Endpoint {
    let baseURL: String
    let path: String
}

/// Writes a line to the standard output at once (a pipe would hold `print`'s until the end).
func emit(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 6, let url = URL(string: arguments[0]),
    ["urlsession", "asynchttpclient"].contains(arguments[1]),
    let total = Int(arguments[2]), let inflight = Int(arguments[3]), let step = Int(arguments[4]),
    let warmUp = Int(arguments[5]), step > 0, warmUp % step == 0, total > warmUp
else {
    FileHandle.standardError.write(
        Data(
            "usage: Soak URL urlsession|asynchttpclient REQUESTS INFLIGHT STEP WARMUP (WARMUP a multiple of STEP)\n"
                .utf8))
    exit(2)
}
let client = arguments[1]
var nio: AsyncHTTPClientTransport?
let transport: any Transport
if client == "urlsession" {
    let configuration = URLSessionConfiguration.default
    configuration.httpMaximumConnectionsPerHost = inflight
    transport = URLSessionTransport(configuration: configuration)
} else {
    var configuration = AsyncHTTPClientTransport.defaultConfiguration
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = inflight
    nio = AsyncHTTPClientTransport(configuration: configuration)
    transport = nio!
}
let pool = TaskPool(
    configuration: .init(transport: transport, maximumConcurrentTasks: inflight, maximumTasksPerHost: inflight))
let endpoint = Document(baseURL: url.deletingLastPathComponent().absoluteString, path: url.lastPathComponent)
let parser = DecodableParser<Small>()

struct Step {
    let requests: Int
    let seconds: Double
    let resident: Int
    let trimmed: Int
}
var steps: [Step] = []
var failures = 0
let started = Date()
await withTaskGroup(of: Bool.self) { group in
    var launched = 0
    var done = 0
    func launch() {
        let index = launched
        launched += 1
        group.addTask {
            do throws(NetworkError) {
                _ = try await pool.send(endpoint, parser: parser, id: "soak-\(index)")
                return true
            } catch {
                return false
            }
        }
    }
    while launched < min(inflight, total) { launch() }
    while let succeeded = await group.next() {
        done += 1
        if !succeeded { failures += 1 }
        if launched < total { launch() }
        if done % step == 0 {
            let entry = Step(
                requests: done, seconds: Date().timeIntervalSince(started), resident: currentResident(),
                trimmed: residentBytes())
            steps.append(entry)
            emit(
                "{\"client\":\"\(client)\",\"requests\":\(entry.requests),\"seconds\":\(String(format: "%.1f", entry.seconds)),"
                    + "\"residentKB\":\(entry.resident / 1024),\"trimmedKB\":\(entry.trimmed / 1024)}")
        }
    }
}
try? await nio?.shutdown()

let seconds = Date().timeIntervalSince(started)
let level = steps.first { $0.requests == warmUp }!
let after = steps.filter { $0.requests > warmUp }
let worst = after.map { Double($0.resident) / Double(level.resident) }.max() ?? 1
let worstTrimmed = after.map { Double($0.trimmed) / Double(level.trimmed) }.max() ?? 1
let last = steps.last!
let flat = worst <= 1.05 && worstTrimmed <= 1.05
emit(
    "{\"client\":\"\(client)\",\"summary\":true,\"requests\":\(total),\"inflight\":\(inflight),\"failures\":\(failures),"
        + "\"seconds\":\(String(format: "%.1f", seconds)),\"requestsPerSecond\":\(Int(Double(total) / seconds)),"
        + "\"warmUp\":\(warmUp),\"levelKB\":\(level.resident / 1024),\"lastKB\":\(last.resident / 1024),"
        + "\"worstGrowth\":\(String(format: "%.4f", worst - 1)),\"levelTrimmedKB\":\(level.trimmed / 1024),"
        + "\"lastTrimmedKB\":\(last.trimmed / 1024),\"worstTrimmedGrowth\":\(String(format: "%.4f", worstTrimmed - 1)),"
        + "\"hostCheckReplaced\":\(nc_curl_host_check_is_replaced()),\"flat\":\(flat)}")
exit(flat && failures == 0 ? 0 : 1)
