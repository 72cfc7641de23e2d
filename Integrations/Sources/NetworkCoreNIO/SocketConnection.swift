import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOWebSocket
import NetworkCore
import NetworkCoreNIOSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NIOTransport {
    /// Opens a WebSocket on a connection of its own (never one kept for requests): the opening request
    /// with `Upgrade: websocket`, its answer checked (`Sec-WebSocket-Accept`, the subprotocol), then
    /// frames both ways with SwiftNIO's frame codec and NetworkCore's ``WebSocketFrameReader``. An answer
    /// other than `101` is reported as any answer, with its body. The request's `timeoutInterval` bounds
    /// connecting and the wait for the answer.
    public func startWebSocket(
        _ request: URLRequest, options: WebSocketOptions, events: TransportEvents
    ) -> any WebSocketConnection {
        let socket = SocketConnection(options: options, events: events)
        socket.transfer.attach(
            connections.group.task { [self] in
                do {
                    try await open(request, socket: socket)
                } catch {
                    socket.failOpening(FailureTranslation.translate(error, cancelled: socket.transfer.isCancelled))
                }
            })
        return socket
    }

    private func open(_ request: URLRequest, socket: SocketConnection) async throws {
        guard let url = request.url, let target = Target(webSocket: url) else {
            throw Self.unusable(request.url, webSocket: true)
        }
        var head = try Self.head(of: request, target: target, body: .none)
        let offered = socket.options.subprotocols
        if !offered.isEmpty {
            head.headers.replaceOrAdd(name: "Sec-WebSocket-Protocol", value: offered.joined(separator: ", "))
        }
        if let compression = socket.options.compression {
            head.headers.replaceOrAdd(name: "Sec-WebSocket-Extensions", value: compression.offer)
        }
        let timeout = Self.timeout(of: request)
        let limit = socket.options.maximumMessageBytes ?? Int(UInt32.max)
        let (channel, _, _) = try await connections.connect(
            to: target.origin, pins: pins(for: target.origin.host, events: socket.events),
            timeout: timeout ?? .seconds(60), transfer: socket.transfer
        ) { channel, _ in
            let pipeline = channel.pipeline.syncOperations
            let endHold = OpeningEndHold()
            let encoder = HTTPRequestEncoder()
            let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
            let switching = SwitchingWatch(hold: endHold)
            let upgrader = NIOWebSocketClientUpgrader(
                maxFrameSize: min(max(limit, 125), Int(UInt32.max)), automaticErrorHandling: false
            ) { channel, response in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        SocketHandler(
                            socket: socket, response: response, url: url, offered: offered, loop: channel.eventLoop))
                }
            }
            let upgrade = NIOHTTPClientUpgradeHandler(
                upgraders: [upgrader], httpHandlers: [encoder, decoder, switching],
                upgradeCompletionHandler: { context in
                    context.channel.pipeline.syncOperations.removeHandler(name: OpeningReader.name, promise: nil)
                    endHold.release()
                })
            try pipeline.addHandler(endHold)
            try pipeline.addHandler(encoder)
            try pipeline.addHandler(decoder)
            try pipeline.addHandler(switching)
            try pipeline.addHandler(upgrade)
            try pipeline.addHandler(OpeningReader(socket: socket, url: url), name: OpeningReader.name)
        }
        guard socket.transfer.attach(channel) else {
            channel.close(promise: nil)
            throw CancellationError()
        }
        socket.opening(on: channel, timeout: timeout)
        // Both parts in one turn of the connection's loop: the answer, read in between, would begin the
        // upgrade while the request's end is still to be written.
        let opening = head
        try await channel.eventLoop.flatSubmit {
            channel.write(HTTPClientRequestPart.head(opening), promise: nil)
            return channel.writeAndFlush(HTTPClientRequestPart.end(nil))
        }.get()
    }
}

extension Target {
    /// Where a WebSocket's opening request goes: `ws` as `http`, `wss` as `https`.
    init?(webSocket url: URL) {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        switch components?.scheme?.lowercased() {
        case "ws": components?.scheme = "http"
        case "wss": components?.scheme = "https"
        default: break
        }
        guard let plain = components?.url else { return nil }
        self.init(plain)
    }
}

