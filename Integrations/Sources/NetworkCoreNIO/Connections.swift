import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import NIOTLS
import NetworkCore

/// A connection to an origin, its pipeline ready for exchanges.
struct Connection: Sendable {
    let channel: any Channel
    let origin: ConnectionPool.Origin
    /// The pins of its verified chain, leaf first, when it was made for a pinned host; `nil` otherwise.
    var chainPins: [String]? = nil

    /// Whether it may carry a request that needs one of `pins` (none: any connection may).
    func serves(_ pins: Set<String>) -> Bool {
        pins.isEmpty || chainPins.map { !pins.isDisjoint(with: $0) } ?? false
    }
}

/// The transport's connections: made as requests need them, kept open when idle for the next request to
/// the same origin, up to a number per origin and for a while.
final class ConnectionPool: Sendable {
    /// Scheme, host and port: what a connection can serve.
    struct Origin: Hashable, Sendable {
        let secure: Bool
        let host: String
        let port: Int
    }

    private struct Idle {
        let connection: Connection
        let expiry: Scheduled<Void>
    }

    private struct State {
        var idle: [Origin: [Idle]] = [:]
        var shutDown = false
        /// The TLS contexts, made when the first `https` request needs each: HTTP/1.1 only, and offering HTTP/2.
        var tls: NIOSSLContext?
        var tls2: NIOSSLContext?
        /// How pinned connections are verified, made when the first one is.
        var pinned: PinnedVerification?
        /// The HTTP/2 connections, each serving many requests at once.
        var multiplexed: [Origin: [MultiplexedConnection]] = [:]
        /// The `https` origins that answered an offer of HTTP/2 with HTTP/1.1: not offered it again.
        var speaksHTTP1: Set<Origin> = []
        /// The connections being made to `https` origins whose protocol is not known yet, or whose HTTP/2
        /// connections are all busy: a request for the same origin and pins waits for it rather than making
        /// one more.
        var probes: [Probe: EventLoopFuture<Void>] = [:]
    }

    /// A connection being made that offers HTTP/2: to an origin, for requests with these pins.
    struct Probe: Hashable {
        let origin: Origin
        let pins: Set<String>
    }

    /// What a request was given to run on.
    enum Lease {
        /// An HTTP/1.1 connection of its own; `reused` if it was idle among the kept ones.
        case exclusive(Connection, reused: Bool)
        /// A stream reserved on an HTTP/2 connection.
        case stream(MultiplexedConnection)
    }

    private let state = NIOLockedValueBox(State())
    private let configuration: NIOTransport.Configuration
    let group: any EventLoopGroup

    init(configuration: NIOTransport.Configuration, group: any EventLoopGroup) {
        self.configuration = configuration
        self.group = group
    }

    /// Where a request to `origin` runs. Over `https` with HTTP/2 on, a stream of an HTTP/2 connection to
    /// the origin that serves `pins`, made if none has a stream free (one at a time: other requests wait for
    /// it); when the server answers HTTP/1.1 instead, the origin is remembered as such, and its requests take
    /// connections of their own as over `http` (``connection(to:pins:timeout:transfer:)``).
    func lease(to origin: Origin, pins: Set<String>, timeout: TimeAmount, transfer: Transfer) async throws -> Lease {
        guard origin.secure, configuration.http2 else {
            let (connection, reused) = try await connection(
                to: origin, pins: pins, timeout: timeout, transfer: transfer)
            return .exclusive(connection, reused: reused)
        }
        enum Step {
            case stream(MultiplexedConnection)
            case http1
            case wait(EventLoopFuture<Void>)
            case probe(EventLoopPromise<Void>)
        }
        // Each round takes a stream, or waits for a connection being made; bounded in case each connection
        // retires (GOAWAY) before the request has a stream.
        for _ in 0..<8 {
            let step = try state.withLockedValue { state throws -> Step in
                guard !state.shutDown else { throw TransportShutDown() }
                if var connections = state.multiplexed[origin] {
                    connections.removeAll { $0.isRetired }
                    state.multiplexed[origin] = connections.isEmpty ? nil : connections
                    if let connection = connections.last(where: { $0.serves(pins) }) { return .stream(connection) }
                }
                if state.speaksHTTP1.contains(origin) { return .http1 }
                let probe = Probe(origin: origin, pins: pins)
                if let made = state.probes[probe] { return .wait(made) }
                let promise = group.any().makePromise(of: Void.self)
                state.probes[probe] = promise.futureResult
                return .probe(promise)
            }
            switch step {
            case .stream(let connection):
                // Waits while the server's limit of streams is reached; a connection that retires meanwhile
                // sends the request to the next round.
                if try await connection.reserve() { return .stream(connection) }
            case .http1:
                let (connection, reused) = try await connection(
                    to: origin, pins: pins, timeout: timeout, transfer: transfer)
                return .exclusive(connection, reused: reused)
            case .wait(let made):
                try await value(of: made)
            case .probe(let promise):
                _ = group.task {
                    await self.probe(Probe(origin: origin, pins: pins), timeout: timeout, settling: promise)
                }
                try await value(of: promise.futureResult)
            }
        }
        throw URLError(
            .networkConnectionLost,
            userInfo: [NSLocalizedDescriptionKey: "no stream of an HTTP/2 connection to the server was free"])
    }

