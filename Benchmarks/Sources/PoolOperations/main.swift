// A pool tracking 100,000 tasks that never answer (the pool suite's `ScaleTransport`), then ROUNDS rounds
// of 1,000 sends registered, 1,000 ids looked up and the 1,000 sends cancelled: a program to count what
// one such operation costs in instructions with callgrind, one pool method at a time
// (`Benchmarks/pool-instructions` runs it).
//
//   PoolOperations ROUNDS
//
// `main` is synchronous: valgrind 3.19 stops with an internal error when `main` is `async`.
import Foundation
import NetworkCore
import ScaleTransport

struct FileEndpoint: Endpoint {
    let baseURL: String
    let path: String
}

guard CommandLine.arguments.count == 2, let rounds = Int(CommandLine.arguments[1]), rounds > 0 else {
    FileHandle.standardError.write(Data("usage: PoolOperations ROUNDS\n".utf8))
    exit(2)
}
let tracked = 100_000
let batch = 1_000
let endpoint = FileEndpoint(baseURL: "https://stub.example", path: "item")
let pool = TaskPool(
    configuration: .init(transport: ScaleTransport(), maximumConcurrentTasks: .max, maximumTasksPerHost: .max))
let resident = (0..<tracked).map { "pending-\($0)" }
for id in resident { pool.send(endpoint, id: id) { _ in } }
// Every round looks up the same ids, chosen once, so that the rounds differ only in their count.
var generator = SystemRandomNumberGenerator()
let probes = (0..<batch).map { _ in resident.randomElement(using: &generator)! }
var found = 0
for round in 0..<rounds {
    let ids = (0..<batch).map { "pending-r\(round)-\($0)" }
    for id in ids { pool.send(endpoint, id: id) { _ in } }
    for id in probes where pool.task(id: id) != nil { found += 1 }
    for id in ids { pool.cancel(id: id) }
}
guard found == rounds * batch, pool.activeTasks.count == tracked else {
    let message = "found \(found) of \(rounds * batch); \(pool.activeTasks.count) tracked\n"
    FileHandle.standardError.write(Data(message.utf8))
    exit(1)
}
print("\(rounds) rounds of \(batch) with \(tracked) tracked")
