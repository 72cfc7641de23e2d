import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NetworkCore
import NetworkCoreNIOSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request and its response on a connection: its head, body and end go to the transfer's events,
/// and how the exchange ended.
///
/// Made by the transport's Swift task; its mutable state is touched on the connection's event loop only,
/// but for ``isOver``, which is locked.
final class Exchange: @unchecked Sendable {
    /// How an exchange ended for the transfer.
    enum Outcome {
        /// The answer arrived whole.
        case answered
        /// The events took no more (the task ended, or the answer is too large): report nothing more.
        case stopped
    }

    /// How an exchange ended, and whether its connection can serve another.
    struct End {
        let outcome: Outcome
        let reusable: Bool
    }

    let request: URLRequest
    let body: RequestBody
    let events: TransportEvents
    let timeout: TimeAmount?
    let promise: EventLoopPromise<End>

    /// Whether any of the response has arrived (event loop only).
    var receivedAnything = false
    /// Whether the whole request has been written (event loop only).
    var requestSent = false
    private var keepAlive = true
    private let over = NIOLockedValueBox(false)

    init(
        request: URLRequest, body: RequestBody, events: TransportEvents, timeout: TimeAmount?,
        promise: EventLoopPromise<End>
    ) {
        self.request = request
        self.body = body
        self.events = events
        self.timeout = timeout
        self.promise = promise
    }

    /// Whether the exchange has ended (the server answered whole, or it failed): the rest of the
    /// request's body is not sent.
    var isOver: Bool { over.withLockedValue { $0 } }

    /// The response's head arrived; returns whether to read on (`false`: the transfer is over).
    func receive(head: HTTPResponseHead) -> Bool {
        receivedAnything = true
        keepAlive = head.isKeepAlive
        let status = Int(head.status.code)
        return events.receive(
            head: ResponseHead(status: status, version: head.version, headers: head.headers, url: request.url))
    }

    /// A piece of the body arrived; returns whether to read on.
    func receive(body: ByteBuffer) -> Bool {
        events.receive(body: Data(sharing: body))
    }

    /// The response ended: the exchange's outcome; its connection serves another when both sides kept it.
    func end() {
        let end = End(outcome: .answered, reusable: keepAlive && requestSent)
        settle { $0.succeed(end) }
    }

    /// The transfer is over before the response's end: the connection closes.
    func stop() {
        settle { $0.succeed(End(outcome: .stopped, reusable: false)) }
    }

    /// The exchange failed: on the connection, or before it began (its start could not be written to a
    /// connection that had closed).
    func fail(_ error: any Error) {
        settle { $0.fail(error) }
    }

    /// Ends the exchange with `body`, the first time only.
    private func settle(_ body: (EventLoopPromise<End>) -> Void) {
        let first = over.withLockedValue { over in
            defer { over = true }
            return !over
        }
        if first { body(promise) }
    }
}

/// The last handler of a connection's pipeline: runs one ``Exchange`` at a time, reports its response as
/// it is read, holds reads while the transfer is paused, and ends the exchange when the server is silent
/// for longer than its timeout.
final class ExchangeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Outgoing
    typealias OutboundOut = HTTPClientRequestPart

    /// What the transport writes: an exchange's start with the request's head, body pieces, the end.
    enum Outgoing {
        case begin(Exchange, HTTPRequestHead)
        case body(ByteBuffer)
        case end
    }

    /// Pausing and resuming reads, sent as a user outbound event: look at the transfer's wish.
    enum Control {
        case look(NIOLockedValueBox<Bool>)
    }

    private var exchange: Exchange?
    private var paused = false
    private var readHeld = false
    private var lastActivity = NIODeadline.now()
    private var timer: Scheduled<Void>?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .begin(let exchange, let head):
            self.exchange = exchange
            lastActivity = NIODeadline.now()
            if let timeout = exchange.timeout { arm(context, at: lastActivity + timeout) }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body(let buffer):
            // A piece handed over counts as activity: the transport hands the next once the last has gone.
            lastActivity = NIODeadline.now()
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: promise)
        case .end:
            exchange?.requestSent = true
            context.write(wrapOutboundOut(.end(nil)), promise: promise)
        }
    }

    func read(context: ChannelHandlerContext) {
        if paused {
            readHeld = true
        } else {
            context.read()
        }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard case .look(let wish)? = event as? Control else {
            return context.triggerUserOutboundEvent(event, promise: promise)
        }
        paused = wish.withLockedValue { $0 }
        if !paused, readHeld {
            readHeld = false
            context.read()
        }
        promise?.succeed()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let exchange else {
            // Bytes on an idle connection (a server's 408 before it closes, say) answer no one: were the
            // connection kept, they would be read as the next request's answer.
            context.close(promise: nil)
            return
        }
        lastActivity = NIODeadline.now()
        switch unwrapInboundIn(data) {
        case .head(let head):
            if !exchange.receive(head: head) { finish(context) { $0.stop() } }
        case .body(let buffer):
            if !exchange.receive(body: buffer) { finish(context) { $0.stop() } }
        case .end:
            finish(context, closing: !exchange.requestSent) { $0.end() }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(context) { exchange in
            exchange.fail(exchange.receivedAnything ? error : ConnectionClosedBeforeAnswer(underlying: error))
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(context, closing: false) { exchange in
            exchange.fail(
                exchange.receivedAnything
                    ? URLError(.networkConnectionLost) : ConnectionClosedBeforeAnswer(underlying: nil))
        }
        context.fireChannelInactive()
    }

    /// Ends the exchange running, if any, with `end`; the connection closes unless told otherwise.
    private func finish(_ context: ChannelHandlerContext, closing: Bool = true, _ end: (Exchange) -> Void) {
        guard let exchange else { return }
        self.exchange = nil
        timer?.cancel()
        timer = nil
        if closing { context.close(promise: nil) }
        end(exchange)
    }

    /// Checks at `deadline` whether the server has been silent for the exchange's whole timeout; a paused
    /// transfer waits on its reader, not on the server.
    private func arm(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            guard let exchange, let timeout = exchange.timeout else { return }
            let due = lastActivity + timeout
            if paused {
                lastActivity = NIODeadline.now()
                arm(context, at: NIODeadline.now() + timeout)
            } else if due > NIODeadline.now() {
                arm(context, at: due)
            } else {
                finish(context) { $0.fail(URLError(.timedOut)) }
            }
        }
    }
}
