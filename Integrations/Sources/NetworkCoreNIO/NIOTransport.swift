import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NetworkCore
import NetworkCoreNIOSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends a pool's requests over HTTP/1.1 and HTTP/2 on SwiftNIO directly: NetworkCore's own engine for bulk
/// transfers, reading up to a megabyte at a time from each connection (``Configuration/maximumReadSize``)
/// and handing each piece to the task on the connection's thread, without a copy and without a hop.
///
/// ```swift
/// let transport = NIOTransport()
/// let pool = TaskPool(configuration: .init(transport: transport))
/// // … send through the pool …
/// await transport.shutdown()
/// ```
///
/// What it does:
/// - `http` and `https` (TLS from ``Configuration/tls``, the system's trust roots by default), HTTP/1.1;
///   connections kept alive and reused per origin (``Configuration/maximumIdleConnectionsPerHost``);
///   a reused connection that the server had closed is replaced once, for a body that can be sent again;
/// - HTTP/2 over `https` when the server takes it (``Configuration/http2``): one connection per origin,
///   each request on a stream of its own, as many at once as the server's settings allow (told to the pool,
///   which runs that many tasks for the host), flow control both ways; a request the server did not
///   process (its GOAWAY, a refused stream) goes again on a new connection, one it reset fails as a lost
///   connection;
/// - bodies stream both ways: a file or a stream is read as the connection takes it; a response body
///   goes to the pool as it arrives, and reading stops while a stream's consumer falls behind;
/// - reports a redirect as the answer: the pool follows it as the task's ``RedirectPolicy`` says;
/// - the request's `timeoutInterval` (the endpoint's `timeout`) bounds connecting and each wait for
///   the server's next bytes, as in `URLSession`;
/// - compressed answers (`gzip`, `deflate`) are decoded (``Configuration/decompression``);
/// - errors are `URLError`s with the codes ``RetryPolicy`` knows, SwiftNIO's own error underneath;
/// - opens WebSockets (`ws`, `wss`) for `TaskPool.webSocket(_:id:options:)`, each on a connection of its
///   own, with permessage-deflate when the server agrees (``startWebSocket(_:options:events:)``);
/// - keeps no cookies and no cache, and uses no proxy.
///
/// A download's file is written on the connection's event loop thread as the body arrives, as `curl`
/// does on its one thread: the page cache takes it at once, but a slow disk holds that loop's other
/// connections meanwhile. Give the transport an event loop group of its own where that matters.
public final class NIOTransport: Transport {
    /// How the transport connects and reads.
    public struct Configuration: Sendable {
        /// TLS for `https` requests. Default: `TLSConfiguration.makeClientConfiguration()`, which
        /// verifies the server's certificate and name against the system's trust roots.
        public var tls: TLSConfiguration
        /// The most bytes one read takes from a connection; reads start small and grow to this while the
        /// server sends faster than the transport reads. Default: 1 MiB.
        public var maximumReadSize: Int
        /// How many idle connections are kept open per origin for the next requests. Default: 64.
        public var maximumIdleConnectionsPerHost: Int
        /// How long an idle connection is kept before it is closed. Default: 60 s.
        public var idleConnectionTimeout: TimeInterval
        /// Whether compressed answers are decoded: requests then say `Accept-Encoding: deflate, gzip`
        /// and the pool sees the decoded body. Default: `true`, as `URLSession` does.
        public var decompression: Bool
        /// Public-key pins of this transport's own, checked with a pool's (``TransportEvents/pins``) on
        /// every connection to a pinned host. `nil`: none.
        public var pins: CertificatePins?
        /// Whether `https` connections offer HTTP/2 (ALPN `h2`, then `http/1.1`, unless ``tls`` names its own
        /// protocols): a server that takes it carries every request to its origin on one connection, each on
        /// a stream of its own. Default: `true`. Plain `http` and WebSockets always use HTTP/1.1.
        public var http2: Bool

        /// A configuration; every argument has the default its property describes.
        public init(
            tls: TLSConfiguration = .makeClientConfiguration(), maximumReadSize: Int = 1 << 20,
            maximumIdleConnectionsPerHost: Int = 64, idleConnectionTimeout: TimeInterval = 60,
            decompression: Bool = true, pins: CertificatePins? = nil, http2: Bool = true
        ) {
            self.pins = pins
            self.http2 = http2
            self.tls = tls
            self.maximumReadSize = maximumReadSize
            self.maximumIdleConnectionsPerHost = maximumIdleConnectionsPerHost
            self.idleConnectionTimeout = idleConnectionTimeout
            self.decompression = decompression
        }
    }

