import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NetworkCore

/// A connection that speaks HTTP/2: one exchange per stream, as many at once as the server allows
/// (its `SETTINGS_MAX_CONCURRENT_STREAMS`). Retired when the server says GOAWAY, when it closes, or after
/// its idle time without a stream; a retired connection takes no new stream and closes once its last
/// stream is done.
final class MultiplexedConnection: Sendable {
    let channel: any Channel
    let origin: ConnectionPool.Origin
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    private let idleTimeout: TimeAmount
    private let decompression: Bool

    private struct State {
        /// The pins of its verified chain, leaf first, when it was made for a pinned host.
        var chainPins: [String]?
        /// Streams reserved or running.
        var open = 0
        /// What the server allows at once; 100 until its settings say (RFC 9113 advises at least 100), and
        /// when they do not.
        var limit = 100
        /// The limit as last told to a pool (``unreportedLimit()``), once the server's settings came.
        var reported: Int?
        var settled = false
        var retired = false
        /// The last stream the server said it processes, with its GOAWAY.
        var lastProcessed: HTTP2StreamID?
        /// Closes the connection once it has had no stream for its idle time.
        var idle: Scheduled<Void>?
        /// Requests waiting for a stream, in the order they came, each handed one as another's ends.
        var waiters: [(id: Int, continuation: CheckedContinuation<Bool, any Error>)] = []
        var nextWaiter = 0
    }
    private let state = NIOLockedValueBox(State())

    /// Whether it takes no new stream.
    var isRetired: Bool { state.withLockedValue { $0.retired } || !channel.isActive }

    private init(
        channel: any Channel, origin: ConnectionPool.Origin, multiplexer: NIOHTTP2Handler.StreamMultiplexer,
        idleTimeout: TimeAmount, decompression: Bool
    ) {
        self.channel = channel
        self.origin = origin
        self.multiplexer = multiplexer
        self.idleTimeout = idleTimeout
        self.decompression = decompression
    }

