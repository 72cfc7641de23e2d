// A WebSocket echo server for the websocket suite: SwiftNIO's own server upgrader and frame codec on one
// event-loop thread, on a free port of 127.0.0.1, in a process of its own so that the client's CPU is the
// benchmark process's alone. Prints "port N" once it listens; stops when its standard input closes.
// Every text or binary frame goes back as it came (unmasked); a ping gets its pong, a close its close.
// It agrees to no extension, so every client sends and receives plain frames.
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

final class Echo: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary, .continuation:
            context.write(
                wrapOutboundOut(WebSocketFrame(fin: frame.fin, opcode: frame.opcode, data: frame.unmaskedData)),
                promise: nil)
        case .ping:
            context.write(
                wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            var payload = frame.unmaskedData
            let code = payload.readSlice(length: min(2, payload.readableBytes)) ?? ByteBuffer()
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: code)))
                .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) { context.flush() }
}

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let upgrader = NIOWebSocketServerUpgrader(
    maxFrameSize: 1 << 24, shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
    upgradePipelineHandler: { channel, _ in
        channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Echo()) }
    })
let server = try ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 256)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
        }
    }
    .bind(host: "127.0.0.1", port: 0).wait()
FileHandle.standardOutput.write(Data("port \(server.localAddress?.port ?? 0)\n".utf8))
// Until the benchmark that started it closes standard input (or is gone).
while FileHandle.standardInput.availableData.count > 0 {}
try server.close().wait()
try group.syncShutdownGracefully()