    /// Makes a connection that offers HTTP/2 for the requests waiting on `probe`, then settles `promise`: an
    /// HTTP/2 connection joins the multiplexed ones; an HTTP/1.1 one is kept idle for one of them, and the
    /// origin is remembered as speaking HTTP/1.1. The connection is no single request's: it is made even if
    /// the request that asked for it is cancelled, within its timeout.
    private func probe(_ probe: Probe, timeout: TimeAmount, settling promise: EventLoopPromise<Void>) async {
        let decompression = configuration.decompression
        let idleTimeout = TimeAmount.nanoseconds(Int64(configuration.idleConnectionTimeout * 1e9))
        // Each stream's flow-control window: what one read may take; the connection's, a few streams' worth.
        let window = min(max(configuration.maximumReadSize, 65_535), 1 << 24)
        let origin = probe.origin
        enum Made: Sendable {
            case http1
            case http2(MultiplexedConnection)
        }
        do {
            let (channel, made, chainPins) = try await connect(
                to: origin, pins: probe.pins, offeringHTTP2: true, timeout: timeout, transfer: Transfer()
            ) { channel, negotiated -> Made in
                guard negotiated == "h2" else {
                    try Self.addHTTP1Handlers(to: channel.pipeline.syncOperations, decompression: decompression)
                    return .http1
                }
                return .http2(
                    try MultiplexedConnection.configure(
                        channel, origin: origin, window: window, idleTimeout: idleTimeout,
                        decompression: decompression))
            }
            switch made {
            case .http2(let connection):
                connection.verified(chainPins)
                let kept = state.withLockedValue { state in
                    state.probes[probe] = nil
                    guard !state.shutDown else { return false }
                    state.multiplexed[origin, default: []].append(connection)
                    return true
                }
                if kept { connection.startIdling() } else { connection.retire() }
            case .http1:
                channel.closeFuture.whenComplete { [weak self] _ in self?.forget(channel) }
                state.withLockedValue { state in
                    state.probes[probe] = nil
                    state.speaksHTTP1.insert(origin)
                }
                release(Connection(channel: channel, origin: origin, chainPins: chainPins))
            }
            promise.succeed()
        } catch {
            state.withLockedValue { $0.probes[probe] = nil }
            promise.fail(error)
        }
    }

    /// An idle connection to `origin` if one is open (`reused`), else a new one, made within `timeout`.
    /// With `pins` (the host's), only a connection whose verified chain has one of them serves. The
    /// connection being made is adopted by `transfer`, so that cancelling it stops the connecting.
    func connection(
        to origin: Origin, pins: Set<String> = [], timeout: TimeAmount, transfer: Transfer
    ) async throws -> (
        Connection, reused: Bool
    ) {
        let idle = try state.withLockedValue { state throws -> Idle? in
            guard !state.shutDown else { throw TransportShutDown() }
            guard pins.isEmpty else {
                // The newest that serves these pins; the others stay for requests they serve.
                guard let index = state.idle[origin]?.lastIndex(where: { $0.connection.serves(pins) }) else {
                    return nil
                }
                return state.idle[origin]?.remove(at: index)
            }
            while let idle = state.idle[origin]?.popLast() {
                if idle.connection.channel.isActive { return idle }
                idle.expiry.cancel()
            }
            return nil
        }
        if let idle {
            idle.expiry.cancel()
            if idle.connection.channel.isActive { return (idle.connection, true) }
        }
        return (try await connect(to: origin, pins: pins, timeout: timeout, transfer: transfer), false)
    }

