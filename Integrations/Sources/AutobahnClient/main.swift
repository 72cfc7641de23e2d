// Drives the Autobahn|Testsuite fuzzing server (`wstest -m fuzzingserver`) with NetworkCore's WebSocket
// client: a pool over NIOTransport with its default options, but for the largest message (the suite sends
// up to 16 MiB) and no keep-alive. Each case echoes every message back as it came until the server closes;
// then the server writes its reports. `Scripts/autobahn` starts the server and runs this.
//   autobahn-client ws://127.0.0.1:PORT [AGENT]
import Foundation
import NetworkCore
import NetworkCoreNIO

struct FuzzingServer: Endpoint {
    let base: String
    let path: String
    let query: [String: String]
    var baseURL: String { base }
    var task: HTTPTask { .urlParameters(query) }
    var timeout: TimeInterval? { 60 }
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: autobahn-client ws://HOST:PORT [AGENT]\n".utf8))
    exit(2)
}
let base = arguments[1]
let agent = arguments.count > 2 ? arguments[2] : "NetworkCore"
let transport = NIOTransport()
let pool = TaskPool(configuration: .init(transport: transport))
let options = WebSocketOptions(maximumMessageBytes: 64 << 20, pingInterval: nil)

/// The first text message of a socket to `path`.
func firstText(_ path: String, _ query: [String: String] = [:]) async throws -> String? {
    let socket = try await pool.webSocket(FuzzingServer(base: base, path: path, query: query), options: options)
    var iterator = socket.makeAsyncIterator()
    defer { Task { await socket.close() } }
    guard case .text(let text)? = try await iterator.next() else { return nil }
    return text
}

let count = Int(try await firstText("/getCaseCount") ?? "") ?? 0
print("autobahn-client: \(count) case(s)")
for number in 1...max(count, 1) where count > 0 {
    do {
        let socket = try await pool.webSocket(
            FuzzingServer(base: base, path: "/runCase", query: ["case": "\(number)", "agent": agent]), options: options)
        for try await message in socket { try await socket.send(message) }
    } catch {
        // A case that breaks the protocol ends in an error here by design: the server judges what was sent.
    }
}
let report = try await pool.webSocket(
    FuzzingServer(base: base, path: "/updateReports", query: ["agent": agent]), options: options)
for try await _ in report {}
await transport.shutdown()
print("autobahn-client: done")
