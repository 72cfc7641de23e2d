import NetworkCore
import NetworkCoreAsyncHTTPClient
import NetworkCoreNIO

extension TransportUnderTest {
    /// The Integrations package runs the shared integration suite over AsyncHTTPClient and over
    /// NIOTransport.
    static let all = [asyncHTTPClient, nio]
    /// The transports the shared faulty load runs over.
    static let faultLoad = [asyncHTTPClient, nio]
    /// Every way the transports here send a file: both read it as they send, with its length.
    static let fileUploads = [asyncHTTPClient, nio]

    /// NetworkCore's own SwiftNIO transport, as configured by default.
    static let nio = TransportUnderTest(name: "NIOTransport", sendsFileLength: true) { NIOTransport() }

    /// The transport's default configuration but for its connections: up to 64 to a host rather than
    /// AsyncHTTPClient's 8, as a server under load is used (the faulty load keeps 128 requests in flight).
    /// `AsyncHTTPClientTransportTests` uses the default as it is.
    static let asyncHTTPClient = TransportUnderTest(name: "AsyncHTTPClient", sendsFileLength: true) {
        var configuration = AsyncHTTPClientTransport.defaultConfiguration
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        return AsyncHTTPClientTransport(configuration: configuration)
    }
}