    /// Takes a connection back after a complete exchange: kept for the next request to its origin, or
    /// closed when the pool is shut down or has enough idle ones.
    func release(_ connection: Connection) {
        let channel = connection.channel
        let expiry = channel.eventLoop.scheduleTask(
            in: TimeAmount.nanoseconds(Int64(configuration.idleConnectionTimeout * 1e9))
        ) {
            [weak self] in
            self?.forget(channel)
            channel.close(promise: nil)
        }
        let kept = state.withLockedValue { state in
            guard !state.shutDown, channel.isActive,
                state.idle[connection.origin, default: []].count < configuration.maximumIdleConnectionsPerHost
            else { return false }
            state.idle[connection.origin, default: []].append(Idle(connection: connection, expiry: expiry))
            return true
        }
        if !kept {
            expiry.cancel()
            channel.close(promise: nil)
        }
    }

    /// Refuses new requests and closes the idle connections.
    func shutdown() async {
        let (idle, multiplexed) = state.withLockedValue { state in
            state.shutDown = true
            defer { state.multiplexed = [:] }
            return (state.idle.values.flatMap { $0 }, state.multiplexed.values.flatMap { $0 })
        }
        for connection in multiplexed { connection.retire() }
        for connection in idle { connection.expiry.cancel() }
        for connection in idle { try? await connection.connection.channel.close() }
    }

    /// Closes the idle connections without waiting.
    func closeIdle() {
        let (idle, multiplexed) = state.withLockedValue { state in
            defer {
                state.idle = [:]
                state.multiplexed = [:]
            }
            return (state.idle.values.flatMap { $0 }, state.multiplexed.values.flatMap { $0 })
        }
        for connection in multiplexed { connection.retire() }
        for connection in idle {
            connection.expiry.cancel()
            connection.connection.channel.close(promise: nil)
        }
    }

    /// Drops `channel` from the idle connections: it closed.
    private func forget(_ channel: any Channel) {
        state.withLockedValue { state in
            for (origin, idle) in state.idle where idle.contains(where: { $0.connection.channel === channel }) {
                state.idle[origin]?.removeAll { $0.connection.channel === channel }
            }
        }
    }

    private func connect(
        to origin: Origin, pins: Set<String>, timeout: TimeAmount, transfer: Transfer
    ) async throws -> Connection {
        let decompression = configuration.decompression
        let (channel, _, chainPins) = try await connect(
            to: origin, pins: pins, timeout: timeout, transfer: transfer
        ) { channel, _ in
            try Self.addHTTP1Handlers(to: channel.pipeline.syncOperations, decompression: decompression)
        }
        channel.closeFuture.whenComplete { [weak self] _ in self?.forget(channel) }
        return Connection(channel: channel, origin: origin, chainPins: chainPins)
    }

    /// The handlers of an HTTP/1.1 connection: SwiftNIO's codec, the decompressor, the exchange's handler.
    static func addHTTP1Handlers(to pipeline: ChannelPipeline.SynchronousOperations, decompression: Bool) throws {
        try pipeline.addHTTPClientHandlers()
        if decompression { try pipeline.addHandler(NIOHTTPResponseDecompressor(limit: .none)) }
        try pipeline.addHandler(ExchangeHandler())
    }

