// Server-Sent Events through NetworkCore's parser: N events (100,000 unless told) delivered in chunks by
// a transport with no network, read three ways through a pool: as chunks (`pool.stream`), as lines
// (`.lines`) and as events (`pool.events`). Reports events a second and what the allocator was asked
// for per event (bytes and allocations, counted by AllocationCounter, which interposes malloc).
// `Benchmarks/run --suites events` runs it.
//
//   EventStream [--events N] [--chunk BYTES] [--repetitions R]
import AllocationCounter
import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

var eventCount = 100_000
var chunkSize = 16 * 1024
var repetitions = 5
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    let value = arguments.next().flatMap { Int($0) }
    switch (argument, value) {
    case ("--events", let value?) where value > 0: eventCount = value
    case ("--chunk", let value?) where value > 0: chunkSize = value
    case ("--repetitions", let value?) where value > 0: repetitions = value
    default:
        FileHandle.standardError.write(Data("usage: EventStream [--events N] [--chunk BYTES] [--repetitions R]\n".utf8))
        exit(2)
    }
}

/// The stream: mostly one-line JSON events with an id and a type, every tenth a two-line message, and a
/// comment every fiftieth, as a price feed with keep-alives would send.
func makeBody(events: Int) -> Data {
    var text = "retry: 3000\n\n"
    text.reserveCapacity(events * 80)
    for index in 0..<events {
        if index % 50 == 0 { text += ": keep-alive\n" }
        if index % 10 == 9 {
            text += "data: line one of message \(index)\ndata: line two\n\n"
        } else {
            text +=
                "id: \(index)\nevent: price\ndata: {\"symbol\":\"NC\",\"price\":\(index).25,\"volume\":\(index * 3)}\n\n"
        }
    }
    return Data(text.utf8)
}

/// A transport with no network that answers every request with `body` in chunks of `chunkSize`, from a
/// thread of its own, pausing while the pool asks it to (a consumer that falls behind).
struct ChunkedTransport: Transport {
    let body: Data
    let chunkSize: Int

    func start(_ request: URLRequest, body _: RequestBody, events: TransportEvents) -> any TransportControl {
        let feed = Feed()
        let head = HTTPURLResponse(
            url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1",
            headerFields: ["Content-Type": "text/event-stream"])!
        Thread.detachNewThread { [body, chunkSize] in
            guard events.receive(head: head) else { return }
            var offset = 0
            while offset < body.count {
                guard feed.waitWhilePaused() else { return events.fail(CancellationError()) }
                let end = min(offset + chunkSize, body.count)
                guard events.receive(body: body.subdata(in: offset..<end)) else { return }
                offset = end
            }
            events.finish()
        }
        return feed
    }
}

/// The feed's control: pause, resume, cancel.
final class Feed: TransportControl, @unchecked Sendable {
    // @unchecked Sendable: `paused` and `cancelled` are guarded by `condition`.
    private let condition = NSCondition()
    private var paused = false
    private var cancelled = false

    /// Waits while paused; returns `false` once cancelled.
    func waitWhilePaused() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while paused, !cancelled { condition.wait() }
        return !cancelled
    }

    func cancel() { change { $0.cancelled = true } }
    func pauseReceiving() { change { $0.paused = true } }
    func resumeReceiving() { change { $0.paused = false } }

    private func change(_ body: (Feed) -> Void) {
        condition.lock()
        body(self)
        condition.broadcast()
        condition.unlock()
    }
}

struct Feed_: Endpoint {
    var baseURL: String { "https://feed.example" }
    var path: String { "prices" }
}

enum Reading: String, CaseIterable {
    case chunks, lines, events
}

/// Reads the whole stream one way; returns how many items it read.
func read(_ reading: Reading, from pool: TaskPool) async throws -> Int {
    var count = 0
    switch reading {
    case .chunks:
        for try await _ in try await pool.stream(Feed_()) { count += 1 }
    case .lines:
        for try await _ in try await pool.stream(Feed_()).lines { count += 1 }
    case .events:
        for try await _ in try await pool.events(Feed_()) { count += 1 }
    }
    return count
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func fmt(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }

let body = makeBody(events: eventCount)
let pool = TaskPool(configuration: .init(transport: ChunkedTransport(body: body, chunkSize: chunkSize)))
print(
    "## Server-Sent Events: \(eventCount) events, \(body.count) bytes in chunks of \(chunkSize), read through a pool three ways (median of \(repetitions))\n"
)
// A first read of each, not measured: lazily made metadata and caches.
for reading in Reading.allCases { _ = try await read(reading, from: pool) }
var seconds: [Reading: [Double]] = [:]
var bytes: [Reading: [Double]] = [:]
var allocations: [Reading: [Double]] = [:]
var items: [Reading: Int] = [:]
for _ in 0..<repetitions {
    for reading in Reading.allCases {
        let (bytesBefore, allocationsBefore, start) = (nc_bytes_requested(), nc_allocations(), now())
        items[reading] = try await read(reading, from: pool)
        let elapsed = Double(now() - start) / 1e9
        seconds[reading, default: []].append(elapsed)
        bytes[reading, default: []].append(Double(nc_bytes_requested() - bytesBefore) / Double(eventCount))
        allocations[reading, default: []].append(Double(nc_allocations() - allocationsBefore) / Double(eventCount))
    }
}
precondition(items[.events] == eventCount, "read \(items[.events] ?? 0) events of \(eventCount)")
print("read as   items      ms      events/s    MB/s    bytes allocated/event  allocations/event")
var json: [String: Double] = ["events": Double(eventCount), "body_bytes": Double(body.count)]
for reading in Reading.allCases {
    let time = median(seconds[reading]!)
    print(
        reading.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
            + String(items[reading]!).padding(toLength: 11, withPad: " ", startingAt: 0)
            + fmt(time * 1000, 1).padding(toLength: 8, withPad: " ", startingAt: 0)
            + fmt(Double(eventCount) / time).padding(toLength: 12, withPad: " ", startingAt: 0)
            + fmt(Double(body.count) / time / 1e6, 1).padding(toLength: 8, withPad: " ", startingAt: 0)
            + fmt(median(bytes[reading]!)).padding(toLength: 23, withPad: " ", startingAt: 0)
            + fmt(median(allocations[reading]!), 1))
    json["\(reading.rawValue)_events_per_second"] = Double(eventCount) / time
    json["\(reading.rawValue)_bytes_per_event"] = median(bytes[reading]!)
    json["\(reading.rawValue)_allocations_per_event"] = median(allocations[reading]!)
}
print(
    "\nThe parser's own share per event (events less chunks): \(fmt(median(bytes[.events]!) - median(bytes[.chunks]!))) bytes, "
        + "\(fmt(median(allocations[.events]!) - median(allocations[.chunks]!), 1)) allocations, "
        + "\(fmt((median(seconds[.events]!) - median(seconds[.chunks]!)) / Double(eventCount) * 1e9)) ns")
if nc_bytes_requested() == 0 { print("(allocations are not counted here: the allocator is not glibc's)") }
let encoder = JSONEncoder()
encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
if let path = ProcessInfo.processInfo.environment["EVENTSTREAM_OUTPUT"] {
    try encoder.encode(json).write(to: URL(fileURLWithPath: path))
}