/// One WebSocket of ``NIOTransport``: the pool's handle to send, close and cancel, and the state its
/// connection's handler reports to. Its end is reported to the pool once, whichever way it comes.
final class SocketConnection: WebSocketConnection {
    let options: WebSocketOptions
    let events: TransportEvents
    /// The Swift task that connects, and the connection once made: a cancel stops either.
    let transfer = Transfer()
    private struct State {
        var channel: (any Channel)?
        var open = false
        var closing = false
        var ended = false
        var handler: NIOLoopBound<SocketHandler>?
        var outbound = Outbound()
    }

    /// The messages the app sent that the connection has not taken yet, in order. The connection's loop
    /// takes them while the channel is writable; a sender waits while more than ``pendingLimit`` bytes wait
    /// here, until its own message is taken (or its wait passes ``WebSocketOptions/sendTimeout``).
    private struct Outbound {
        var queue: [(id: Int, message: WebSocketMessage)] = []
        /// The index of the first message not yet taken.
        var head = 0
        var bytes = 0
        var nextID = 0
        /// A drain is scheduled or running on the loop.
        var draining = false
        /// The senders waiting for their message to be taken, by its id.
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]

        mutating func take() -> (message: WebSocketMessage, waiter: CheckedContinuation<Void, any Error>?)? {
            guard head < queue.count else {
                queue.removeAll(keepingCapacity: true)
                head = 0
                return nil
            }
            let (id, message) = queue[head]
            head += 1
            bytes -= message.byteCount
            return (message, waiters.removeValue(forKey: id))
        }

        /// Withdraws a message not taken yet; whether it was still waiting.
        mutating func withdraw(_ id: Int) -> Bool {
            guard let index = queue[head...].firstIndex(where: { $0.id == id }) else { return false }
            bytes -= queue[index].message.byteCount
            queue.remove(at: index)
            return true
        }

