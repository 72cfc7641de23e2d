import Foundation
import NIOConcurrencyHelpers
import NIOSSL
import NetworkCore
import NetworkCoreNIO
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The servers of `Scripts/websocket-peers.py` on 127.0.0.1, run by the Python that `Scripts/test` names in
/// `NETWORKCORE_PYTHON` (a virtual environment with the `websockets` package): `real` is that package's
/// server, `hostile` one of ours that breaks the protocol. Stopped by its PID when the test that started them is
/// done; the shared ones (`shared()`) end with the test process.
final class WebSocketPeers: @unchecked Sendable {  // immutable once started
    static let python = ProcessInfo.processInfo.environment["NETWORKCORE_PYTHON"]
    static var isAvailable: Bool { python != nil }

    let real: Int
    let hostile: Int
    /// The `websockets` package's server over TLS, when started with a certificate.
    let secure: Int?
    private let process: Process
    private let input: Pipe

    /// The servers the tests share, started by the first that asks and kept until the test process ends (its
    /// end closes their standard input). One Python process for the suite, not one a test: twenty starting at
    /// once held both processors of a 2-core machine for seconds, and the timed tests beside them failed.
    /// Tests that need servers of their own (TLS, a path that keeps a count) start them.
    static func shared() async throws -> WebSocketPeers { try await started.value }
    private static let started = Task { try await WebSocketPeers() }

    /// Starts the servers and waits (30 s at most) for their ports, without holding a thread of the Swift
    /// concurrency pool meanwhile: the tests' other tasks run while Python starts.
    init(tls: SelfSignedCertificate? = nil) async throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                "Scripts/websocket-peers.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.python))
        process.arguments = [script.path] + (tls.map { ["--tls", $0.certificate.path, $0.key.path] } ?? [])
        let expected = tls == nil ? 2 : 3
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        self.process = process
        self.input = input
        // Its lines, read on a thread of its own; the process is stopped if they have not come in 30 s.
        let pid = process.processIdentifier
        let read = NIOLockedValueBox(false)
        let text = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            DispatchQueue.global().asyncAfter(deadline: .now() + 30) {
                if !read.withLockedValue({ $0 }) { kill(pid, SIGTERM) }
            }
            Thread.detachNewThread {
                var text = ""
                while text.filter({ $0 == "\n" }).count < expected {
                    let data = output.fileHandleForReading.availableData
                    if data.isEmpty { break }
                    text += String(decoding: data, as: UTF8.self)
                }
                read.withLockedValue { $0 = true }
                continuation.resume(returning: text)
            }
        }
        let ports = Dictionary(
            uniqueKeysWithValues: text.split(separator: "\n").map(String.init).compactMap { line -> (String, Int)? in
                let parts = line.split(separator: " ")
                guard parts.count == 2, let port = Int(parts[1]) else { return nil }
                return (String(parts[0]), port)
            })
        real = try #require(ports["real"])
        hostile = try #require(ports["hostile"])
        secure = ports["secure"]
    }

    deinit {
        try? input.fileHandleForWriting.close()
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
    }

    func real(_ path: String) -> String { "ws://127.0.0.1:\(real)\(path)" }
    func hostile(_ path: String) -> String { "ws://127.0.0.1:\(hostile)\(path)" }
}

/// A socket endpoint at a full URL.
struct SocketEndpoint: Endpoint {
    let url: String
    var timeout: TimeInterval?
    var headers: [String: String] = [:]
    var baseURL: String { url }
    var path: String { "" }
}

/// Renews a rejected token with "good", counting its renewals.
struct TokenAuthenticator: Authenticator {
    let renewals = Counter()
    func apply(_ credential: String, to request: inout URLRequest) {
        request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
    }
    func isRequest(_ request: URLRequest, authenticatedWith credential: String) -> Bool {
        request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential)"
    }
    func refresh(_ credential: String?) async throws -> String {
        renewals.increment()
        return "good"
    }
}

@Suite(
    "WebSockets over NIOTransport, against the websockets package's server and hostile ones",
    .enabled(if: WebSocketPeers.isAvailable || ProcessInfo.processInfo.environment["CI"] == "true"),
    .timeLimit(.minutes(1)))
struct WebSocketNIOTests {
    let transport = NIOTransport()

    func pool(logger: InMemoryLogger? = nil, interceptors: [any RequestInterceptor] = []) -> TaskPool {
        TaskPool(configuration: .init(transport: transport, logger: logger, interceptors: interceptors))
    }