    /// How this transport connects and reads.
    public let configuration: Configuration
    let connections: ConnectionPool

    /// Creates a transport whose connections run on `eventLoopGroup` (SwiftNIO's shared group, one
    /// thread per core, unless told otherwise). The group is not the transport's: it stays up after
    /// ``shutdown()``.
    public init(
        configuration: Configuration = Configuration(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.configuration = configuration
        connections = ConnectionPool(configuration: configuration, group: eventLoopGroup)
    }

    /// Closes the idle connections; requests sent afterwards fail at once (a `URLError` saying the
    /// transport was shut down), requests running finish and their connections close. A transport dropped without it closes its idle
    /// connections then.
    public func shutdown() async {
        await connections.shutdown()
    }

    deinit {
        connections.closeIdle()
    }

    /// ``Configuration/maximumIdleConnectionsPerHost``: the requests to one host it carries at once on
    /// connections it keeps (a pool runs as many tasks per host at once). Over HTTP/2 it tells the pool the
    /// server's limit of streams instead, once the server's settings say it.
    public var maximumRequestsPerHost: Int? { configuration.maximumIdleConnectionsPerHost }

    /// Pins are enforced: a connection to a pinned host is verified by swift-certificates against the TLS
    /// configuration's trust roots (its dates and the server's name too), then must have a pin of the host
    /// in its verified chain; hosts without pins are verified by BoringSSL as always.
    public var pinningRefusal: String? { nil }

    /// The pins that apply to `host`: this transport's and the pool's.
    func pins(for host: String, events: TransportEvents) -> Set<String> {
        var pins = configuration.pins?.pins(for: host) ?? []
        if let pool = events.pins { pins.formUnion(pool.pins(for: host)) }
        return pins
    }

    /// Starts `request` in a Swift task of its own, which runs on the transport's event loops (where the
    /// platform has task executors: macOS 15, iOS 18 and later, and Linux); its head and body chunks are
    /// reported from the connection's event loop, its end from that task.
    public func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
        let transfer = Transfer()
        transfer.attach(
            connections.group.task { [self] in
                do {
                    try await run(request, body: body, events: events, transfer: transfer)
                } catch {
                    events.fail(FailureTranslation.translate(error, cancelled: transfer.isCancelled))
                }
            })
        return transfer
    }

    /// Sends `request` and reports its answer.
    private func run(_ request: URLRequest, body: RequestBody, events: TransportEvents, transfer: Transfer) async throws
    {
        switch try await exchange(request, body: body, events: events, transfer: transfer) {
        case .answered: events.finish()
        case .stopped: break
        }
    }