        /// Everything still waiting is dropped; the waiting senders are returned, to be failed.
        mutating func clear() -> [CheckedContinuation<Void, any Error>] {
            let waiting = Array(waiters.values)
            waiters = [:]
            queue = []
            head = 0
            bytes = 0
            return waiting
        }
    }

    /// How many bytes of messages may wait for the connection (beyond the channel's own buffer) before a
    /// sender waits.
    static let pendingLimit = 256 << 10
    private let state = NIOLockedValueBox(State())

    init(options: WebSocketOptions, events: TransportEvents) {
        self.options = options
        self.events = events
    }

    /// The connection is made and the opening request about to go: a deadline for its answer.
    /// Whether the opening request is under way on its connection (``opening(on:timeout:)``): before, a
    /// connection that closes is the connecting's own failure (a pin mismatch, a failed handshake), which the
    /// connecting reports.
    var hasBegunOpening: Bool { state.withLockedValue { $0.channel != nil } }

    func opening(on channel: any Channel, timeout: TimeAmount?) {
        state.withLockedValue { $0.channel = channel }
        guard let timeout else { return }
        channel.eventLoop.scheduleTask(in: timeout) { [weak self] in
            guard let self, !state.withLockedValue({ $0.open || $0.ended }) else { return }
            end(.failure(URLError(.timedOut)))
            channel.close(promise: nil)
        }
    }

    /// The socket is open: its handler takes the frames.
    func opened(_ handler: NIOLoopBound<SocketHandler>) {
        state.withLockedValue {
            $0.open = true
            $0.handler = handler
        }
    }

    /// The connection closed: its handler is let go (it holds this socket: neither would be freed).
    func closed() {
        state.withLockedValue {
            $0.handler = nil
            $0.channel = nil
        }
    }

    /// The opening failed before any answer (or the answer was refused): reported once.
    func failOpening(_ error: any Error) {
        end(.failure(error))
        state.withLockedValue { $0.channel }?.close(promise: nil)
    }

    /// Reports the end once: `finish()` after a closing handshake, `fail` otherwise. Returns whether this
    /// call ended it.
    @discardableResult
    func end(_ result: Result<Void, any Error>) -> Bool {
        let (first, waiting) = state.withLockedValue { state -> (Bool, [CheckedContinuation<Void, any Error>]) in
            defer { state.ended = true }
            return (!state.ended, state.outbound.clear())
        }
        for sender in waiting { sender.resume(throwing: WebSocketError.notOpen) }
        guard first else { return false }
        switch result {
        case .success: events.finish()
        case .failure(let error): events.fail(error)
        }
        return true
    }

    /// Queues the message for the connection's loop, which makes frames of the messages in the order sent
    /// (a compressor's context follows them in that order) and writes them while the channel is writable.
    /// Returns at once unless more than ``pendingLimit`` bytes wait: then once this message is taken, or
    /// throws ``WebSocketError/sendTimedOut(seconds:)`` after the options' `sendTimeout`, the message
    /// withdrawn unsent.
    func send(_ message: WebSocketMessage) async throws {
        let queued = state.withLockedValue { state -> (handler: NIOLoopBound<SocketHandler>, drain: Bool, id: Int?)? in
            guard state.open, !state.closing, !state.ended, let handler = state.handler else { return nil }
            let id = state.outbound.nextID
            state.outbound.nextID += 1
            state.outbound.queue.append((id, message))
            state.outbound.bytes += message.byteCount
            let drain = !state.outbound.draining
            state.outbound.draining = true
            return (handler, drain, state.outbound.bytes > Self.pendingLimit ? id : nil)
        }
        guard let queued else { throw WebSocketError.notOpen }
        let handler = queued.handler
        if queued.drain { handler.eventLoop.execute { handler.value.drain() } }
        guard let id = queued.id else { return }
        let timeout = max(0, options.sendTimeout)
        try await withCheckedThrowingContinuation { (sender: CheckedContinuation<Void, any Error>) in
            let waiting = state.withLockedValue { state -> Bool in
                guard !state.ended, state.outbound.queue[state.outbound.head...].contains(where: { $0.id == id })
                else { return false }
                state.outbound.waiters[id] = sender
                return true
            }
            guard waiting else {
                let ended = state.withLockedValue { $0.ended }
                return ended ? sender.resume(throwing: WebSocketError.notOpen) : sender.resume()
            }
            handler.eventLoop.scheduleTask(in: .nanoseconds(Int64(timeout * 1e9))) { [weak self] in
                guard let self else { return }
                let late = state.withLockedValue { state -> CheckedContinuation<Void, any Error>? in
                    guard let sender = state.outbound.waiters.removeValue(forKey: id) else { return nil }
                    _ = state.outbound.withdraw(id)
                    return sender
                }
                late?.resume(throwing: WebSocketError.sendTimedOut(seconds: timeout))
            }
        }
    }

    /// The next message for the connection's loop to write, the sender waiting for it let go; `nil` when
    /// none waits (the drain is over: the next send schedules another).
    func nextOutbound() -> WebSocketMessage? {
        let next = state.withLockedValue { state -> (WebSocketMessage, CheckedContinuation<Void, any Error>?)? in
            guard let next = state.outbound.take() else {
                state.outbound.draining = false
                return nil
            }
            return next
        }
        guard let (message, sender) = next else { return nil }
        sender?.resume()
        return message
    }

    /// The socket is closing by the app's cancel: what waits to be sent is dropped, its senders failed.
    func dropOutbound() {
        for sender in state.withLockedValue({ $0.outbound.clear() }) { sender.resume(throwing: WebSocketError.notOpen) }
    }

    func close(_ code: WebSocketCloseCode, reason: String) {
        let handler = state.withLockedValue { state -> NIOLoopBound<SocketHandler>? in
            guard !state.closing else { return nil }
            state.closing = true
            return state.handler
        }
        guard let handler else { return }
        handler.eventLoop.execute { handler.value.close(code, reason: reason, thenDrop: false) }
    }

    /// The task ended (cancelled, or past its deadline): a close frame going away, then the connection
    /// dropped. Before the socket is open, the connecting stops.
    func cancel() {
        let handler = state.withLockedValue { state -> NIOLoopBound<SocketHandler>? in
            state.closing = true
            return state.handler
        }
        guard let handler else { return transfer.cancel() }
        handler.eventLoop.execute { handler.value.close(.goingAway, reason: "", thenDrop: true) }
    }

    func pauseReceiving() {
        _ = state.withLockedValue { $0.channel }?.setOption(ChannelOptions.autoRead, value: false)
    }

    func resumeReceiving() {
        guard let channel = state.withLockedValue({ $0.channel }) else { return }
        channel.setOption(ChannelOptions.autoRead, value: true).whenSuccess { channel.read() }
    }
}

