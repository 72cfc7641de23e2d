import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NetworkCore

/// Serves a ``PoolInspector`` to a browser: one page that shows the pools' running and waiting tasks,
/// a waterfall of the last ones, each task's redacted heads, body and `curl`, a cancel button per task
/// and the HAR, updated live over Server-Sent Events.
///
/// It listens on 127.0.0.1 only, on a port of its choosing unless told, and answers only requests that
/// carry its token (random unless told), which ``url`` includes: open that URL, keep it private.
/// ```swift
/// let inspector = PoolInspector()
/// let pool = TaskPool(configuration: .init(inspector: inspector))
/// let server = try await InspectorServer.start(inspector: inspector)
/// print("inspector:", server.url)   // http://127.0.0.1:PORT/?token=…
/// // … send through the pool …
/// try await server.stop()
/// ```
/// Nothing starts it for you: a pool is inspected, and a port opened, only where you say so.
public final class InspectorServer: Sendable {
    /// What the server allows and where it listens.
    public struct Configuration: Sendable {
        /// The loopback port to listen on; 0 (the default) for any free one.
        public var port: Int
        /// Whether the page may cancel tasks (its cancel buttons, `POST /cancel`); `true` unless told.
        public var allowsCancel: Bool
        /// The secret every request must carry; `nil` (the default) for 32 random hexadecimal digits.
        public var token: String?
        /// How often, at most, the page is sent a new view while tasks change; a view is also sent each
        /// second while tasks run, so that their elapsed times move.
        public var refreshInterval: TimeInterval

        /// Creates a configuration.
        public init(
            port: Int = 0, allowsCancel: Bool = true, token: String? = nil, refreshInterval: TimeInterval = 0.25
        ) {
            self.port = port
            self.allowsCancel = allowsCancel
            self.token = token
            self.refreshInterval = refreshInterval
        }
    }

    /// The page's address, token included: `http://127.0.0.1:PORT/?token=…`.
    public let url: URL
    /// The port it listens on.
    public let port: Int
    private let channel: any Channel
    private let settings: InspectorHandler.Settings

    private init(channel: any Channel, port: Int, token: String, settings: InspectorHandler.Settings) {
        self.channel = channel
        self.settings = settings
        self.port = port
        url = URL(string: "http://127.0.0.1:\(port)/?token=\(token)")!
    }

    /// Starts serving `inspector` on 127.0.0.1.
    /// - Throws: ``InspectorServerError``: ``InspectorServerError/invalidToken`` for a token that is empty
    ///   or not URL-safe, ``InspectorServerError/invalidPort(_:)``, or
    ///   ``InspectorServerError/cannotListen(port:reason:)`` when the port is taken or not allowed.
    public static func start(
        inspector: PoolInspector, configuration: Configuration = Configuration()
    ) async throws -> InspectorServer {
        let token = configuration.token ?? randomToken()
        guard !token.isEmpty, token.utf8.allSatisfy(isTokenByte) else { throw InspectorServerError.invalidToken }
        guard (0...65_535).contains(configuration.port) else {
            throw InspectorServerError.invalidPort(configuration.port)
        }
        let settings = InspectorHandler.Settings(
            inspector: inspector, token: token, allowsCancel: configuration.allowsCancel,
            refreshInterval: TimeAmount.nanoseconds(Int64(max(0.01, configuration.refreshInterval) * 1e9)))
        let portBox = NIOLockedValueBox(0)
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        InspectorHandler(settings: settings, port: portBox.withLockedValue { $0 }))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: "127.0.0.1", port: configuration.port).get()
        } catch {
            throw InspectorServerError.cannotListen(port: configuration.port, reason: String(describing: error))
        }
        let port = channel.localAddress?.port ?? configuration.port
        portBox.withLockedValue { $0 = port }
        return InspectorServer(channel: channel, port: port, token: token, settings: settings)
    }

    /// The view a page is sent now, as JSON: what `GET /inspection` answers and each `inspection` event
    /// of `GET /events` carries (see Docs/LiveInspector.md).
    public func view() -> Data {
        settings.writer.feed(allowsCancel: settings.allowsCancel, inspection: settings.inspector.inspection)
    }

    /// Stops listening and closes the page's connections.
    public func stop() async throws {
        try await channel.close()
    }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "_")
    }
}

/// Why an ``InspectorServer`` could not start.
public enum InspectorServerError: Error, Equatable, Sendable {
    /// The token is empty or has a character other than letters, digits, `-` and `_`.
    case invalidToken
    /// The port is not in 0...65535.
    case invalidPort(Int)
    /// The server could not listen on 127.0.0.1 at this port (taken, or not allowed); `reason` is the
    /// system's.
    case cannotListen(port: Int, reason: String)
}
