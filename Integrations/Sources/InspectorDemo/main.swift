// The live inspector on MovieDB's offline stand-in, with answers slowed so that tasks come and go, and a
// WebSocket of live scores fed in the process (no network), open the whole time:
//
//     swift run --package-path Integrations inspector-demo
//
// prints the page's address; open it in a browser. Ctrl-C stops it. Options:
//   --port N        listen on this loopback port (any free one by default)
//   --no-cancel     the page may not cancel tasks
//   --hold N        send N calls that wait until cancelled, and nothing else (for trying cancel, and tests)
//   --for SECONDS   stop after this long
// With INSPECTOR_DEMO_TOKEN, INSPECTOR_DEMO_PASSWORD and INSPECTOR_DEMO_API_KEY set, it also sends one
// sign-in with that bearer token, that password in a form body and that key in the query, which the page
// must show redacted.
import Foundation
import MovieDB
import NetworkCore
import NetworkCoreInspector

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Prints a line and flushes it at once, so that a program reading the demo's output sees it.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

struct Options {
    var port = 0
    var allowsCancel = true
    var hold: Int?
    var seconds: Double?

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--port": port = try Self.number(rest.popFirst(), for: argument)
            case "--no-cancel": allowsCancel = false
            case "--hold": hold = try Self.number(rest.popFirst(), for: argument)
            case "--for": seconds = Double(try Self.number(rest.popFirst(), for: argument))
            default: throw UsageError(text: "unknown option \(argument)")
            }
        }
    }

    static func number(_ text: String?, for option: String) throws -> Int {
        guard let text, let value = Int(text), value >= 0 else { throw UsageError(text: "\(option) needs a number") }
        return value
    }
}

struct UsageError: Error, CustomStringConvertible {
    let text: String
    var description: String {
        "\(text)\nusage: inspector-demo [--port N] [--no-cancel] [--hold N] [--for SECONDS]"
    }
}

/// A sign-in of a made-up service, carrying a bearer token, a password in a form body and a key in the
/// query: what the page must never show.
struct SignIn: Endpoint {
    let token: String
    let password: String
    let apiKey: String
    var baseURL: String { "https://accounts.example.com" }
    var path: String { "session" }
    var method: HTTPMethod { .post }
    var task: HTTPTask {
        .parameters(
            url: ["api_key": apiKey], body: ["username": "demo", "password": password], bodyEncoder: FormBodyEncoder())
    }
    var headers: [String: String] { ["Authorization": "Bearer \(token)"] }
}

/// The offline stand-in, slowed: each answer after 0.3 to 3 s, one in ten a 503 first (retried), images
/// at about 100 KB/s; with `hold`, never, until cancelled.
func slowedStandIn(hold: Bool) -> StubTransport {
    let standIn = OfflineTMDB()
    let failures = Failures()
    return StubTransport { request, _ in
        if hold { try await Task.sleep(nanoseconds: 3_600_000_000_000) }
        try await Task.sleep(nanoseconds: UInt64.random(in: 300_000_000...3_000_000_000))
        if request.url?.host == "accounts.example.com" {
            return .json(
                #"{"success": false, "status_message": "Accounts are not part of the demo."}"#, statusCode: 401)
        }
        if failures.next() { return .json(#"{"status_message": "Try again."}"#, statusCode: 503) }
        return standIn.respond(to: request)
    }
}

/// The demo's transport: the slowed stand-in for requests, and for sockets a feed of live scores in the
/// process (no network).
struct DemoTransport: Transport {
    let requests: StubTransport

    func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
        requests.start(request, body: body, events: events)
    }

    func startWebSocket(
        _ request: URLRequest, options: WebSocketOptions, events: TransportEvents
    ) -> any WebSocketConnection {
        ScoreFeed(request, events: events)
    }
}

/// A socket that opens at once, sends a score every second, and echoes what it is sent.
final class ScoreFeed: WebSocketConnection, @unchecked Sendable {
    // @unchecked Sendable: `feed` is set once, in init, before anything can reach it.
    private let events: TransportEvents
    private var feed: Task<Void, Never>?

    init(_ request: URLRequest, events: TransportEvents) {
        self.events = events
        let url = request.url ?? URL(fileURLWithPath: "/")
        feed = Task {
            let head = HTTPURLResponse(
                url: url, statusCode: 101, httpVersion: "HTTP/1.1",
                headerFields: ["Upgrade": "websocket", "Connection": "Upgrade"])
            guard let head, events.receive(head: head) else { return }
            var minute = 0
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 1_000_000_000)
                minute += 1
                let score = "minute \(minute): \(minute / 17)-\(minute / 29)"
                if Task.isCancelled || !events.receive(message: .text(score)) { return }
            }
        }
    }

    func send(_ message: WebSocketMessage) async throws { _ = events.receive(message: message) }

    func close(_ code: WebSocketCloseCode, reason: String) {
        feed?.cancel()
        events.receive(closeCode: code, reason: reason)
        events.finish()
    }

    func cancel() {
        feed?.cancel()
        events.fail(URLError(.cancelled))
    }
}