/// Holds the connection's end back from the HTTP decoder while a `101` is being taken.
///
/// NIO's upgrade handler removes the HTTP decoder in a later turn of the loop, and the decoder forwards the
/// bytes after the `101` (the server's first frames) only if it has not yet seen the connection's end:
/// a server that sends its `101`, messages and its end in one go would lose the messages. So from the
/// `101` on, the end waits here until the HTTP handlers are gone (the bytes are with the upgrade handler
/// by then), then goes on; the socket's handler, added after, finds the connection closed and ends the
/// socket once the messages are delivered. Leaves the pipeline when released.
final class OpeningEndHold: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    private var context: ChannelHandlerContext?
    /// A `101` came: the end is held until ``release()``.
    private var holding = false
    private var held = false

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// The answer is a `101`: from now on the connection's end waits for ``release()``.
    func hold() { holding = true }

    /// The HTTP handlers are gone: a held end goes on, and this handler leaves.
    func release() {
        guard let context else { return }
        holding = false
        if held {
            held = false
            context.fireChannelInactive()
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if holding {
            held = true
        } else {
            context.fireChannelInactive()
        }
    }
}

/// Tells the ``OpeningEndHold`` when the answer is a `101`; one of the HTTP handlers the upgrade removes.
final class SwitchingWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    private let hold: OpeningEndHold

    init(hold: OpeningEndHold) { self.hold = hold }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data), head.status == .switchingProtocols { hold.hold() }
        context.fireChannelRead(data)
    }
}

/// Reads the answer to the opening request when it is not an upgrade: reported as any answer, with its
/// body, then the connection closes. Leaves the pipeline once the upgrade is done.
final class OpeningReader: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    static let name = "NetworkCore.OpeningReader"
    private let socket: SocketConnection
    private let url: URL
    private var refused: String?
    private var reading = true

    init(socket: SocketConnection, url: URL) {
        self.socket = socket
        self.url = url
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard reading else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            if let refused {
                reading = false
                socket.failOpening(WebSocketError.upgradeRefused(refused))
                return
            }
            let status = Int(head.status.code)
            let fields = ResponseHead(status: status, version: head.version, headers: head.headers, url: url)
            if !socket.events.receive(head: fields) { stop(context) }
        case .body(let body):
            if !socket.events.receive(body: Data(sharing: body)) { stop(context) }
        case .end:
            reading = false
            socket.end(.success(()))
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOHTTPClientUpgradeError, error == .upgraderDeniedUpgrade {
            refused = "its Sec-WebSocket-Accept does not answer the request's key"
            return
        }
        reading = false
        socket.failOpening(FailureTranslation.translate(error, cancelled: socket.transfer.isCancelled))
    }

    func channelInactive(context: ChannelHandlerContext) {
        // (After a 101, the end is held until this handler has left: see OpeningEndHold.) A connection closed
        // before the opening began was closed by the connecting, whose error is the socket's end.
        if reading, socket.hasBegunOpening { socket.failOpening(URLError(.networkConnectionLost)) }
        reading = false
        context.fireChannelInactive()
    }

    private func stop(_ context: ChannelHandlerContext) {
        reading = false
        context.close(promise: nil)
    }
}

