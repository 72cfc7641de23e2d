// Sends N requests one after another through a TaskPool over a StubTransport, and nothing else: a
// program to count what a send costs with an outside tool, e.g. allocations with a uprobe on malloc:
//
//   perf probe -x /lib/x86_64-linux-gnu/libc.so.6 malloc
//   perf stat -e probe_libc:malloc Benchmarks/.build/release/SendLoop 0
//   perf stat -e probe_libc:malloc Benchmarks/.build/release/SendLoop 20000
//
// (difference of the two counts) / 20,000 = allocations per send. With `suspend` after the count
// (`SendLoop 20000 suspend`) the stub yields before it answers, so the caller waits for the task to end,
// as it does for a real transport.
import Foundation
import NetworkCore

struct Item: Endpoint {
    var baseURL: String { "https://stub.example" }
    var path: String { "item" }
}

let count = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 0
let suspends = CommandLine.arguments.dropFirst(2).first == "suspend"
let stub = StubTransport { _, _ in
    if suspends { await Task.yield() }
    return StubResponse(body: Data("{}".utf8))
}
let pool = TaskPool(configuration: .init(transport: stub))
for index in 0..<count {
    _ = try await pool.send(Item(), id: "send-\(index)")
}
print("sent \(count) requests")