/// The live-score socket's endpoint.
struct LiveScores: Endpoint {
    var baseURL: String { "wss://scores.example.com" }
    var path: String { "live" }
}

/// One answer in ten is a 503.
final class Failures: @unchecked Sendable {
    // @unchecked Sendable: `lock` guards `count`.
    private let lock = NSLock()
    private var count = 0
    func next() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count % 10 == 7
    }
}

let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("inspector-demo: \(error)\n".utf8))
    exit(2)
}

let inspector = PoolInspector(historyLimit: 200)
let pool = TaskPool(
    configuration: .init(
        transport: DemoTransport(requests: slowedStandIn(hold: options.hold != nil)),
        // What ended, one line each: what a program driving the page reads to check the pool.
        logger: ConsoleLogger(minimumLevel: .info, write: say),
        interceptors: [RetryPolicy(maximumAttempts: 3, baseDelay: 0.2)], maximumTasksPerHost: 4,
        inspector: inspector))
let movies = MovieService(
    pool: pool, configuration: TMDBConfiguration(environment: .production, credential: .apiKey(OfflineTMDB.apiKey)))

let server: InspectorServer
do {
    server = try await InspectorServer.start(
        inspector: inspector, configuration: .init(port: options.port, allowsCancel: options.allowsCancel))
} catch {
    FileHandle.standardError.write(Data("inspector-demo: cannot listen on port \(options.port): \(error)\n".utf8))
    exit(1)
}
say("Inspector: \(server.url)")
say("Open it in a browser; Ctrl-C stops the demo.")

let environment = ProcessInfo.processInfo.environment
if let token = environment["INSPECTOR_DEMO_TOKEN"], let password = environment["INSPECTOR_DEMO_PASSWORD"],
    let apiKey = environment["INSPECTOR_DEMO_API_KEY"]
{
    pool.send(SignIn(token: token, password: password, apiKey: apiKey), id: "accounts.signIn") { _ in }
}

// A socket, open the whole time: a row of its own, its messages counted as they come.
let scores = Task {
    guard let socket = try? await pool.webSocket(LiveScores(), id: "scores.live") else { return }
    do {
        for try await _ in socket {}
    } catch {}
}

let calls = Task {
    if let hold = options.hold {
        for page in 1...max(1, hold) { movies.nowPlaying(page: page) { _ in } }
        return
    }
    let posterFile = FileManager.default.temporaryDirectory.appendingPathComponent("inspector-demo-poster.jpg")
    defer { try? FileManager.default.removeItem(at: posterFile) }
    var round = 0
    while !Task.isCancelled {
        round += 1
        switch round % 9 {
        case 0: movies.popular(page: 1 + round % 3) { _ in }
        case 1: movies.topRated(page: 1) { _ in }
        case 2: movies.upcoming(page: 1) { _ in }
        case 3: movies.details(id: 550) { _ in }
        case 4: movies.videos(id: 550) { _ in }
        case 5: movies.search(query: "fight club", page: 1) { _ in }
        case 6: movies.details(id: 1) { _ in }  // the stand-in knows no movie 1: a 404, with TMDB's own error
        case 7:
            Task {
                guard let movie = try? await movies.details(id: 550) else { return }
                _ = try? await movies.downloadPoster(of: movie, to: posterFile)
            }
        default: movies.nowPlaying(page: 1 + round % 5) { _ in }
        }
        try? await Task.sleep(nanoseconds: UInt64.random(in: 200_000_000...700_000_000))
    }
}

if let seconds = options.seconds {
    try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
} else {
    // Until interrupted.
    while true { try? await Task.sleep(nanoseconds: 3_600_000_000_000) }
}
calls.cancel()
scores.cancel()
pool.cancelAll()
try? await server.stop()
