import Foundation
import NIOSSL
import NetworkCore
import NetworkCoreAsyncHTTPClient
import NetworkCoreNIO

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TransportUnderTest {
    /// The Integrations package runs the shared integration suite over AsyncHTTPClient and over
    /// NIOTransport.
    static let all = [asyncHTTPClient, nio]
    /// The transports the suites against httpbin run over: NIOTransport over HTTP/2 too, to the same httpbin
    /// on hypercorn, when `Scripts/test` started it. Not the loopback suites: their `MockServer` speaks plain
    /// HTTP/1.1, where that arm is the `nio` one again (and a third of the pass's load, which made its timed
    /// tests late on a 2-core machine).
    static let httpbin = all + (HTTPBinOverHTTP2.configured ? [nioHTTP2] : [])
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

extension TransportUnderTest {
    /// NIOTransport as configured by default but for trusting the test's certificate, its httpbin requests
    /// sent to the same httpbin served over HTTP/2 (``HTTPBinOverHTTP2``); the suite's other servers (its
    /// own, in the test process) speak HTTP/1.1 only, over plain http, and are reached as they are.
    static let nioHTTP2 = TransportUnderTest(name: "NIOTransport over HTTP/2", sendsFileLength: true) {
        var configuration = NIOTransport.Configuration()
        if let certificate = HTTPBinOverHTTP2.certificate { configuration.tls.trustRoots = .file(certificate) }
        return HTTPBinOverHTTP2(base: NIOTransport(configuration: configuration))
    }
}

/// Sends the requests for the suite's httpbin (`NETWORKCORE_HTTPBIN_URL`, HTTP/1.1 on gunicorn) to the same
/// httpbin served over HTTP/2 on TLS (hypercorn, `NETWORKCORE_HTTPBIN_H2_URL`, its certificate in
/// `NETWORKCORE_HTTPBIN_H2_CERT`), as `Scripts/test` starts both; other requests go as they are.
struct HTTPBinOverHTTP2: Transport {
    static let environment = ProcessInfo.processInfo.environment
    static let target = environment["NETWORKCORE_HTTPBIN_H2_URL"].flatMap(URLComponents.init(string:))
    static let certificate = environment["NETWORKCORE_HTTPBIN_H2_CERT"]
    static let source = environment["NETWORKCORE_HTTPBIN_URL"].flatMap(URLComponents.init(string:))
    static var configured: Bool { target != nil && source != nil && certificate != nil }

    let base: NIOTransport

    func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
        base.start(Self.rewritten(request), body: body, events: events)
    }

    var maximumRequestsPerHost: Int? { base.maximumRequestsPerHost }
    var pinningRefusal: String? { base.pinningRefusal }

    static func rewritten(_ request: URLRequest) -> URLRequest {
        guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let source, let target, components.host == source.host, components.port == source.port
        else { return request }
        components.scheme = target.scheme
        components.host = target.host
        components.port = target.port
        var request = request
        request.url = components.url
        return request
    }
}
