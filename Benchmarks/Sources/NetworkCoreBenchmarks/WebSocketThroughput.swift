// The websocket suite: 1 KB binary messages echoed by a SwiftNIO server in a process of its own
// (WebSocketEcho), through three clients in turn, round by round, in one run:
//   - networkCore: a pool over NIOTransport, `pool.webSocket`, `send` awaited, messages read from the socket;
//   - nioWebSocket: bare SwiftNIO (NIOWebSocketClientUpgrader, the frame codec), frames written and awaited
//     from a Swift task, echoes handed to an AsyncStream: what a user of NIOWebSocket alone would write;
//   - websocketKit: vapor/websocket-kit's `WebSocket.connect`, `send` awaited, `onBinary` into an AsyncStream.
// Two shapes: one message in flight (send, await its echo), and a stream (every message sent while a
// reader takes the echoes). Messages a second by wall time, CPU a message by the process's own time
// (the server's is its own process's), and each round's ratio to bare NIOWebSocket.
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import NetworkCore
import NetworkCoreNIO
import WebSocketKit

/// The echo server, a child process, stopped when the suite ends.
final class EchoServer {
    let port: Int
    private let process: Process
    private let input: Pipe

    init() throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("WebSocketEcho")
        process = Process()
        process.executableURL = binary
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let data = output.fileHandleForReading.availableData
            guard !data.isEmpty else { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let port = Int(text.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
        else { throw URLError(.cannotConnectToHost) }
        self.port = port
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

/// One client's connection: sends a message, and hands the echoes over in order. `send` is called from
/// one Swift task and `next` from one other at most: the iterator `next` moves is its alone.
protocol EchoClient: Sendable {
    /// Sends the suite's message, in the form the client takes (made once, before the run).
    func send() async throws
    /// The next echo's length, or `nil` at the end.
    func next() async throws -> Int?
    func close() async
}

/// A pool over NIOTransport.
final class PoolEchoClient: EchoClient, @unchecked Sendable {  // the iterator: `next`'s task's alone
    let socket: NetworkCore.WebSocket
    let message: Data
    private var iterator: NetworkCore.WebSocket.Iterator

    init(pool: TaskPool, port: Int, message: ByteBuffer) async throws {
        self.message = Data(buffer: message)
        struct Echo: Endpoint {
            let port: Int
            var baseURL: String { "ws://127.0.0.1:\(port)" }
            var path: String { "echo" }
        }
        socket = try await pool.webSocket(Echo(port: port), options: .init(pingInterval: nil))
        iterator = socket.makeAsyncIterator()
    }

    func send() async throws { try await socket.send(message) }

    func next() async throws -> Int? {
        guard case .binary(let data)? = try await iterator.next() else { return nil }
        return data.count
    }

    func close() async { await socket.close() }
}

/// SwiftNIO's WebSocket client alone.
final class NIOEchoClient: EchoClient, @unchecked Sendable {  // the iterator: `next`'s task's alone
    final class Collector: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        let continuation: AsyncStream<ByteBuffer>.Continuation
        init(_ continuation: AsyncStream<ByteBuffer>.Continuation) { self.continuation = continuation }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            if frame.opcode == .binary { continuation.yield(frame.data) }
            if frame.opcode == .connectionClose { continuation.finish() }
        }
        func channelInactive(context: ChannelHandlerContext) { continuation.finish() }
    }

    let channel: any Channel
    let message: ByteBuffer
    private var iterator: AsyncStream<ByteBuffer>.Iterator

    init(group: any EventLoopGroup, port: Int, message: ByteBuffer) async throws {
        self.message = message
        let (stream, continuation) = AsyncStream<ByteBuffer>.makeStream()
        let upgraded = group.next().makePromise(of: Void.self)
        let channel = try await ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                let upgrader = NIOWebSocketClientUpgrader(
                    requestKey: "dGhlIHNhbXBsZSBub25jZQ==", maxFrameSize: 1 << 24
                ) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(Collector(continuation))
                        upgraded.succeed()
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(
                        withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/echo")
        head.headers.add(name: "Host", value: "127.0.0.1:\(port)")
        head.headers.add(name: "Content-Length", value: "0")
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
        try await upgraded.futureResult.get()
        self.channel = channel
        iterator = stream.makeAsyncIterator()
    }

    func send() async throws {
        try await channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: message))
            .get()
    }

    func next() async throws -> Int? { await iterator.next()?.readableBytes }

    func close() async {
        let close = WebSocketFrame(
            fin: true, opcode: .connectionClose, maskKey: .random(), data: ByteBuffer(bytes: [3, 232]))
        try? await channel.writeAndFlush(close).get()
        try? await channel.closeFuture.get()
    }
}

/// vapor/websocket-kit.
final class KitEchoClient: EchoClient, @unchecked Sendable {  // the iterator: `next`'s task's alone
    let socket: WebSocketKit.WebSocket
    let message: [UInt8]
    private var iterator: AsyncStream<ByteBuffer>.Iterator