/// An open socket's frames on its connection's event loop: the server's read by a ``WebSocketFrameReader``
/// (pings answered, messages passed to the pool, rules enforced with a close frame), the keep-alive, and
/// the closing handshake either way.
final class SocketHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let socket: SocketConnection
    private let response: HTTPResponseHead
    private let url: URL
    private let offered: [String]
    /// The connection's event loop.
    private let loop: any EventLoop
    private var reader: WebSocketFrameReader
    /// permessage-deflate, when the server agreed to it.
    private var deflate: PerMessageDeflate?
    private var context: ChannelHandlerContext?
    /// What ends the socket once the connection closes: set by the closing handshake or a failure;
    /// a connection lost with none set is an abnormal closure.
    private var outcome: Result<Void, any Error>?
    private var sentClose = false
    private var dropAfterClose = false
    private var heard = false
    private var keepAlive: RepeatedTask?
    private var pongDeadline: Scheduled<Void>?
    private var closeDeadline: Scheduled<Void>?

    init(socket: SocketConnection, response: HTTPResponseHead, url: URL, offered: [String], loop: any EventLoop) {
        self.socket = socket
        self.loop = loop
        self.response = response
        self.url = url
        self.offered = offered
        reader = WebSocketFrameReader(maximumMessageBytes: socket.options.maximumMessageBytes ?? .max)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        do {
            let chosen = response.headers.first(name: "Sec-WebSocket-Protocol")
            if let chosen, !offered.contains(chosen) {
                throw WebSocketError.upgradeRefused("the server chose the subprotocol \(chosen), which was not offered")
            }
            if let agreement = try PerMessageDeflate.agreement(
                from: response.headers, offer: socket.options.compression)
            {
                deflate = try PerMessageDeflate(agreement)
                reader = WebSocketFrameReader(
                    maximumMessageBytes: reader.maximumMessageBytes, acceptsCompressedMessages: true)
            }
        } catch {
            outcome = .failure(error)
            socket.end(.failure(error))
            context.close(promise: nil)
            return
        }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        socket.opened(bound)
        let head = ResponseHead(status: 101, version: response.version, headers: response.headers, url: url)
        guard socket.events.receive(head: head) else {
            close(.goingAway, reason: "", thenDrop: true)
            return
        }
        if let interval = socket.options.pingInterval, interval > 0 {
            let every = TimeAmount.nanoseconds(Int64(interval * 1e9))
            keepAlive = context.eventLoop.scheduleRepeatedTask(initialDelay: every, delay: every) { _ in
                bound.value.keepAliveTick()
            }
        }
        if !context.channel.isActive {
            // The connection closed while NIO's upgrade handler was still taking the 101: this handler will
            // not be told, so the socket ends here, in the next turn of the loop (after the frames that
            // came with the 101, which the upgrade handler passes on in this one), as a lost connection.
            context.eventLoop.execute { bound.value.connectionClosed() }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        heard = true
        let read = WebSocketFrameReader.Frame(
            fin: frame.fin, opcode: UInt8(webSocketOpcode: frame.opcode),
            reservedBits: (frame.rsv1 ? 4 : 0) | (frame.rsv2 ? 2 : 0) | (frame.rsv3 ? 1 : 0),
            masked: frame.maskKey != nil, payload: Data(sharing: frame.unmaskedData))
        switch reader.read(read) {
        case .none:
            break
        case .message(let message):
            deliver(message)
        case .compressedMessage(let isText, let payload):
            guard let deflate else { return fail(.protocolError, "a compressed message", context: context) }
            do {
                let inflated = try deflate.inflate(payload, limit: reader.maximumMessageBytes)
                switch reader.inflated(inflated, isText: isText) {
                case .message(let message): deliver(message)
                case .fail(let code, let detail): fail(code, detail, context: context)
                default: break
                }
            } catch WebSocketError.protocolViolation(let code, let detail) {
                fail(code, detail, context: context)
            } catch {
                fail(
                    .messageTooBig, "a message of over \(reader.maximumMessageBytes) bytes, inflated", context: context)
            }
        case .ping(let payload):
            guard !sentClose else { return }
            write(.pong, Data(payload))
        case .pong:
            pongDeadline?.cancel()
            pongDeadline = nil
        case .close(let code, let reason):
            socket.events.receive(closeCode: code, reason: reason)
            if outcome == nil {
                let normal = code == .normalClosure || code == .goingAway || code == .noStatusReceived
                outcome = normal ? .success(()) : .failure(WebSocketError.closed(code, reason: reason))
            }
            if !sentClose {
                // What the app sent before goes first; then the code echoed, as RFC 6455 §5.5.1 asks, and the
                // server closes the connection.
                drain(whole: true)
                sentClose = true
                write(.connectionClose, WebSocketFrameReader.closePayload(code, reason: ""))
            }
            context.close(promise: nil)
        case .fail(let code, let detail):
            fail(code, detail, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOWebSocketError {
            switch error {
            case .invalidFrameLength:
                fail(.messageTooBig, "a frame of over \(reader.maximumMessageBytes) bytes", context: context)
            default:
                fail(.protocolError, "\(error)", context: context)
            }
            return
        }
        // A reset or a failed read is a connection lost without a close frame, as a plain close is.
        if outcome == nil {
            let detail = FailureTranslation.translate(error, cancelled: false).localizedDescription
            outcome = .failure(WebSocketError.closed(.abnormalClosure, reason: "the connection was lost: \(detail)"))
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connectionClosed()
        context.fireChannelInactive()
    }

    /// The connection is closed: the socket ends with the outcome set (by the closing handshake or a
    /// failure), or as lost; its timers stop, and it lets go of this handler.
    private func connectionClosed() {
        keepAlive?.cancel()
        pongDeadline?.cancel()
        closeDeadline?.cancel()
        socket.end(outcome ?? .failure(WebSocketError.closed(.abnormalClosure, reason: "the connection was lost")))
        socket.closed()
        keepAlive = nil
        context = nil
    }

    /// Passes a message on to the pool, unless the socket is ending.
    private func deliver(_ message: WebSocketMessage) {
        guard outcome == nil else { return }
        if !socket.events.receive(message: message) { close(.goingAway, reason: "", thenDrop: true) }
    }

    /// Writes the messages the app sent, in order, while the channel is writable (all of them when
    /// `whole`, before a close frame), then flushes once. What is left waits for the channel to drain
    /// (``channelWritabilityChanged(context:)``).
    func drain(whole: Bool = false) {
        guard let context, !sentClose else { return socket.dropOutbound() }
        var wrote = false
        while whole || context.channel.isWritable, let message = socket.nextOutbound() {
            do {
                try write(message, context: context)
                wrote = true
            } catch {
                context.fireErrorCaught(error)
                return
            }
        }
        if wrote { context.flush() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { drain() }
        context.fireChannelWritabilityChanged()
    }

    /// Writes a message as one frame, compressed when permessage-deflate was agreed on; flushed by the caller.
    private func write(_ message: WebSocketMessage, context: ChannelHandlerContext) throws {
        let allocator = context.channel.allocator
        var payload: ByteBuffer
        let opcode: WebSocketOpcode
        switch message {
        case .text(let text):
            payload = allocator.buffer(string: text)
            opcode = .text
        case .binary(let data):
            payload = allocator.buffer(bytes: data)
            opcode = .binary
        }
        var compressed = false
        // An empty message goes as it is: zlib has nothing to flush for it.
        if let deflate, payload.readableBytes > 0 {
            payload = try deflate.compress(payload, allocator: allocator)
            compressed = true
        }
        let frame = WebSocketFrame(fin: true, rsv1: compressed, opcode: opcode, maskKey: .random(), data: payload)
        context.write(wrapOutboundOut(frame), promise: nil)
    }

    /// Sends a close frame with `code` and waits for the server's (or drops the connection at once when
    /// `thenDrop`, as a cancel does), the connection closed after the close timeout at the latest.
    func close(_ code: WebSocketCloseCode, reason: String, thenDrop: Bool) {
        guard let context, context.channel.isActive else { return socket.dropOutbound() }
        // The app's close goes after the messages it sent before; a cancel drops them.
        if thenDrop { socket.dropOutbound() } else { drain(whole: true) }
        if !sentClose {
            sentClose = true
            write(.connectionClose, WebSocketFrameReader.closePayload(code, reason: reason))
        }
        if thenDrop {
            dropAfterClose = true
            context.close(promise: nil)
            return
        }
        guard closeDeadline == nil else { return }
        let wait = TimeAmount.nanoseconds(Int64(max(0, socket.options.closeTimeout) * 1e9))
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        closeDeadline = context.eventLoop.scheduleTask(in: wait) {
            let handler = bound.value
            if handler.outcome == nil { handler.outcome = .success(()) }
            handler.context?.close(promise: nil)
        }
    }

    /// The server broke a rule: a close frame with `code`, the connection dropped, the socket failed.
    private func fail(_ code: WebSocketCloseCode, _ detail: String, context: ChannelHandlerContext) {
        if outcome == nil {
            outcome = .failure(
                code == .messageTooBig
                    ? NetworkError.responseTooLarge(limit: reader.maximumMessageBytes)
                    : WebSocketError.protocolViolation(code, detail))
        }
        if !sentClose {
            // What the app sent before the server broke the rule goes first.
            drain(whole: true)
            sentClose = true
            write(.connectionClose, WebSocketFrameReader.closePayload(code, reason: ""))
        }
        context.close(promise: nil)
    }

    /// Every ping interval: a silent connection gets a ping, and must answer within the pong timeout.
    private func keepAliveTick() {
        guard let context, pongDeadline == nil, !sentClose else { return }
        defer { heard = false }
        guard !heard else { return }
        write(.ping, Data("networkcore".utf8))
        let timeout = socket.options.pongTimeout
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        pongDeadline = context.eventLoop.scheduleTask(in: TimeAmount.nanoseconds(Int64(max(0, timeout) * 1e9))) {
            let handler = bound.value
            if handler.outcome == nil { handler.outcome = .failure(WebSocketError.pongTimeout(seconds: timeout)) }
            handler.context?.close(promise: nil)
        }
    }

    private func write(_ opcode: WebSocketOpcode, _ payload: Data) {
        guard let context else { return }
        let frame = WebSocketFrame(
            fin: true, opcode: opcode, maskKey: .random(), data: context.channel.allocator.buffer(bytes: payload))
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }
}
