import Foundation
import NIOCore
import NIOHTTP1
import NetworkCore

/// One connection of the inspector's page: checks each request's token and host, and answers it:
///
/// | request | answer |
/// | --- | --- |
/// | `GET /` | the page |
/// | `GET /inspection` | the view now, as JSON (``InspectorFeed``, written by ``FeedWriter``) |
/// | `GET /events` | the view as Server-Sent Events (`event: inspection`), sent again as tasks change |
/// | `GET /task?id=ID[&at=MS]` | one task with its details (`at`: when it was queued, for an id that came back), or 404 |
/// | `POST /cancel?id=ID` | cancels it: `{"cancelled": true}`; 403 when cancelling is off |
/// | `GET /har` | the kept tasks as an HTTP Archive, to download |
///
/// Every request needs `token=` with the server's token, and a `Host` of 127.0.0.1 or localhost with the
/// server's port (so that a web page elsewhere cannot reach it through a name it controls): else 403.
final class InspectorHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    struct Settings: Sendable {
        let inspector: PoolInspector
        let token: String
        let allowsCancel: Bool
        let refreshInterval: TimeAmount
        /// Writes the views, keeping each ended task's text: one for the server's pages.
        let writer = FeedWriter()
    }

    private let settings: Settings
    private let port: Int
    private var head: HTTPRequestHead?
    /// The event stream's timer, while this connection carries one.
    private var ticker: RepeatedTask?
    private var sentChange: UInt64 = .max
    private var sentAt = NIODeadline.distantPast

    init(settings: Settings, port: Int) {
        self.settings = settings
        self.port = port
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break  // no route takes a body
        case .end:
            guard let head, ticker == nil else { return }
            self.head = nil
            answer(head, context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        ticker?.cancel()
        ticker = nil
        context.fireChannelInactive()
    }

    // MARK: Routing

    private func answer(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let components = URLComponents(string: head.uri)
        let query = Dictionary(
            (components?.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
        guard Self.same(query["token"] ?? "", settings.token), allowedHost(head.headers["Host"].first) else {
            return send(.forbidden, text: "forbidden: this address needs the inspector's token", to: head, context)
        }
        let inspector = settings.inspector
        switch (head.method, components?.path ?? "") {
        case (.GET, "/"):
            send(.ok, body: InspectorPage.html, type: "text/html; charset=utf-8", to: head, context)
        case (.GET, "/inspection"):
            send(.ok, json: feed(), to: head, context)
        case (.GET, "/events"):
            startEvents(head, context: context)
        case (.GET, "/task"):
            // `at`: when the task was queued, in milliseconds since 1970, for an id that came back.
            let queuedAt = query["at"].flatMap(Double.init).map { Date(timeIntervalSince1970: $0 / 1000) }
            guard let id = query["id"], let task = inspector.task(id: id, queuedAt: queuedAt) else {
                return send(.notFound, text: "no such task", to: head, context)
            }
            send(.ok, json: Self.encode(task), to: head, context)
        case (.POST, "/cancel"):
            guard settings.allowsCancel else {
                return send(.forbidden, text: "cancelling is turned off for this inspector", to: head, context)
            }
            guard let id = query["id"] else { return send(.badRequest, text: "id is missing", to: head, context) }
            let cancelled = inspector.cancel(id: id)
            send(.ok, json: Data(#"{"cancelled":\#(cancelled)}"#.utf8), to: head, context)
        case (.GET, "/har"):
            var headers = HTTPHeaders()
            headers.add(name: "Content-Disposition", value: #"attachment; filename="networkcore.har""#)
            send(.ok, body: Self.encode(inspector.har), type: "application/json", extra: headers, to: head, context)
        case (_, "/"), (_, "/inspection"), (_, "/events"), (_, "/task"), (_, "/cancel"), (_, "/har"):
            send(.methodNotAllowed, text: "method not allowed", to: head, context)
        default:
            send(.notFound, text: "not found", to: head, context)
        }
    }

    /// Whether the `Host` names this server on loopback.
    private func allowedHost(_ host: String?) -> Bool {
        guard let host = host?.lowercased() else { return false }
        return host == "127.0.0.1:\(port)" || host == "localhost:\(port)"
    }

    /// Compares two tokens in time that does not depend on where they differ.
    static func same(_ given: String, _ token: String) -> Bool {
        let a = Array(given.utf8)
        let b = Array(token.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in b.indices { difference |= (index < a.count ? a[index] : 0) ^ b[index] }
        return difference == 0
    }

    // MARK: The event stream

    private func startEvents(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = Self.commonHeaders(type: "text/event-stream")
        headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil
        )
        // The first view at once, then as tasks change; every second while tasks run; a comment every
        // 15 s otherwise, so that proxies and the browser keep the connection.
        pushIfChanged(context: context, force: true)
        let loop = context.eventLoop.assumeIsolated()
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        ticker = loop.nonisolated().scheduleRepeatedTask(
            initialDelay: settings.refreshInterval, delay: settings.refreshInterval
        ) { _ in
            let (handler, context) = bound.value
            handler.pushIfChanged(context: context, force: false)
        }
    }

    private func pushIfChanged(context: ChannelHandlerContext, force: Bool) {
        // A page that does not keep up is sent the newest view once it does: views replace each other.
        guard context.channel.isActive, context.channel.isWritable else { return }
        let change = settings.inspector.changeCount
        let now = NIODeadline.now()
        let idle = now - sentAt
        var buffer: ByteBuffer
        if force || change != sentChange {
            buffer = message(settings.inspector.inspection, context: context)
        } else if idle >= .seconds(1) {
            let inspection = settings.inspector.inspection
            if !inspection.active.isEmpty {
                buffer = message(inspection, context: context)  // running tasks' elapsed times move
            } else if idle >= .seconds(15) {
                buffer = context.channel.allocator.buffer(string: ": still here\n\n")
            } else {
                return
            }
        } else {
            return
        }
        sentChange = change
        sentAt = now
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
    }

    private func message(_ inspection: PoolInspection, context: ChannelHandlerContext) -> ByteBuffer {
        let feed = settings.writer.feed(allowsCancel: settings.allowsCancel, inspection: inspection)
        var buffer = context.channel.allocator.buffer(capacity: feed.count + 32)
        buffer.writeString("event: inspection\ndata: ")
        buffer.writeBytes(feed)
        buffer.writeString("\n\n")
        return buffer
    }

    // MARK: Answers

    private func feed() -> Data {
        settings.writer.feed(allowsCancel: settings.allowsCancel, inspection: settings.inspector.inspection)
    }

    static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return (try? encoder.encode(value)) ?? Data("null".utf8)
    }

    private static func commonHeaders(type: String) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: type)
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        // The token is in the page's address: it must not leave in a Referer.
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        headers.add(name: "X-Frame-Options", value: "DENY")
        headers.add(
            name: "Content-Security-Policy",
            value:
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; frame-ancestors 'none'"
        )
        return headers
    }

    private func send(
        _ status: HTTPResponseStatus, text: String, to head: HTTPRequestHead, _ context: ChannelHandlerContext
    ) {
        send(status, body: Data((text + "\n").utf8), type: "text/plain; charset=utf-8", to: head, context)
    }

    private func send(
        _ status: HTTPResponseStatus, json: Data, to head: HTTPRequestHead, _ context: ChannelHandlerContext
    ) {
        send(status, body: json, type: "application/json", to: head, context)
    }

    private func send(
        _ status: HTTPResponseStatus, body: Data, type: String, extra: HTTPHeaders = [:], to head: HTTPRequestHead,
        _ context: ChannelHandlerContext
    ) {
        var headers = Self.commonHeaders(type: type)
        headers.add(contentsOf: extra)
        headers.add(name: "Content-Length", value: String(body.count))
        let keepAlive = head.isKeepAlive
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
            promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

/// What the page is sent: the inspection, and whether it may offer to cancel (written by ``FeedWriter``).
struct InspectorFeed: Codable, Equatable {
    let allowsCancel: Bool
    let inspection: PoolInspection
}
