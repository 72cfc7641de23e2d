// One large transfer across a slow or flapping link, through a pool over URLSession with a retry policy and
// the stall detector on, its progress read from the task table four times a second:
//
//   FaultLoad download URL ORIGINAL_FILE steady|resumed
//       Downloads URL to a file and compares it with ORIGINAL_FILE (the file the server serves), by SHA-256.
//       steady:  passes when the file is the same, made in one attempt, its progress steady (never back,
//                never still for the stall threshold, no 5 s at less than half the whole's rate), and the
//                stall detector never fired.
//       resumed: (the link goes down midway) passes when the file is the same, the last attempt asked for the
//                rest only (a 206 starting past 0) after the stall detector fired and an attempt failed, and
//                the progress never went back.
//   FaultLoad upload URL ORIGINAL_FILE STORED_FILE
//       PUTs ORIGINAL_FILE to URL and compares it with STORED_FILE (where the server put it); passes as a
//       steady download does.
import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Transfer: Endpoint {
    let baseURL: String
    let path: String
    var method: HTTPMethod = .get
    var task: HTTPTask = .plain
    var resourceTimeout: TimeInterval? { 900 }
}

/// Seconds without a byte after which the stall detector reports a task.
let stallThreshold: TimeInterval = 3

/// What the task table said of the transfer, four times a second: seconds since the start, bytes moved.
final class ProgressSamples: @unchecked Sendable {  // `lock` guards `samples`.
    private let lock = NSLock()
    private var samples: [(time: TimeInterval, bytes: Int)] = []

    func add(_ time: TimeInterval, _ bytes: Int) {
        lock.lock()
        samples.append((time, bytes))
        lock.unlock()
    }

    var all: [(time: TimeInterval, bytes: Int)] {
        lock.lock()
        defer { lock.unlock() }
        return samples
    }

    /// Whether the bytes ever went down.
    var wentBack: Bool { zip(all, all.dropFirst()).contains { $1.bytes < $0.bytes } }

    /// The longest time the bytes stood still between the first byte and the last.
    var longestStill: TimeInterval {
        let moving = all.drop { $0.bytes == 0 }
        guard let last = moving.last?.bytes else { return 0 }
        var longest: TimeInterval = 0
        var since = moving.first?.time ?? 0
        var bytes = -1
        for sample in moving where sample.bytes != bytes {
            longest = max(longest, sample.time - since)
            since = sample.time
            bytes = sample.bytes
            if bytes == last { break }
        }
        return longest
    }

    /// Megabits a second in each stretch of `window` seconds from the first byte to the last (a shorter
    /// last stretch left out): the slowest, the median and the fastest; zeros when the transfer took less.
    func windowRates(_ window: TimeInterval) -> (slowest: Double, median: Double, fastest: Double) {
        let moving = all.drop { $0.bytes == 0 }
        guard let first = moving.first, let end = moving.first(where: { $0.bytes == moving.last?.bytes }) else {
            return (0, 0, 0)
        }
        var rates: [Double] = []
        var start = first
        for sample in moving where sample.time <= end.time && sample.time - start.time >= window {
            rates.append(Double(sample.bytes - start.bytes) * 8 / 1e6 / (sample.time - start.time))
            start = sample
        }
        rates.sort()
        guard !rates.isEmpty else { return (0, 0, 0) }
        return (rates[0], rates[rates.count / 2], rates[rates.count - 1])
    }

    /// Whether the transfer moved steadily: its bytes never went back nor stood still for the stall
    /// threshold, and no 5 s stretch went at less than half the rate of the whole.
    func steady(bytes: Int, seconds: TimeInterval) -> Bool {
        !wentBack && longestStill < stallThreshold
            && windowRates(5).slowest >= 0.5 * Double(bytes) * 8 / 1e6 / seconds
    }
}

/// A pool over URLSession that retries lost connections and time-outs (up to 10 attempts, waits of 0.5 to
/// 2 s), with a 4 s request timeout and the stall detector on, logging warnings and errors to `logger`.
func transferPool(logger: InMemoryLogger) -> TaskPool {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    return TaskPool(
        configuration: .init(
            transport: URLSessionTransport(configuration: configuration), logger: logger, requestTimeout: 4,
            interceptors: [RetryPolicy(maximumAttempts: 10, baseDelay: 0.5, maximumDelay: 2)],
            stallThreshold: stallThreshold))
}

/// Samples the task's bytes (`sent` or received) from the pool's table every 250 ms while `body` runs.
func sampling<T>(
    _ pool: TaskPool, id: String, sent: Bool, samples: ProgressSamples, _ body: () async throws(NetworkError) -> T
) async -> (Result<T, NetworkError>, TimeInterval) {
    let started = Date()
    let sampler = Task {
        while !Task.isCancelled {
            if let progress = pool.task(id: id)?.progress {
                samples.add(Date().timeIntervalSince(started), sent ? progress.bytesSent : progress.bytesReceived)
            }
            try? await Task.sleep(nanoseconds: 250_000_000)
        }
    }
    let result: Result<T, NetworkError>
    do throws(NetworkError) { result = .success(try await body()) } catch { result = .failure(error) }
    sampler.cancel()
    return (result, Date().timeIntervalSince(started))
}

/// Whether the two files have the same SHA-256 (by `sha256sum`); false when either cannot be read.
func sameSHA256(_ path: String, _ other: String) -> Bool {
    let digest = sha256(path)
    return !digest.isEmpty && digest == sha256(other)
}

