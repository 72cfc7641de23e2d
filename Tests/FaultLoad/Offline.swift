import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `FaultLoad offline URL COUNT BRIEF`: started with the namespace's link down. A pool following
/// `SystemConnectivity` is given COUNT requests with a 60 s deadline and BRIEF ones with a 3 s deadline, 64 at
/// once; the script brings the link up some seconds later. Passes when the monitor said offline at first, every
/// long request ended exactly once with a 200, none before the monitor said online, each brief one ended by
/// its deadline (as deadlineExceeded, within a tenth of it plus a second), and the pool is empty after.
func offline(_ arguments: [String]) async -> Bool {
    guard arguments.count == 3, let url = URL(string: arguments[0]), let count = Int(arguments[1]),
        let brief = Int(arguments[2])
    else {
        FileHandle.standardError.write(Data("usage: FaultLoad offline URL COUNT BRIEF\n".utf8))
        exit(2)
    }
    let network = SystemConnectivity()
    let wasOffline = network.connectivity == .offline
    let online = Moment()
    let observation = network.observe { connectivity in if connectivity.isReachable { online.mark() } }
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = 64
    let pool = TaskPool(
        configuration: .init(
            transport: URLSessionTransport(configuration: configuration),
            interceptors: [RetryPolicy(maximumAttempts: 4, baseDelay: 0.2, maximumDelay: 2)],
            maximumConcurrentTasks: 64, maximumTasksPerHost: 64, connectivity: network))
    let base = url.deletingLastPathComponent().absoluteString
    let ends = Ends()
    let early = Counter()
    let started = Date()
    await withTaskGroup(of: Void.self) { group in
        for index in 0..<(count + brief) {
            let deadline: TimeInterval = index < count ? 60 : 3
            group.addTask {
                let sent = Date()
                let outcome: String
                do throws(NetworkError) {
                    _ = try await pool.send(
                        Get(baseURL: base, path: url.lastPathComponent, deadline: deadline, timeoutSeconds: 10),
                        id: "offline-\(index)")
                    outcome = index < count ? "ok" : "ok (brief)"
                } catch {
                    outcome = index < count ? kind(error) : "\(kind(error)) (brief)"
                }
                if index < count, online.date.map({ Date() < $0 }) ?? true { early.increment() }
                ends.end(index, outcome, overshoot: Date().timeIntervalSince(sent) - deadline)
            }
        }
    }
    observation.cancel()
    network.stop()
    let elapsed = Date().timeIntervalSince(started)
    let wentOnline = online.date.map { $0.timeIntervalSince(started) } ?? -1
    let left = pool.activeTasks.count
    let outcomes = ends.outcomes
    let passed =
        wasOffline && ends.count == count + brief && ends.twice == 0 && left == 0 && early.value == 0
        && outcomes["ok"] == count && outcomes["deadlineExceeded (brief)"] == brief
        && ends.worstOvershoot <= 3 * 0.1 + 1
    let listed = outcomes.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
    print(
        """
        {"requests":\(count),"brief":\(brief),"offlineAtFirst":\(wasOffline),\
        "onlineAfter":\(String(format: "%.1f", wentOnline)),"ended":\(ends.count),"endedTwice":\(ends.twice),\
        "endedBeforeOnline":\(early.value),"outcomes":{\(listed)},"seconds":\(String(format: "%.1f", elapsed)),\
        "worstOvershoot":\(String(format: "%.2f", ends.worstOvershoot)),"leftInPool":\(left),"passed":\(passed)}
        """)
    return passed
}

/// When something first happened, from any thread.
final class Moment: @unchecked Sendable {  // `lock` guards `first`.
    private let lock = NSLock()
    private var first: Date?

    func mark() {
        lock.lock()
        defer { lock.unlock() }
        if first == nil { first = Date() }
    }

    var date: Date? {
        lock.lock()
        defer { lock.unlock() }
        return first
    }

}

/// A count, from any thread.
final class Counter: @unchecked Sendable {  // `lock` guards `count`.
    private let lock = NSLock()
    private var count = 0

    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