    /// One request and its response on a connection of the pool, sent again once on a new connection
    /// when a reused one turns out to have been closed by the server before it answered.
    private func exchange(
        _ request: URLRequest, body: RequestBody, events: TransportEvents, transfer: Transfer
    ) async throws -> Exchange.Outcome {
        guard let url = request.url, let target = Target(url) else { throw Self.unusable(request.url) }
        let head = try Self.head(of: request, target: target, body: body)
        let timeout = Self.timeout(of: request)
        // Read before an exchange is made: an exchange, once made, always ends (its promise must not leak).
        let sending = try await Self.sending(body)
        var replaced = false
        var refused = 0
        while true {
            let lease = try await connections.lease(
                to: target.origin, pins: pins(for: target.origin.host, events: events),
                timeout: timeout ?? TimeAmount.seconds(60), transfer: transfer)
            switch lease {
            case .exclusive(let connection, let reused):
                guard transfer.attach(connection.channel) else {
                    connection.channel.close(promise: nil)
                    throw CancellationError()
                }
                let exchange = Exchange(
                    request: request, body: body, events: events, timeout: timeout,
                    promise: connection.channel.eventLoop.makePromise())
                do {
                    let end = try await Self.perform(exchange, head: head, sending: sending, on: connection.channel)
                    if transfer.detach(connection.channel), end.reusable {
                        connections.release(connection)
                    } else {
                        connection.channel.close(promise: nil)
                    }
                    return end.outcome
                } catch is ConnectionClosedBeforeAnswer
                    where reused && !replaced && body.canBeSentAgain && !transfer.isCancelled
                {
                    _ = transfer.detach(connection.channel)
                    replaced = true
                } catch {
                    _ = transfer.detach(connection.channel)
                    connection.channel.close(promise: nil)
                    guard let closed = error as? ConnectionClosedBeforeAnswer else { throw error }
                    throw closed.underlying ?? URLError(.networkConnectionLost)
                }
            case .stream(let connection):
                if let limit = connection.unreportedLimit() { events.carries(requestsAtOnce: limit) }
                let exchange = Exchange(
                    request: request, body: body, events: events, timeout: timeout,
                    promise: connection.channel.eventLoop.makePromise())
                // The stream, once made (on the connection's loop, which the stream shares).
                let opened = NIOLockedValueBox<(any Channel)?>(nil)
                do {
                    let end: Exchange.End
                    switch sending {
                    case .inline(let buffer):
                        // Made and written in one turn of the connection's loop: no hop back here between.
                        connection.stream { made in
                            switch made {
                            case .failure(let error):
                                exchange.fail(ConnectionClosedBeforeAnswer(underlying: error, neverSent: true))
                            case .success(let stream):
                                opened.withLockedValue { $0 = stream }
                                guard transfer.attach(stream) else {
                                    stream.close(promise: nil)
                                    exchange.fail(CancellationError())
                                    return
                                }
                                Self.write(exchange, head: head, body: buffer, on: stream)
                            }
                        }
                        end = try await exchange.promise.futureResult.get()
                    case .pieces:
                        let stream: any Channel
                        do {
                            stream = try await connection.stream()
                        } catch {
                            throw ConnectionClosedBeforeAnswer(underlying: error, neverSent: true)
                        }
                        opened.withLockedValue { $0 = stream }
                        guard transfer.attach(stream) else {
                            stream.close(promise: nil)
                            throw CancellationError()
                        }
                        end = try await Self.perform(exchange, head: head, sending: sending, on: stream)
                    }
                    // A stream whose answer came before the whole request was sent is reset: the rest is not sent.
                    if let stream = opened.withLockedValue({ $0 }), !transfer.detach(stream) || !end.reusable {
                        stream.close(promise: nil)
                    }
                    return end.outcome
                } catch let closed as ConnectionClosedBeforeAnswer
                    where (closed.neverSent || connection.refused(closed.underlying)) && refused < Self.refusals
                    && body.canBeSentAgain && !transfer.isCancelled
                {
                    // Refused by the server (its GOAWAY, or REFUSED_STREAM) before it processed anything, or never
                    // sent: sent again on another stream, of a new connection if this one is going away.
                    if let stream = opened.withLockedValue({ $0 }) { _ = transfer.detach(stream) }
                    refused += 1
                } catch {
                    if let stream = opened.withLockedValue({ $0 }) {
                        _ = transfer.detach(stream)
                        stream.close(promise: nil)
                    }
                    let failure =
                        (error as? ConnectionClosedBeforeAnswer).map {
                            $0.underlying ?? URLError(.networkConnectionLost)
                        } ?? error
                    throw Self.streamFailure(failure)
                }
            }
        }
    }

    /// How many times a request is sent again after the server left it unprocessed on an HTTP/2 connection
    /// (refused, or after a GOAWAY's last stream): a server that ends its connections every few requests
    /// under load refuses the same request more than once.
    static let refusals = 10

    /// An HTTP/2 stream's failure as the pool reads it: a reset by the server is a lost connection, which
    /// names the code the server gave.
    static func streamFailure(_ error: any Error) -> any Error {
        guard let closed = error as? NIOHTTP2Errors.StreamClosed else { return error }
        return URLError(
            .networkConnectionLost,
            userInfo: [
                NSLocalizedDescriptionKey: "the server reset the request's HTTP/2 stream (\(closed.errorCode))",
                NSUnderlyingErrorKey: closed,
            ])
    }