    @Test("text and binary are echoed whole, up to the size limit, a message of 1 MiB among them")
    func echo() async throws {
        let peers = try await WebSocketPeers.shared()
        let pool = pool()
        let socket = try await pool.webSocket(SocketEndpoint(url: peers.real("/echo")))
        let large = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let sent: [WebSocketMessage] = [.text("héllo"), .binary(Data([0, 255])), .text(""), .binary(large)]
        for message in sent { try await socket.send(message) }
        var iterator = socket.makeAsyncIterator()
        var received: [WebSocketMessage] = []
        for _ in sent { received.append(try #require(try await iterator.next())) }
        #expect(received == sent)
        await socket.close()
        #expect(socket.task.state == .completed)
        #expect(socket.closeCode == .normalClosure)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("a socket closed, or cancelled, leaves nothing behind: its pool and its task are freed")
    func nothingLeft() async throws {
        let peers = try await WebSocketPeers.shared()
        weak var weakPool: TaskPool?
        weak var weakTask: DataTask?
        weak var weakCancelled: DataTask?
        do {
            let pool = pool()
            weakPool = pool
            let socket = try await pool.webSocket(SocketEndpoint(url: peers.real("/echo")))
            weakTask = socket.task
            try await socket.send("x")
            var iterator = socket.makeAsyncIterator()
            #expect(try await iterator.next() == .text("x"))
            await socket.close()
            let cancelled = try await pool.webSocket(SocketEndpoint(url: peers.real("/echo")), id: "gone")
            weakCancelled = cancelled.task
            pool.cancel(id: "gone")
        }
        #expect(await eventually { weakPool == nil && weakTask == nil && weakCancelled == nil })
    }

    @Test("10,000 messages each way, none lost or reordered")
    func manyMessages() async throws {
        let peers = try await WebSocketPeers.shared()
        let pool = pool()
        let socket = try await pool.webSocket(SocketEndpoint(url: peers.real("/count/10000")))
        let reader = Task {
            var iterator = socket.makeAsyncIterator()
            var order: [String] = []
            for _ in 0..<20_000 {
                guard case .text(let text)? = try await iterator.next() else { break }
                order.append(text)
            }
            return order
        }
        for index in 0..<10_000 { try await socket.send("echo \(index)") }
        let order = try await reader.value
        #expect(order.count == 20_000)
        #expect(order.prefix(10_000) == ArraySlice((0..<10_000).map(String.init)))
        #expect(order.suffix(10_000) == ArraySlice((0..<10_000).map { "echo \($0)" }))
        await socket.close()
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("100 sockets at once in one pool, each echoed and closed; every task ends once and the pool is empty")
    func hundredSockets() async throws {
        let peers = try await WebSocketPeers.shared()
        let logger = InMemoryLogger()
        let pool = pool(logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask {
                    let socket = try await pool.webSocket(
                        SocketEndpoint(url: peers.real("/echo")), id: "socket \(index)")
                    try await socket.send("\(index)")
                    var iterator = socket.makeAsyncIterator()
                    #expect(try await iterator.next() == .text("\(index)"))
                    await socket.close()
                }
            }
            try await group.waitForAll()
        }
        #expect(logger.count(.finished) == 100)
        #expect(logger.count(.failed) + logger.count(.cancelled) == 0)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("close codes both ways: the server's 1000 ends the messages, its 4001 fails them with the code and reason")
    func closeCodes() async throws {
        let peers = try await WebSocketPeers.shared()
        let pool = pool()
        let normal = try await pool.webSocket(SocketEndpoint(url: peers.real("/close/1000")))
        try await normal.send("bye")
        for try await _ in normal {}
        #expect(normal.closeCode == .normalClosure)
        #expect(normal.closeReason == "bye")
        #expect(normal.task.state == .completed)
        let custom = try await pool.webSocket(SocketEndpoint(url: peers.real("/close/4001")))
        try await custom.send("bye")
        do {
            for try await _ in custom {}
            Issue.record("a close with 4001 did not fail the reader")
        } catch NetworkError.transport(let error as WebSocketError) {
            #expect(error == .closed(WebSocketCloseCode(rawValue: 4001), reason: "bye"))
        }
        #expect(custom.task.state == .failed)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("the subprotocol the server picks among those offered")
    func subprotocol() async throws {
        let peers = try await WebSocketPeers.shared()
        let socket = try await pool().webSocket(
            SocketEndpoint(url: peers.real("/protocol")), options: .init(subprotocols: ["chat.v1", "chat.v2"]))
        #expect(socket.subprotocol == "chat.v2")
        await socket.close()
    }

    @Test("an opening answered 401 renews the credential once and opens; without the interceptor it fails as 401")
    func authentication() async throws {
        let peers = try await WebSocketPeers.shared()
        let authenticator = TokenAuthenticator()
        let auth = AuthenticationInterceptor(authenticator: authenticator, credential: "stale")
        let socket = try await pool(interceptors: [auth]).webSocket(SocketEndpoint(url: peers.real("/auth")))
        #expect(authenticator.renewals.count == 1)
        #expect(socket.task.attempts == 2)
        try await socket.send("in")
        var iterator = socket.makeAsyncIterator()
        #expect(try await iterator.next() == .text("in"))
        await socket.close()
        do {
            _ = try await pool().webSocket(SocketEndpoint(url: peers.real("/auth")))
            Issue.record("the opening did not fail")
        } catch NetworkError.httpStatus(let response) {
            #expect(response.statusCode == 401)
            #expect(String(decoding: response.body, as: UTF8.self) == #"{"error":"token"}"#)
        }
    }

    @Test(
        "a frame that breaks a rule fails the socket with the code it was closed with, never a crash",
        arguments: [
            ("/masked", 1002), ("/rsv", 1002), ("/opcode", 1002), ("/bad-utf8", 1007), ("/big-ping", 1002),
            ("/fragmented-ping", 1002), ("/bad-continuation", 1002), ("/bad-close-code", 1002),
        ])
    func hostileFrames(_ path: String, code: UInt16) async throws {
        let peers = try await WebSocketPeers.shared()
        let pool = pool()
        let socket = try await pool.webSocket(SocketEndpoint(url: peers.hostile(path)))
        do {
            for try await _ in socket {}
            Issue.record("\(path): the reader did not fail")
        } catch NetworkError.transport(let error as WebSocketError) {
            guard case .protocolViolation(let closed, _) = error else {
                Issue.record("\(path): \(error)")
                return
            }
            #expect(closed.rawValue == code)
        }
        #expect(socket.task.state == .failed)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test(
        "a message past the limit closes with 1009 and fails as too large: one of 4,000 bytes in two fragments, and one compressed into 1 KB that inflates to 1 MB (the limit holds for the inflated size)",
        arguments: [("/huge", 3_000), ("/deflate-bomb", 100_000)])
    func tooLarge(_ path: String, limit: Int) async throws {
        let peers = try await WebSocketPeers.shared()
        let socket = try await pool().webSocket(
            SocketEndpoint(url: peers.hostile(path)), options: .init(maximumMessageBytes: limit))
        do {
            for try await _ in socket {}
            Issue.record("\(path): the reader did not fail")
        } catch NetworkError.responseTooLarge(let reported) {
            #expect(reported == limit)
        }
        #expect(socket.task.state == .failed)
    }

    @Test(
        "permessage-deflate, offered by default: every message compressed, the context kept, the server's inflated",
        arguments: [
            (WebSocketCompression(), "permessage-deflate; client_max_window_bits", true),
            (
                WebSocketCompression(clientContextTakeover: false, serverMaximumWindowBits: 10),
                "permessage-deflate; client_max_window_bits; client_no_context_takeover; server_max_window_bits=10",
                false
            ),
        ])
    func deflate(_ compression: WebSocketCompression, offer: String, keepsContext: Bool) async throws {
        let peers = try await WebSocketPeers.shared()
        let socket = try await pool().webSocket(
            SocketEndpoint(url: peers.hostile("/deflate")), options: .init(compression: compression))
        var iterator = socket.makeAsyncIterator()
        #expect(try await iterator.next() == .text(offer))
        let message = String(repeating: "a chat message, ", count: 20)
        var wire: [Int] = []
        for sent in [WebSocketMessage.text(message), .text(message), .binary(Data(message.utf8)), .binary(Data())] {
            try await socket.send(sent)
            let report = try await iterator.next()
            guard case .text(let text)? = report, let length = Int(text.split(separator: "=").last ?? "") else {
                Issue.record("no report: \(String(describing: report))")
                return
            }
            // An empty message goes uncompressed; every other one with RSV1 set.
            #expect(text.hasPrefix(sent == .binary(Data()) ? "rsv1=0" : "rsv1=1"), "\(text)")
            wire.append(length)
            #expect(try await iterator.next() == sent)
        }
        #expect(wire[0] < message.utf8.count / 4)
        // With the context kept, the same message again refers to the first; without, it costs the same.
        #expect(keepsContext ? wire[1] < wire[0] : wire[1] == wire[0], "\(wire)")
        #expect(wire[3] == 0)
        await socket.close()
        #expect(socket.closeCode == .normalClosure)
    }

    @Test("an extension the client did not offer fails the opening: another one, or compression when none was offered")
    func unofferedExtensions() async throws {
        let peers = try await WebSocketPeers.shared()
        let pool = pool()
        for (path, compression) in [("/deflate-unoffered", WebSocketCompression()), ("/deflate", nil)] {
            do {
                _ = try await pool.webSocket(
                    SocketEndpoint(url: peers.hostile(path)), options: .init(compression: compression))
                Issue.record("\(path): the opening did not fail")
            } catch {
                let reason: String? =
                    if case .transport(WebSocketError.upgradeRefused(let reason)) = error { reason } else { nil }
                #expect(reason?.contains("not offered") == true, "\(path): \(error)")
            }
        }
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("with compression off, nothing is offered and messages go plain (the server fails a frame marked compressed)")
    func uncompressed() async throws {
        let peers = try await WebSocketPeers.shared()
        let socket = try await pool().webSocket(
            SocketEndpoint(url: peers.real("/echo")), options: .init(compression: nil))
        try await socket.send("plain")
        var iterator = socket.makeAsyncIterator()
        #expect(try await iterator.next() == .text("plain"))
        await socket.close()
    }

    @Test(
        "with a reconnection policy, a socket dropped twice opens again each time: one sequence of messages, each reconnection logged, then a normal close"
    )
    func reconnects() async throws {
        // Servers of its own: `/flaky` counts the connections made to it.
        let peers = try await WebSocketPeers()
        let logger = InMemoryLogger()
        let pool = pool(logger: logger)
        let socket = try await pool.webSocket(
            SocketEndpoint(url: peers.hostile("/flaky")), id: "flaky",
            options: .init(reconnection: WebSocketReconnection(initialDelay: 0.05, maximumDelay: 0.2)))
        var iterator = socket.makeAsyncIterator()
        for index in 1...3 {
            #expect(try await iterator.next() == .text("connection \(index)"))
            // Read: the server drops the first two connections on this answer.
            if index < 3 { try await socket.send("read \(index)") }
        }
        try await socket.send("still here")
        #expect(try await iterator.next() == .text("still here"))
        #expect(socket.reconnections == 2)
        #expect(pool.activeTasks.map(\.id) == ["flaky"])
        await socket.close()
        #expect(socket.task.state == .completed)
        #expect(socket.closeCode == .normalClosure)
        #expect(logger.count(.reconnected) == 2)
        #expect(logger.count(.retrying) == 2)
        #expect(logger.count(.finished) == 1)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("without a reconnection policy, or after the server's normal close, a socket does not open again")
    func noReconnection() async throws {
        let peers = try await WebSocketPeers.shared()
        let logger = InMemoryLogger()
        let pool = pool(logger: logger)
        let dropped = try await pool.webSocket(SocketEndpoint(url: peers.hostile("/drop")))
        try await dropped.send("read")  // the server drops the connection on this
        await #expect(throws: NetworkError.self) { for try await _ in dropped {} }
        let normal = try await pool.webSocket(
            SocketEndpoint(url: peers.real("/close/1000")), options: .init(reconnection: WebSocketReconnection()))
        try await normal.send("bye")
        for try await _ in normal {}
        #expect(normal.task.state == .completed)
        #expect(logger.count(.reconnected) + logger.count(.retrying) == 0)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("a connection dropped without a close frame: the messages before it, then an abnormal closure")
    func dropped() async throws {
        let peers = try await WebSocketPeers.shared()
        let socket = try await pool().webSocket(SocketEndpoint(url: peers.hostile("/drop")))
        var iterator = socket.makeAsyncIterator()
        #expect(try await iterator.next() == .text("last"))
        try await socket.send("read")  // the server drops the connection on this answer
        do {
            _ = try await iterator.next()
            Issue.record("the reader did not fail")
        } catch NetworkError.transport(let error as WebSocketError) {
            guard case .closed(let code, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(code == .abnormalClosure)
        }
    }

    @Test(
        "the 101, two messages and the connection's end read at once: both messages are read, then an abnormal closure (20 rounds)"
    )
    func burst() async throws {
        let peers = try await WebSocketPeers.shared()
        let pool = pool()
        for round in 0..<20 {
            let socket = try await pool.webSocket(SocketEndpoint(url: peers.hostile("/burst")))
            var received: [WebSocketMessage] = []
            var ending: WebSocketCloseCode?
            do {
                for try await message in socket { received.append(message) }
            } catch {
                if case .transport(let inner as WebSocketError) = error as? NetworkError,
                    case .closed(let code, _) = inner
                {
                    ending = code
                }
            }
            #expect(received == [.text("first"), .text("second")], "round \(round)")
            #expect(ending == .abnormalClosure, "round \(round)")
        }
        #expect(pool.activeTasks.isEmpty)
    }

    @Test(
        "a server that reads nothing: sends return until the connection is full, then one waits and fails after the send timeout, withdrawn; the socket stays open"
    )
    func sendTimeout() async throws {
        let peers = try await WebSocketPeers.shared()
        let pool = pool()
        let socket = try await pool.webSocket(
            SocketEndpoint(url: peers.hostile("/no-read")), id: "slow",
            options: WebSocketOptions(pingInterval: nil, sendTimeout: 0.5, compression: nil))
        // 64 KiB messages: the first four fit the 256 KiB the socket queues without making its sender wait,
        // so they return whatever the machine's load; later ones wait while the connection is full.
        let message = Data(count: 64 << 10)
        var sent = 0
        var failure: NetworkError?
        let started = ContinuousClock.now
        // At most 1,000 messages, 62.5 MiB: the kernel's buffers on loopback hold a few MiB.
        while sent < 1_000, failure == nil {
            do {
                try await socket.send(message)
                sent += 1
            } catch {
                failure = error
            }
        }
        let waited = ContinuousClock.now - started
        if case .transport(let error as WebSocketError)? = failure {
            #expect(error == .sendTimedOut(seconds: 0.5))
        } else {
            Issue.record("the send did not time out: \(String(describing: failure))")
        }
        #expect(sent >= 4 && sent < 1_000)
        #expect(waited >= .milliseconds(500))
        // The timed-out message was not counted as sent; the socket is still open, and a cancel ends it.
        #expect(socket.task.snapshot.socket?.messagesSent == sent)
        #expect(socket.task.state == .running)
        #expect(pool.cancel(id: "slow"))
        await #expect(throws: NetworkError.self) { for try await _ in socket {} }
        #expect(pool.activeTasks.isEmpty)
    }

    @Test(
        "wss over TLS: with the server's certificate trusted, an echo, its credential in no event and redacted in the inspector; untrusted, a secure-connection error"
    )
    func secure() async throws {
        let credentials = try await SelfSignedCertificate.make()
        defer { credentials.remove() }
        let peers = try await WebSocketPeers(tls: credentials)
        let port = try #require(peers.secure)
        var trusting = TLSConfiguration.makeClientConfiguration()
        trusting.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(credentials.certificate.path))
        let logger = InMemoryLogger()
        let inspector = PoolInspector()
        let pool = TaskPool(
            configuration: .init(
                transport: NIOTransport(configuration: .init(tls: trusting)), logger: logger, inspector: inspector))
        let token = "s3cret-WSS-token"
        let endpoint = SocketEndpoint(
            url: "wss://localhost:\(port)/echo", headers: ["Authorization": "Bearer \(token)"])
        let socket = try await pool.webSocket(endpoint, id: "secure")
        try await socket.send("over tls")
        var iterator = socket.makeAsyncIterator()
        #expect(try await iterator.next() == .text("over tls"))
        let details = try #require(inspector.task(id: "secure")?.details)
        #expect(details.requestHeaders.contains { $0.name == "Authorization" && $0.value == Redactor.placeholder })
        #expect(!String(describing: details).contains(token))
        await socket.close()
        #expect(socket.closeCode == .normalClosure)
        #expect(!logger.events.isEmpty)
        #expect(!String(describing: logger.events).contains(token))

        let untrusted = TaskPool(configuration: .init(transport: NIOTransport()))
        await #expect {
            _ = try await untrusted.webSocket(endpoint)
        } throws: { error in
            guard case .transport(let underlying) = error as? NetworkError else { return false }
            return (underlying as? URLError)?.code == .secureConnectionFailed
        }
        #expect(untrusted.activeTasks.isEmpty)
    }

    @Test("a server that stops answering: the keep-alive's ping finds no pong, and the socket fails")
    func stalled() async throws {
        let peers = try await WebSocketPeers.shared()
        let socket = try await pool().webSocket(
            SocketEndpoint(url: peers.hostile("/stall")), options: .init(pingInterval: 0.2, pongTimeout: 0.3))
        do {
            for try await _ in socket {}
            Issue.record("the reader did not fail")
        } catch NetworkError.transport(let error as WebSocketError) {
            #expect(error == .pongTimeout(seconds: 0.3))
        }
    }

    @Test("openings that never become a socket: no answer (the timeout), a wrong accept key, a 200, an ftp URL")
    func failedOpenings() async throws {
        let peers = try await WebSocketPeers.shared()
        let pool = pool()
        do {
            _ = try await pool.webSocket(SocketEndpoint(url: "ftp://127.0.0.1:\(peers.hostile)/x"))
            Issue.record("an ftp URL was opened")
        } catch {
            let refusal: URLError? = if case .transport(let error as URLError) = error { error } else { nil }
            #expect(refusal?.code == .unsupportedURL)
            #expect(refusal?.localizedDescription.contains("ws, wss, http and https URLs only, not ftp") == true)
        }
        do {
            _ = try await pool.webSocket(SocketEndpoint(url: peers.hostile("/silent"), timeout: 0.5))
            Issue.record("a silent server's opening did not fail")
        } catch {
            #expect(error.isTimeout, "\(error)")
        }
        do {
            _ = try await pool.webSocket(SocketEndpoint(url: peers.hostile("/bad-accept")))
            Issue.record("a wrong accept key was taken")
        } catch NetworkError.transport(let error as WebSocketError) {
            guard case .upgradeRefused = error else {
                Issue.record("\(error)")
                return
            }
        }
        do {
            _ = try await pool.webSocket(SocketEndpoint(url: peers.hostile("/ok")))
            Issue.record("a 200 was taken for a socket")
        } catch NetworkError.httpStatus(let response) {
            #expect(response.statusCode == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "hello")
        }
        #expect(pool.activeTasks.isEmpty)
    }

    @Test(
        "cancel at each point of the opening (connecting, the request out, the 101 on its way, just open): one end each, cancelled unless it opened first, nothing left",
        arguments: [0, 200, 1_000, 3_000, 10_000])
    func cancelWhileOpening(afterMicroseconds delay: Int) async throws {
        let peers = try await WebSocketPeers.shared()
        let logger = InMemoryLogger()
        let pool = pool(logger: logger)
        for (round, url) in [peers.hostile("/silent"), peers.real("/echo")].enumerated() {
            let id = "opening-\(round)"
            let opening = Task { try await pool.webSocket(SocketEndpoint(url: url), id: id) }
            // Once the task exists (a cancel before it would find nothing to cancel).
            var tries = 0
            while pool.task(id: id) == nil, tries < 1_000 {
                tries += 1
                await Task.yield()
            }
            if delay > 0 { try await Task.sleep(for: .microseconds(delay)) }
            #expect(pool.cancel(id: id))
            do {
                let socket = try await opening.value
                // It opened before the cancel reached it: the cancel ended the open socket.
                await #expect(throws: NetworkError.self) { for try await _ in socket {} }
                #expect(socket.task.state == .cancelled)
            } catch {
                #expect((error as? NetworkError)?.isCancelled == true, "\(url) after \(delay) µs: \(error)")
            }
        }
        #expect(logger.count(.cancelled) == 2)
        #expect(logger.count(.finished) + logger.count(.failed) == 0)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("cancel by id ends an open socket at once, cancelled, once; the connection closes")
    func cancelByID() async throws {
        let peers = try await WebSocketPeers.shared()
        let logger = InMemoryLogger()
        let pool = pool(logger: logger)
        let socket = try await pool.webSocket(SocketEndpoint(url: peers.real("/echo")), id: "live")
        #expect(pool.activeTasks.map(\.id) == ["live"])
        #expect(pool.cancel(id: "live"))
        do {
            for try await _ in socket {}
            Issue.record("the reader did not throw")
        } catch {
            #expect((error as? NetworkError)?.isCancelled == true)
        }
        await #expect(throws: NetworkError.self) { try await socket.send("late") }
        #expect(logger.count(.cancelled) == 1)
        #expect(pool.activeTasks.isEmpty)
    }
}