/// The file's SHA-256 in hex, by `sha256sum`, or an empty string where it cannot be read.
func sha256(_ path: String) -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = [path]
    let pipe = Pipe()
    process.standardOutput = pipe
    guard (try? process.run()) != nil else { return "" }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: output, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
}

/// The figures every transfer prints, as JSON members.
func transferFigures(
    _ result: Result<Response, NetworkError>, seconds: TimeInterval, bytes: Int, samples: ProgressSamples,
    logger: InMemoryLogger, sameFile: Bool
) -> String {
    let rates = samples.windowRates(5)
    let outcome: String
    switch result {
    case .success(let response): outcome = "\(response.statusCode)"
    case .failure(let error): outcome = kind(error)
    }
    return """
        "outcome":"\(outcome)","bytes":\(bytes),"seconds":\(String(format: "%.1f", seconds)),\
        "mbitPerSecond":\(String(format: "%.2f", Double(bytes) * 8 / 1e6 / seconds)),\
        "fiveSecondRatesMbit":[\(String(format: "%.2f,%.2f,%.2f", rates.slowest, rates.median, rates.fastest))],\
        "progressSamples":\(samples.all.count),"longestStill":\(String(format: "%.2f", samples.longestStill)),\
        "progressWentBack":\(samples.wentBack),"stalls":\(logger.events(.stalled).count),\
        "stalledAfter":[\(logger.events(.stalled).map { String(format: "%.1f", $0.duration ?? -1) }.joined(separator: ","))],\
        "retries":\(logger.events(.retrying).count),"sameSHA256":\(sameFile),"peakResidentMB":\(peakResidentMB())
        """
}

/// `FaultLoad download URL ORIGINAL_FILE steady|resumed`: see above.
func download(_ arguments: [String]) async -> Bool {
    guard arguments.count == 3, let url = URL(string: arguments[0]), ["steady", "resumed"].contains(arguments[2])
    else {
        FileHandle.standardError.write(Data("usage: FaultLoad download URL ORIGINAL_FILE steady|resumed\n".utf8))
        exit(2)
    }
    let original = arguments[1]
    let destination = FileManager.default.temporaryDirectory.appendingPathComponent("faultload-\(getpid()).bin")
    defer { try? FileManager.default.removeItem(at: destination) }
    let logger = InMemoryLogger(minimumLevel: .warning)
    let pool = transferPool(logger: logger)
    let samples = ProgressSamples()
    let endpoint = Transfer(baseURL: url.deletingLastPathComponent().absoluteString, path: url.lastPathComponent)
    let (result, seconds) = await sampling(pool, id: "download", sent: false, samples: samples) {
        () throws(NetworkError) in try await pool.download(endpoint, to: destination, id: "download")
    }
    let size = (try? FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int) ?? 0
    let sameFile = size > 0 && sameSHA256(destination.path, original)
    // A resumed answer's Content-Range: `bytes START-END/LENGTH`.
    let resumedFrom = (try? result.get())?.header("Content-Range").flatMap { range in
        Int(range.dropFirst("bytes ".count).prefix { $0 != "-" })
    }
    let passed: Bool
    if arguments[2] == "steady" {
        passed =
            sameFile && resumedFrom == nil && logger.events(.retrying).isEmpty && logger.events(.stalled).isEmpty
            && samples.steady(bytes: size, seconds: seconds)
    } else {
        passed =
            sameFile && (resumedFrom ?? 0) > 0 && !logger.events(.retrying).isEmpty
            && !logger.events(.stalled).isEmpty && !samples.wentBack
    }
    let figures = transferFigures(
        result, seconds: seconds, bytes: size, samples: samples, logger: logger, sameFile: sameFile)
    print("{\(figures),\"resumedFrom\":\(resumedFrom.map(String.init) ?? "null"),\"passed\":\(passed)}")
    return passed
}

/// `FaultLoad upload URL ORIGINAL_FILE STORED_FILE`: see above.
func upload(_ arguments: [String]) async -> Bool {
    guard arguments.count == 3, let url = URL(string: arguments[0]) else {
        FileHandle.standardError.write(Data("usage: FaultLoad upload URL ORIGINAL_FILE STORED_FILE\n".utf8))
        exit(2)
    }
    let logger = InMemoryLogger(minimumLevel: .warning)
    let pool = transferPool(logger: logger)
    let samples = ProgressSamples()
    let endpoint = Transfer(
        baseURL: url.deletingLastPathComponent().absoluteString, path: url.lastPathComponent, method: .put,
        task: .file(URL(fileURLWithPath: arguments[1]), contentType: "application/octet-stream"))
    let (result, seconds) = await sampling(pool, id: "upload", sent: true, samples: samples) {
        () throws(NetworkError) in try await pool.send(endpoint, id: "upload")
    }
    let size = (try? FileManager.default.attributesOfItem(atPath: arguments[1])[.size] as? Int) ?? 0
    let sameFile = (try? result.get()) != nil && sameSHA256(arguments[2], arguments[1])
    let passed =
        sameFile && logger.events(.retrying).isEmpty && logger.events(.stalled).isEmpty
        && samples.steady(bytes: size, seconds: seconds)
    let figures = transferFigures(
        result, seconds: seconds, bytes: size, samples: samples, logger: logger, sameFile: sameFile)
    print("{\(figures),\"passed\":\(passed)}")
    return passed
}