    /// A new connection to `origin`, made within `timeout` and adopted by `transfer`, its TLS handshake done,
    /// with the handlers `configure` adds once the connection's protocol is known: at once over plain `http`,
    /// when the TLS handshake is done over `https` (told the protocol the server chose by ALPN, `h2` when it
    /// was offered with `offeringHTTP2` and taken). Never kept among the idle ones by itself. With `pins` (the
    /// host's), the chain is verified by ``PinnedVerification`` and must have one of them: the verified
    /// chain's pins are returned.
    /// - Throws: ``PinningError/mismatch(host:chainPins:)`` when the verified chain has none of `pins`;
    ///   ``PinningError/notEncrypted(host:)`` for pins over plain `http`.
    func connect<Configured: Sendable>(
        to origin: Origin, pins: Set<String> = [], offeringHTTP2: Bool = false, timeout: TimeAmount,
        transfer: Transfer,
        configure: @escaping @Sendable (_ channel: any Channel, _ negotiated: String?) throws -> Configured
    ) async throws -> (any Channel, Configured, chainPins: [String]?) {
        guard !state.withLockedValue({ $0.shutDown }) else { throw TransportShutDown() }
        if !pins.isEmpty, !origin.secure { throw PinningError.notEncrypted(host: origin.host.lowercased()) }
        let tls = origin.secure ? try tlsContext(offeringHTTP2: offeringHTTP2) : nil
        let pinned = pins.isEmpty ? nil : try await pinnedVerification()
        // The verified chain's pins, set by the verification on the connection's loop.
        let verified = NIOLockedValueBox<[String]?>(nil)
        // Server Name Indication and the certificate's name check take a host name, never an address.
        let serverName = (try? SocketAddress(ipAddress: origin.host, port: 0)) == nil ? origin.host : nil
        let largest = max(configuration.maximumReadSize, 1 << 14)
        // The TLS handshake of each connection tried (more than one when a host has several addresses), and
        // what `configure` made of each.
        let handshakes = NIOLockedValueBox<[ObjectIdentifier: EventLoopFuture<Void>]>([:])
        let configured = NIOLockedValueBox<[ObjectIdentifier: Configured]>([:])
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelOption(
                ChannelOptions.recvAllocator,
                value: AdaptiveRecvByteBufferAllocator(minimum: 1 << 10, initial: 1 << 14, maximum: largest)
            )
            .channelInitializer { channel in
                guard transfer.adopt(channel) else { return channel.eventLoop.makeFailedFuture(CancellationError()) }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    let id = ObjectIdentifier(channel)
                    guard let tls else {
                        let made = try configure(channel, nil)
                        configured.withLockedValue { $0[id] = made }
                        return
                    }
                    if let pinned {
                        let host = origin.host
                        try pipeline.addHandler(
                            NIOSSLClientHandler(context: tls, serverHostname: serverName) { presented, promise in
                                promise.completeWithTask {
                                    guard let chainPins = await pinned.verify(presented, host: host) else {
                                        return .failed
                                    }
                                    verified.withLockedValue { $0 = chainPins }
                                    return .certificateVerified(VerificationMetadata(nil))
                                }
                            })
                    } else {
                        try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    }
                    let handshake = channel.eventLoop.makePromise(of: Void.self)
                    handshakes.withLockedValue { $0[id] = handshake.futureResult }
                    // The protocol's handlers go in as the handshake ends, before any of the server's bytes
                    // that follow it are read (an HTTP/2 server sends its settings at once).
                    try pipeline.addHandler(
                        HandshakeWaiter(handshake: handshake) { negotiated in
                            let made = try configure(channel, negotiated)
                            configured.withLockedValue { $0[id] = made }
                        })
                }
            }
            .connect(host: origin.host, port: origin.port).get()
        let id = ObjectIdentifier(channel)
        if let handshake = handshakes.withLockedValue({ $0[id] }) {
            // A connection serves once its TLS handshake is done, within `timeout` as connecting is (a server
            // that takes the connection and says nothing would hold it for ever); one that fails is the
            // request's error.
            let expired = NIOLockedValueBox(false)
            let expiry = channel.eventLoop.scheduleTask(in: timeout) {
                expired.withLockedValue { $0 = true }
                channel.close(promise: nil)
            }
            defer { expiry.cancel() }
            do {
                try await handshake.get()
            } catch {
                channel.close(promise: nil)
                if expired.withLockedValue({ $0 }) { throw ChannelError.connectTimeout(timeout) }
                throw error
            }
        }
        guard let made = configured.withLockedValue({ $0[id] }) else {
            channel.close(promise: nil)
            throw ChannelError.ioOnClosedChannel
        }
        guard !pins.isEmpty else { return (channel, made, nil) }
        let chainPins = verified.withLockedValue { $0 } ?? []
        guard !pins.isDisjoint(with: chainPins) else {
            channel.close(promise: nil)
            throw PinningError.mismatch(host: origin.host.lowercased(), chainPins: chainPins)
        }
        return (channel, made, chainPins)
    }

    /// How pinned connections are verified: the TLS configuration's roots, read once.
    private func pinnedVerification() async throws -> PinnedVerification {
        if let made = state.withLockedValue({ $0.pinned }) { return made }
        let made = try await PinnedVerification(configuration.tls)
        state.withLockedValue { $0.pinned = made }
        return made
    }

    /// The TLS context of connections that offer HTTP/2 by ALPN (`h2`, then `http/1.1`, unless the TLS
    /// configuration names its own protocols), or of those that speak HTTP/1.1 only (`h2` taken out).
    private func tlsContext(offeringHTTP2: Bool) throws -> NIOSSLContext {
        try state.withLockedValue { state in
            if let tls = offeringHTTP2 ? state.tls2 : state.tls { return tls }
            var configuration = configuration.tls
            if offeringHTTP2 {
                if configuration.applicationProtocols.isEmpty {
                    configuration.applicationProtocols = ["h2", "http/1.1"]
                }
            } else {
                configuration.applicationProtocols.removeAll { $0 == "h2" }
            }
            let tls = try NIOSSLContext(configuration: configuration)
            if offeringHTTP2 { state.tls2 = tls } else { state.tls = tls }
            return tls
        }
    }
}

