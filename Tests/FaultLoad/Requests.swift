import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Get: Endpoint {
    let baseURL: String
    let path: String
    let deadline: TimeInterval
    let timeoutSeconds: TimeInterval
    var resourceTimeout: TimeInterval? { deadline }
    var timeout: TimeInterval? { timeoutSeconds }
}

/// Each send's end, counted once, from any thread.
final class Ends: @unchecked Sendable {  // `lock` guards every field.
    private let lock = NSLock()
    private var seen: Set<Int> = []
    private(set) var twice = 0
    private(set) var outcomes: [String: Int] = [:]
    private(set) var worstOvershoot: TimeInterval = 0

    func end(_ index: Int, _ outcome: String, overshoot: TimeInterval) {
        lock.lock()
        defer { lock.unlock() }
        if !seen.insert(index).inserted { twice += 1 }
        outcomes[outcome, default: 0] += 1
        worstOvershoot = max(worstOvershoot, overshoot)
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return seen.count
    }
}

/// The case of an error, as a word.
func kind(_ error: NetworkError) -> String {
    switch error {
    case .deadlineExceeded: "deadlineExceeded"
    case .timedOut: "timedOut"
    case .transport(let error): "transport(\((error as? URLError)?.code.rawValue ?? 0))"
    case .httpStatus(let response): "httpStatus(\(response.statusCode))"
    case .cancelled: "cancelled"
    default: "other"
    }
}

/// The process's peak resident memory, in MB (Linux's `VmHWM`), or -1 where it cannot be read.
func peakResidentMB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return -1 }
    return kilobytes / 1024
}

/// `FaultLoad requests URL COUNT INFLIGHT DEADLINE REQUEST_TIMEOUT [SPACING]`: see main.swift.
func requests(_ arguments: [String]) async -> Bool {
    guard arguments.count == 5 || arguments.count == 6, let url = URL(string: arguments[0]),
        let count = Int(arguments[1]), let inflight = Int(arguments[2]), let deadline = Double(arguments[3]),
        let timeout = Double(arguments[4]), let spacing = Double(arguments.count == 6 ? arguments[5] : "0")
    else {
        FileHandle.standardError.write(
            Data("usage: FaultLoad requests URL COUNT INFLIGHT DEADLINE REQUEST_TIMEOUT [SPACING]\n".utf8))
        exit(2)
    }
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = inflight
    let pool = TaskPool(
        configuration: .init(
            transport: URLSessionTransport(configuration: configuration),
            interceptors: [RetryPolicy(maximumAttempts: 4, baseDelay: 0.2, maximumDelay: 2)],
            maximumConcurrentTasks: inflight, maximumTasksPerHost: inflight))
    let endpoint = Get(
        baseURL: url.deletingLastPathComponent().absoluteString, path: url.lastPathComponent, deadline: deadline,
        timeoutSeconds: timeout)
    let ends = Ends()
    let started = Date()
    await withTaskGroup(of: Void.self) { group in
        for index in 0..<count {
            if index >= inflight { await group.next() }
            let due = Double(index) * spacing - Date().timeIntervalSince(started)
            if due > 0 { try? await Task.sleep(nanoseconds: UInt64(due * 1e9)) }
            group.addTask {
                let sent = Date()
                let outcome: String
                do throws(NetworkError) {
                    _ = try await pool.send(endpoint, id: "fault-\(index)")
                    outcome = "ok"
                } catch {
                    outcome = kind(error)
                }
                ends.end(index, outcome, overshoot: Date().timeIntervalSince(sent) - deadline)
            }
        }
    }
    let elapsed = Date().timeIntervalSince(started)
    let left = pool.activeTasks.count
    let allowed = deadline * 0.1 + 1
    let typed = ends.outcomes.keys.allSatisfy { $0 != "other" }
    let passed = ends.count == count && ends.twice == 0 && left == 0 && ends.worstOvershoot <= allowed && typed
    let outcomes = ends.outcomes.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
    print(
        """
        {"requests":\(count),"inflight":\(inflight),"ended":\(ends.count),"endedTwice":\(ends.twice),\
        "outcomes":{\(outcomes)},"seconds":\(String(format: "%.1f", elapsed)),\
        "worstOvershoot":\(String(format: "%.2f", ends.worstOvershoot)),"allowedOvershoot":\(String(format: "%.2f", allowed)),\
        "leftInPool":\(left),"peakResidentMB":\(peakResidentMB()),"passed":\(passed)}
        """)
    return passed
}