    /// Adds HTTP/2 to `channel`'s pipeline (on its loop, as its TLS handshake ends with `h2`): SwiftNIO's
    /// HTTP/2 handler with flow-control windows of `window` bytes a stream and four times that on the
    /// connection, and a watcher of the server's settings and GOAWAY.
    static func configure(
        _ channel: any Channel, origin: ConnectionPool.Origin, window: Int, idleTimeout: TimeAmount,
        decompression: Bool
    ) throws -> MultiplexedConnection {
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 16),
            HTTP2Setting(parameter: .initialWindowSize, value: window),
            HTTP2Setting(parameter: .enablePush, value: 0),
        ]
        connectionConfiguration.targetWindowSize = window * 4
        var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
        streamConfiguration.targetWindowSize = window
        let pipeline = channel.pipeline.syncOperations
        let multiplexer = try pipeline.configureHTTP2Pipeline(
            mode: .client, connectionConfiguration: connectionConfiguration,
            streamConfiguration: streamConfiguration
        ) { stream in
            // The server may not open streams (push is off): refused.
            stream.close()
        }
        let connection = MultiplexedConnection(
            channel: channel, origin: origin, multiplexer: multiplexer, idleTimeout: idleTimeout,
            decompression: decompression)
        try pipeline.addHandler(SettingsWatcher(connection: connection))
        channel.closeFuture.whenComplete { _ in connection.retire() }
        return connection
    }

    /// Sets the verified chain's pins, once known.
    func verified(_ chainPins: [String]?) { state.withLockedValue { $0.chainPins = chainPins } }

    /// Whether it may carry a request that needs one of `pins` (none: any connection may).
    func serves(_ pins: Set<String>) -> Bool {
        pins.isEmpty || state.withLockedValue { $0.chainPins }.map { !pins.isDisjoint(with: $0) } ?? false
    }

    /// Takes a stream for an exchange, waiting while the server's limit of streams at once is reached:
    /// `false` if the connection is retired (or retires meanwhile), and the request must go elsewhere. The
    /// stream is given back by ``stream()``'s channel closing, or by ``giveBack()``.
    /// - Throws: `CancellationError` if the calling task is cancelled while it waits.
    func reserve() async throws -> Bool {
        // Without a wait when a stream is free (or the connection retired): no continuation made.
        let id = state.withLockedValue { state -> Int? in
            if state.retired || !channel.isActive { return -1 }
            guard state.open >= state.limit else {
                state.open += 1
                state.idle?.cancel()
                state.idle = nil
                return nil
            }
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        guard let id else { return true }
        if id < 0 { return false }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let now = state.withLockedValue { state -> Result<Bool, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.retired || !channel.isActive { return .success(false) }
                    guard state.open >= state.limit else {
                        state.open += 1
                        state.idle?.cancel()
                        state.idle = nil
                        return .success(true)
                    }
                    state.waiters.append((id, continuation))
                    return nil
                }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            let waiting = state.withLockedValue { state in
                state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0).continuation }
            }
            waiting?.resume(throwing: CancellationError())
        }
    }

    /// Makes a stream for one exchange, a stream reserved (``reserve()``): its pipeline turns SwiftNIO's HTTP/1
    /// parts into HTTP/2 frames, decodes compressed answers and runs an ``ExchangeHandler``. `ready` is told on
    /// the connection's loop as soon as the stream is made (or could not be): a request whose whole body is at
    /// hand is written then, in the same turn. The reservation ends when the stream closes, or at once if it
    /// could not be made.
    func stream(_ ready: @escaping @Sendable (Result<any Channel, any Error>) -> Void) {
        let decompression = decompression
        let made = multiplexer.createStreamChannel { stream in
            stream.eventLoop.makeCompletedFuture {
                let pipeline = stream.pipeline.syncOperations
                try pipeline.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https))
                if decompression { try pipeline.addHandler(NIOHTTPResponseDecompressor(limit: .none)) }
                try pipeline.addHandler(ExchangeHandler())
            }
        }
        made.whenComplete { [self] result in
            if case .success(let stream) = result {
                stream.closeFuture.whenComplete { [self] _ in giveBack() }
            } else {
                giveBack()
            }
            ready(result)
        }
    }

    /// ``stream(_:)``, awaited.
    func stream() async throws -> any Channel {
        try await withCheckedThrowingContinuation { continuation in stream { continuation.resume(with: $0) } }
    }

    /// A stream's reservation ends: it goes to the first request waiting, if any; a retired connection
    /// closes with its last stream; an idle one after its idle time.
    func giveBack() {
        let (close, next) = state.withLockedValue { state -> (Bool, CheckedContinuation<Bool, any Error>?) in
            if !state.retired, state.open <= state.limit, !state.waiters.isEmpty {
                return (false, state.waiters.removeFirst().continuation)
            }
            state.open -= 1
            guard state.open == 0 else { return (false, nil) }
            if state.retired { return (true, nil) }
            state.idle = channel.eventLoop.scheduleTask(in: idleTimeout) { [self] in closeIfIdle() }
            return (false, nil)
        }
        next?.resume(returning: true)
        if close { channel.close(promise: nil) }
    }

    /// The server's limit of streams at once, when its settings have come and the limit differs from the one
    /// last returned here: for the pool of the request that has a stream, so that it runs as many tasks for
    /// the host (``TransportEvents/carries(requestsAtOnce:)``).
    func unreportedLimit() -> Int? {
        state.withLockedValue { state in
            guard state.settled, state.reported != state.limit else { return nil }
            state.reported = state.limit
            return state.limit
        }
    }

    /// Starts its idle time if no stream runs: for a new connection, whose first exchange may never come.
    func startIdling() {
        state.withLockedValue { state in
            guard state.open == 0, !state.retired, state.idle == nil else { return }
            state.idle = channel.eventLoop.scheduleTask(in: idleTimeout) { [self] in closeIfIdle() }
        }
    }

    /// The server's settings changed what it allows at once.
    func settings(maximumStreams: Int?) {
        let handed = state.withLockedValue { state in
            state.settled = true
            if let maximumStreams { state.limit = max(0, maximumStreams) }
            var handed: [CheckedContinuation<Bool, any Error>] = []
            while state.open < state.limit, !state.waiters.isEmpty {
                state.open += 1
                handed.append(state.waiters.removeFirst().continuation)
            }
            return handed
        }
        for waiter in handed { waiter.resume(returning: true) }
    }

    /// The server said GOAWAY: the streams after `lastProcessed` are not processed; no new stream is taken.
    func goAway(lastProcessed: HTTP2StreamID) {
        state.withLockedValue { $0.lastProcessed = lastProcessed }
        retire()
    }

    /// Whether a stream that ended with `error` before any answer was left unprocessed by the server, so that
    /// its request may be sent again: the server refused it (`REFUSED_STREAM`), or it came after the last
    /// stream the server's GOAWAY processes (SwiftNIO closes those as cancelled).
    func refused(_ error: (any Error)?) -> Bool {
        guard let closed = error as? NIOHTTP2Errors.StreamClosed else { return false }
        if closed.errorCode == .refusedStream { return true }
        guard let last = state.withLockedValue({ $0.lastProcessed }) else { return false }
        return closed.streamID > last
    }

    /// Takes no new stream; closes now if none runs (GOAWAY, the transport shut down, the connection closed).
    func retire() {
        let (close, idle, waiting) = state.withLockedValue { state in
            state.retired = true
            defer {
                state.idle = nil
                state.waiters = []
            }
            return (state.open == 0, state.idle, state.waiters)
        }
        idle?.cancel()
        for waiter in waiting { waiter.continuation.resume(returning: false) }
        if close { channel.close(promise: nil) }
    }

    private func closeIfIdle() {
        let close = state.withLockedValue { state in
            guard state.open == 0, !state.retired else { return false }
            state.retired = true
            return true
        }
        if close { channel.close(promise: nil) }
    }
}

/// Tells a ``MultiplexedConnection`` what the server's connection-level frames say: its stream limit, and
/// GOAWAY. (SwiftNIO's HTTP/2 handler passes them on down the connection's pipeline.)
final class SettingsWatcher: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    let connection: MultiplexedConnection

    init(connection: MultiplexedConnection) { self.connection = connection }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data).payload {
        case .settings(.settings(let settings)):
            connection.settings(maximumStreams: settings.last { $0.parameter == .maxConcurrentStreams }?.value)
        case .goAway(let lastStreamID, _, _):
            connection.goAway(lastProcessed: lastStreamID)
        default:
            break
        }
    }
}

/// Waits for `future`, or until the calling task is cancelled (then throws `CancellationError`).
func value<Value: Sendable>(of future: EventLoopFuture<Value>) async throws -> Value {
    let waiter = NIOLockedValueBox<CheckedContinuation<Value, any Error>?>(nil)
    @Sendable func resume(_ result: Result<Value, any Error>) {
        waiter.withLockedValue { waiter in
            defer { waiter = nil }
            return waiter
        }?.resume(with: result)
    }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            waiter.withLockedValue { $0 = continuation }
            future.whenComplete { resume($0) }
            if Task.isCancelled { resume(.failure(CancellationError())) }
        }
    } onCancel: {
        resume(.failure(CancellationError()))
    }
}