    /// Writes the request's head and body, then waits for the exchange's end. A body of up to 256 KB goes
    /// in one write with the head; a larger one in pieces, the next read while the last is written, until
    /// the whole body is sent or the server has answered.
    static func perform(
        _ exchange: Exchange, head: HTTPRequestHead, sending: Sending, on channel: any Channel
    ) async throws -> Exchange.End {
        let events = exchange.events
        switch sending {
        case .inline(let buffer):
            write(exchange, head: head, body: buffer, on: channel)
        case .pieces(let pieces):
            channel.writeAndFlush(
                ExchangeHandler.Outgoing.begin(exchange, head), promise: begun(exchange, on: channel))
            let counter = SentCounter(events: events, expected: exchange.body.length)
            var pieces = pieces.makeAsyncIterator()
            // One piece is written while the next is read; a failed write means a failed connection, and
            // the exchange's end says how.
            var writing: (EventLoopFuture<Void>, count: Int)?
            do {
                while !exchange.isOver, let piece = try await pieces.next() {
                    if let (written, count) = writing {
                        guard (try? await written.get()) != nil else { break }
                        counter.add(count)
                    }
                    let written = channel.eventLoop.makePromise(of: Void.self)
                    channel.writeAndFlush(ExchangeHandler.Outgoing.body(piece), promise: written)
                    writing = (written.futureResult, piece.readableBytes)
                }
                if let (written, count) = writing, (try? await written.get()) != nil { counter.add(count) }
                if !exchange.isOver { channel.writeAndFlush(ExchangeHandler.Outgoing.end, promise: nil) }
            } catch {
                // The body could not be read (a file that shrank, a stream that failed): the request is cut.
                channel.close(promise: nil)
                _ = try? await exchange.promise.futureResult.get()
                throw error
            }
        }
        return try await exchange.promise.futureResult.get()
    }

    /// Writes the request's head and its whole body (at hand), then flushes: the body's bytes are reported sent
    /// once written.
    static func write(_ exchange: Exchange, head: HTTPRequestHead, body buffer: ByteBuffer, on channel: any Channel) {
        channel.write(ExchangeHandler.Outgoing.begin(exchange, head), promise: begun(exchange, on: channel))
        let count = buffer.readableBytes
        guard count > 0 else {
            channel.writeAndFlush(ExchangeHandler.Outgoing.end, promise: nil)
            return
        }
        channel.write(ExchangeHandler.Outgoing.body(buffer), promise: nil)
        let written = channel.eventLoop.makePromise(of: Void.self)
        let events = exchange.events
        written.futureResult.whenSuccess { events.sent(totalBytes: count, expected: count) }
        channel.writeAndFlush(ExchangeHandler.Outgoing.end, promise: written)
    }

    /// A promise for the write that starts `exchange`: if the connection closed before it, the handler never
    /// sees the exchange, and the exchange fails here as a connection closed before the answer.
    private static func begun(_ exchange: Exchange, on channel: any Channel) -> EventLoopPromise<Void> {
        let begun = channel.eventLoop.makePromise(of: Void.self)
        begun.futureResult.whenFailure { exchange.fail(ConnectionClosedBeforeAnswer(underlying: $0, neverSent: true)) }
        return begun
    }

    /// How a body is sent: whole with the head (none, bytes or a file of up to 256 KB, read now), or in
    /// pieces read as the connection takes them.
    enum Sending {
        case inline(ByteBuffer)
        case pieces(AnyAsyncSequence)
    }

    static func sending(_ body: RequestBody) async throws -> Sending {
        switch body {
        case .none:
            return .inline(ByteBuffer())
        case .data(let data) where data.count <= FileReader.pieceSize:
            return .inline(ByteBuffer(bytes: data))
        case .data(let data):
            return .pieces(AnyAsyncSequence(DataPieces(data: data, pieceSize: FileReader.pieceSize)))
        case .file(let url):
            let length = try RequestBody.readableLength(of: url)
            guard length <= FileReader.pieceSize else {
                return .pieces(AnyAsyncSequence(FileChunks(file: url, length: length)))
            }
            return .inline(try await FileReader(path: url.path, length: length).next() ?? ByteBuffer())
        case .stream(let chunks, let length):
            return .pieces(AnyAsyncSequence(StreamPieces(chunks: chunks, length: length)))
        }
    }