    init(group: any EventLoopGroup, port: Int, message: ByteBuffer) async throws {
        self.message = Array(buffer: message)
        let (stream, continuation) = AsyncStream<ByteBuffer>.makeStream()
        let opened = group.next().makePromise(of: WebSocketKit.WebSocket.self)
        try await WebSocketKit.WebSocket.connect(to: "ws://127.0.0.1:\(port)/echo", on: group) { socket in
            socket.onBinary { _, buffer in continuation.yield(buffer) }
            socket.onClose.whenComplete { _ in continuation.finish() }
            opened.succeed(socket)
        }.get()
        socket = try await opened.futureResult.get()
        iterator = stream.makeAsyncIterator()
    }

    func send() async throws { try await socket.send(message) }

    func next() async throws -> Int? { await iterator.next()?.readableBytes }

    func close() async { try? await socket.close(code: .normalClosure) }
}

/// What one client did in one run: messages a second, CPU microseconds a message.
struct EchoRun {
    let messagesPerSecond: Double
    let cpuPerMessage: Double
}

/// `count` messages through `client`: one in flight (`streamed` false) or all sent while a reader takes the
/// echoes; every echo checked for its length, `length`.
func echo(_ client: any EchoClient, count: Int, length: Int, streamed: Bool) async throws -> EchoRun {
    let cpu = cpuSeconds()
    let start = now()
    if streamed {
        let sender = Task { for _ in 0..<count { try await client.send() } }
        for _ in 0..<count {
            guard try await client.next() == length else { throw URLError(.badServerResponse) }
        }
        try await sender.value
    } else {
        for _ in 0..<count {
            try await client.send()
            guard try await client.next() == length else { throw URLError(.badServerResponse) }
        }
    }
    let seconds = Double(now() - start) / 1e9
    return EchoRun(
        messagesPerSecond: Double(count) / seconds, cpuPerMessage: (cpuSeconds() - cpu) / Double(count) * 1e6)
}

func webSocketThroughput(_ options: Options) async throws -> [Row] {
    let server = try EchoServer()
    defer { server.stop() }
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let transport = NIOTransport(eventLoopGroup: group)
    let pool = TaskPool(configuration: .init(transport: transport))
    let message = ByteBuffer(repeating: 0x61, count: 1024)
    let rounds = max(3, options.rounds)
    print("\n## WebSocket: 1 KB binary messages echoed by a SwiftNIO server (its own process), \(rounds) rounds\n")
    var rows: [Row] = []
    for streamed in [false, true] {
        let count = streamed ? 20_000 : 5_000
        let shape = streamed ? "stream" : "1 in flight"
        var runs: [String: [EchoRun]] = [:]
        var ratios: [String: [Double]] = [:]
        for _ in 0..<rounds {
            var round: [String: EchoRun] = [:]
            for name in ["nioWebSocket", "networkCore", "websocketKit"] {
                let client: any EchoClient =
                    switch name {
                    case "networkCore": try await PoolEchoClient(pool: pool, port: server.port, message: message)
                    case "nioWebSocket": try await NIOEchoClient(group: group, port: server.port, message: message)
                    default: try await KitEchoClient(group: group, port: server.port, message: message)
                    }
                // A warm-up of 500 messages on the same connection, then the measured run.
                let length = message.readableBytes
                _ = try await echo(client, count: 500, length: length, streamed: streamed)
                round[name] = try await echo(client, count: count, length: length, streamed: streamed)
                await client.close()
            }
            for (name, run) in round {
                runs[name, default: []].append(run)
                ratios[name, default: []].append(run.messagesPerSecond / round["nioWebSocket"]!.messagesPerSecond)
            }
        }
        print("shape          client        messages/s  CPU µs/message  × NIOWebSocket (median of rounds, min–max)")
        for name in ["nioWebSocket", "networkCore", "websocketKit"] {
            let rate = median(runs[name]!.map(\.messagesPerSecond))
            let cpu = median(runs[name]!.map(\.cpuPerMessage))
            let ratio = ratios[name]!
            print(
                padded(shape, 15) + padded(name, 14) + padded(fmt(rate), 12) + padded(fmt(cpu, 1), 16)
                    + "\(fmt(median(ratio), 3)) (\(fmt(ratio.min()!, 3))–\(fmt(ratio.max()!, 3)))")
            rows.append(
                Row(
                    suite: "websocket", client: name, payload: "1 KB binary, \(shape)", inflight: streamed ? count : 1,
                    rps: rate, p50_us: nil, p99_us: nil, cpu_us_per_req: cpu, rps_ratio_vs_urlsession: nil,
                    cpu_ratio_vs_urlsession: nil,
                    detail: [
                        "ratio_vs_nio_median": median(ratio), "ratio_vs_nio_min": ratio.min()!,
                        "ratio_vs_nio_max": ratio.max()!, "messages": Double(count),
                    ]))
        }
    }
    await transport.shutdown()
    try await group.shutdownGracefully()
    return rows
}
