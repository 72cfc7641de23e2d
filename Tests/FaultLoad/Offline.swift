import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `FaultLoad offline URL COUNT BRIEF WRITES`: started with the namespace's link down. A pool following
/// `SystemConnectivity` is given COUNT requests with a 60 s deadline, BRIEF ones with a 3 s deadline, and WRITES
/// durable POSTs to httpbin's `/post` (a store in a temporary directory), 64 at once; the script brings the
/// link up some seconds later. Passes when the monitor said offline at first, every long request and every
/// write ended exactly once with a 200, none before the monitor said online, httpbin echoed WRITES distinct
/// idempotency keys, the store is empty, each brief one ended by its deadline (as deadlineExceeded, within a
/// tenth of it plus a second), and the pool is empty after.
func offline(_ arguments: [String]) async -> Bool {
    guard arguments.count == 4, let url = URL(string: arguments[0]), let count = Int(arguments[1]),
        let brief = Int(arguments[2]), let writes = Int(arguments[3])
    else {
        FileHandle.standardError.write(Data("usage: FaultLoad offline URL COUNT BRIEF WRITES\n".utf8))
        exit(2)
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("durable-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    guard let store = try? DurableStore(directory: folder) else { return false }
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
            maximumConcurrentTasks: 64, maximumTasksPerHost: 64, connectivity: network, durableStore: store))
    let base = url.deletingLastPathComponent().absoluteString
    let ends = Ends()
    let early = Counter()
    let echoedKeys = Keys()
    let started = Date()
    await withTaskGroup(of: Void.self) { group in
        for index in 0..<writes {
            group.addTask {
                let outcome: String
                do throws(NetworkError) {
                    let response = try await pool.send(
                        Write(baseURL: base, index: index).durable(for: 120), id: "write-\(index)")
                    echoedKeys.add(response)
                    outcome = "ok (write)"
                } catch {
                    outcome = "\(kind(error)) (write)"
                }
                if online.date.map({ Date() < $0 }) ?? true { early.increment() }
                ends.end(count + brief + index, outcome, overshoot: 0)
            }
        }
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
        wasOffline && ends.count == count + brief + writes && ends.twice == 0 && left == 0 && early.value == 0
        && outcomes["ok"] == count && outcomes["deadlineExceeded (brief)"] == brief
        && outcomes["ok (write)"] == writes && echoedKeys.distinct == writes && store.pendingKeys.isEmpty
        && ends.worstOvershoot <= 3 * 0.1 + 1
    let listed = outcomes.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
    print(
        """
        {"requests":\(count),"brief":\(brief),"durableWrites":\(writes),"distinctKeysEchoed":\(echoedKeys.distinct),\
        "offlineAtFirst":\(wasOffline),\
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

/// A durable POST to httpbin, which echoes the headers it received.
struct Write: Endpoint {
    let baseURL: String
    let index: Int
    var path: String { "post" }
    var method: HTTPMethod { .post }
    var task: HTTPTask { .bodyParameters(["like": index]) }
}

/// The idempotency keys httpbin echoed, from any thread.
final class Keys: @unchecked Sendable {  // `lock` guards `keys`.
    private let lock = NSLock()
    private var keys: Set<String> = []

    func add(_ response: Response) {
        let echoed = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        guard let key = (echoed?["headers"] as? [String: Any])?["Idempotency-Key"] as? String else { return }
        lock.lock()
        keys.insert(key)
        lock.unlock()
    }

    var distinct: Int {
        lock.lock()
        defer { lock.unlock() }
        return keys.count
    }
}