    /// The request's head as it goes on the wire: `Host` first, then the request's fields, its body's length
    /// (`Transfer-Encoding: chunked` for a stream of unknown length).
    static func head(of request: URLRequest, target: Target, body: RequestBody) throws -> HTTPRequestHead {
        let method = request.httpMethod ?? "GET"
        var headers = HTTPHeaders()
        let fields = request.allHTTPHeaderFields ?? [:]
        if !fields.keys.contains(where: { $0.caseInsensitiveCompare("Host") == .orderedSame }) {
            headers.add(name: "Host", value: target.hostField)
        }
        for (name, value) in fields { headers.add(name: name, value: value) }
        headers.remove(name: "Content-Length")
        headers.remove(name: "Transfer-Encoding")
        let length: Int?
        switch body {
        case .none: length = ["POST", "PUT", "PATCH"].contains(method.uppercased()) ? 0 : nil
        case .data(let data): length = data.count
        case .file(let url): length = try RequestBody.readableLength(of: url)
        case .stream(_, let announced): length = announced
        }
        if let length {
            headers.add(name: "Content-Length", value: String(length))
        } else if case .stream = body {
            headers.add(name: "Transfer-Encoding", value: "chunked")
        }
        return HTTPRequestHead(
            version: .http1_1, method: HTTPMethod(rawValue: method), uri: target.uri, headers: headers)
    }

    /// Why `url` cannot be sent: not `http` or `https` (or, for a WebSocket, `ws` or `wss`) (`unsupportedURL`),
    /// or without a host (`badURL`). The error names the scheme, never the URL, which may carry a secret.
    static func unusable(_ url: URL?, webSocket: Bool = false) -> URLError {
        let scheme = url?.scheme?.lowercased() ?? ""
        let schemes = webSocket ? ["ws", "wss", "http", "https"] : ["http", "https"]
        guard schemes.contains(scheme) else {
            let what = webSocket ? "opens WebSockets at ws, wss, http and https URLs" : "sends http and https URLs"
            return URLError(
                .unsupportedURL,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "NIOTransport \(what) only, not \(scheme.isEmpty ? "one without a scheme" : scheme)"
                ])
        }
        return URLError(.badURL, userInfo: [NSLocalizedDescriptionKey: "the \(scheme) URL has no host"])
    }

    /// How long to wait for a connection and for each of the server's next bytes: the request's
    /// `timeoutInterval`; `nil` for none.
    static func timeout(of request: URLRequest) -> TimeAmount? {
        let seconds = request.timeoutInterval
        guard seconds > 0, seconds < 86_400 * 365 else { return nil }
        return TimeAmount.nanoseconds(Int64(seconds * 1e9))
    }
}

extension RequestBody {
    /// Whether the body can be sent again on another connection: a stream is read once.
    var canBeSentAgain: Bool {
        if case .stream = self { return false }
        return true
    }
}

/// Where a request goes: its origin, the `Host` field and the request target (path and query).
struct Target {
    let origin: ConnectionPool.Origin
    let hostField: String
    let uri: String

    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            var host = url.host, !host.isEmpty
        else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let secure = scheme == "https"
        let port = url.port ?? (secure ? 443 : 80)
        origin = ConnectionPool.Origin(secure: secure, host: host, port: port)
        let written = host.contains(":") ? "[\(host)]" : host
        hostField = url.port == nil || port == (secure ? 443 : 80) ? written : "\(written):\(port)"
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? ""
        uri = (path.isEmpty ? "/" : path) + (components?.percentEncodedQuery.map { "?" + $0 } ?? "")
    }
}

/// A connection failed or closed before any of the answer arrived: on a reused one, the server had
/// closed it while idle. `underlying` is the failure, if the connection reported one.
struct ConnectionClosedBeforeAnswer: Error {
    let underlying: (any Error)?
    /// Whether not even the request's head could be written.
    var neverSent = false
}

/// Any sequence of byte buffers, boxed.
struct AnyAsyncSequence: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    private let make: @Sendable () -> AsyncIterator

    init<Base: AsyncSequence & Sendable>(_ base: Base) where Base.Element == ByteBuffer {
        make = { AsyncIterator(base.makeAsyncIterator()) }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        private let step: () async throws -> ByteBuffer?

        init<Base: AsyncIteratorProtocol>(_ base: Base) where Base.Element == ByteBuffer {
            var base = base
            step = { try await base.next() }
        }

        mutating func next() async throws -> ByteBuffer? { try await step() }
    }

    func makeAsyncIterator() -> AsyncIterator { make() }
}