/// Completes when the connection's TLS handshake is done, after `done` has been told the protocol the server
/// chose (it adds that protocol's handlers), then leaves the pipeline; fails with the handshake's error, or
/// `done`'s, or when the connection closes first.
final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let handshake: EventLoopPromise<Void>
    let done: (_ negotiated: String?) throws -> Void

    init(handshake: EventLoopPromise<Void>, done: @escaping (_ negotiated: String?) throws -> Void) {
        self.handshake = handshake
        self.done = done
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted(let negotiated) = event {
            do {
                try done(negotiated)
            } catch {
                handshake.fail(error)
                context.close(promise: nil)
                return
            }
            handshake.succeed()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        handshake.fail(error)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        handshake.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        handshake.fail(ChannelError.ioOnClosedChannel)  // ignored once succeeded
    }
}

/// A request sent after ``NIOTransport/shutdown()``.
struct TransportShutDown: Error, CustomStringConvertible {
    var description: String { "the NIOTransport was shut down: it sends no more requests" }
}

/// A running request: cancelling it cancels its Swift task and closes its connection; pausing it stops
/// reading the response body until it is resumed.
///
/// Nothing is done to a connection while the lock is held: closing it, or telling it to pause, may run
/// its handlers at once on this thread, and they may call back into the transfer (a task that ended
/// cancels its transfer from within the body it was handed).
final class Transfer: TransportControl {
    private struct State {
        var task: Task<Void, Never>?
        var channel: (any Channel)?
        var cancelled = false
    }
    private let state = NIOLockedValueBox(State())
    /// Whether the body's reader wants reading paused; the connection's handler reads it whenever told
    /// to look, so that a pause and a resume told in quick succession cannot end in the wrong order.
    private let paused = NIOLockedValueBox(false)

    /// Whether the transfer was cancelled.
    var isCancelled: Bool { state.withLockedValue { $0.cancelled } }

    /// The task that runs the request; cancelled at once if the transfer already was.
    func attach(_ task: Task<Void, Never>) {
        let cancelled = state.withLockedValue { state in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    /// A connection being made for the transfer: cancelling closes it. Returns `false` if the transfer
    /// was cancelled already.
    func adopt(_ channel: any Channel) -> Bool {
        state.withLockedValue { state in
            guard !state.cancelled else { return false }
            state.channel = channel
            return true
        }
    }

    /// The connection the exchange runs on, told whether to read. Returns `false` if the transfer was
    /// cancelled.
    func attach(_ channel: any Channel) -> Bool {
        guard adopt(channel) else { return false }
        channel.triggerUserOutboundEvent(ExchangeHandler.Control.look(paused), promise: nil)
        return true
    }

    /// The exchange on `channel` is over; returns whether the transfer still runs (its connection may then
    /// serve another). A cancel either comes before, and the connection is not kept, or finds no
    /// connection to close.
    func detach(_ channel: any Channel) -> Bool {
        state.withLockedValue { state in
            if state.channel === channel { state.channel = nil }
            return !state.cancelled
        }
    }

    func cancel() {
        let (task, channel) = state.withLockedValue { state in
            state.cancelled = true
            defer { state.channel = nil }
            return (state.task, state.channel)
        }
        channel?.close(promise: nil)
        task?.cancel()
    }

    func pauseReceiving() { setPaused(true) }

    func resumeReceiving() { setPaused(false) }

    private func setPaused(_ value: Bool) {
        paused.withLockedValue { $0 = value }
        state.withLockedValue { $0.channel }?.triggerUserOutboundEvent(
            ExchangeHandler.Control.look(paused), promise: nil)
    }
}
