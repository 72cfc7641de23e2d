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
        /// The TLS context, made when the first `https` request needs it.
        var tls: NIOSSLContext?
        /// How pinned connections are verified, made when the first one is.
        var pinned: PinnedVerification?
    }

    private let state = NIOLockedValueBox(State())
    private let configuration: NIOTransport.Configuration
    private let group: any EventLoopGroup

    init(configuration: NIOTransport.Configuration, group: any EventLoopGroup) {
        self.configuration = configuration
        self.group = group
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
        let idle = state.withLockedValue { state in
            state.shutDown = true
            return state.idle.values.flatMap { $0 }
        }
        for connection in idle { connection.expiry.cancel() }
        for connection in idle { try? await connection.connection.channel.close() }
    }

    /// Closes the idle connections without waiting.
    func closeIdle() {
        let idle = state.withLockedValue { state in
            defer { state.idle = [:] }
            return state.idle.values.flatMap { $0 }
        }
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
        let (channel, chainPins) = try await connect(to: origin, pins: pins, timeout: timeout, transfer: transfer) {
            pipeline in
            try pipeline.addHTTPClientHandlers()
            if decompression { try pipeline.addHandler(NIOHTTPResponseDecompressor(limit: .none)) }
            try pipeline.addHandler(ExchangeHandler())
        }
        channel.closeFuture.whenComplete { [weak self] _ in self?.forget(channel) }
        return Connection(channel: channel, origin: origin, chainPins: chainPins)
    }

    /// A new connection to `origin`, made within `timeout` and adopted by `transfer`, its TLS handshake done,
    /// with the handlers `configure` adds after TLS. Never kept among the idle ones by itself. With `pins` (the
    /// host's), the chain is verified by
    /// ``PinnedVerification`` and must have one of them: the verified chain's pins are returned.
    /// - Throws: ``PinningError/mismatch(host:chainPins:)`` when the verified chain has none of `pins`;
    ///   ``PinningError/notEncrypted(host:)`` for pins over plain `http`.
    func connect(
        to origin: Origin, pins: Set<String> = [], timeout: TimeAmount, transfer: Transfer,
        configure: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void
    ) async throws -> (any Channel, chainPins: [String]?) {
        guard !state.withLockedValue({ $0.shutDown }) else { throw TransportShutDown() }
        if !pins.isEmpty, !origin.secure { throw PinningError.notEncrypted(host: origin.host.lowercased()) }
        let tls = origin.secure ? try tlsContext() : nil
        let pinned = pins.isEmpty ? nil : try await pinnedVerification()
        // The verified chain's pins, set by the verification on the connection's loop.
        let verified = NIOLockedValueBox<[String]?>(nil)
        // Server Name Indication and the certificate's name check take a host name, never an address.
        let serverName = (try? SocketAddress(ipAddress: origin.host, port: 0)) == nil ? origin.host : nil
        let largest = max(configuration.maximumReadSize, 1 << 14)
        // The TLS handshake of each connection tried (more than one when a host has several addresses).
        let handshakes = NIOLockedValueBox<[ObjectIdentifier: EventLoopFuture<Void>]>([:])
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
                    if let tls, let pinned {
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
                    } else if let tls {
                        try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    }
                    if tls != nil {
                        let handshake = channel.eventLoop.makePromise(of: Void.self)
                        handshakes.withLockedValue { $0[ObjectIdentifier(channel)] = handshake.futureResult }
                        try pipeline.addHandler(HandshakeWaiter(handshake: handshake))
                    }
                    try configure(pipeline)
                }
            }
            .connect(host: origin.host, port: origin.port).get()
        if let handshake = handshakes.withLockedValue({ $0[ObjectIdentifier(channel)] }) {
            // A connection serves once its TLS handshake is done; one that fails is the request's error.
            do {
                try await handshake.get()
            } catch {
                channel.close(promise: nil)
                throw error
            }
        }
        guard !pins.isEmpty else { return (channel, nil) }
        let chainPins = verified.withLockedValue { $0 } ?? []
        guard !pins.isDisjoint(with: chainPins) else {
            channel.close(promise: nil)
            throw PinningError.mismatch(host: origin.host.lowercased(), chainPins: chainPins)
        }
        return (channel, chainPins)
    }

    /// How pinned connections are verified: the TLS configuration's roots, read once.
    private func pinnedVerification() async throws -> PinnedVerification {
        if let made = state.withLockedValue({ $0.pinned }) { return made }
        let made = try await PinnedVerification(configuration.tls)
        state.withLockedValue { $0.pinned = made }
        return made
    }

    private func tlsContext() throws -> NIOSSLContext {
        try state.withLockedValue { state in
            if let tls = state.tls { return tls }
            let tls = try NIOSSLContext(configuration: configuration.tls)
            state.tls = tls
            return tls
        }
    }
}

/// Completes when the connection's TLS handshake is done, then leaves the pipeline; fails with the
/// handshake's error, or when the connection closes first.
final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let handshake: EventLoopPromise<Void>

    init(handshake: EventLoopPromise<Void>) { self.handshake = handshake }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
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
