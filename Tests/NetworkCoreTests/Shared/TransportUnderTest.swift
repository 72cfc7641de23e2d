import Foundation
import Testing

@testable import NetworkCore

/// A transport the shared integration suite (this folder) runs against: the root package's tests run
/// it over `URLSessionTransport`, the Integrations package's over `AsyncHTTPClientTransport` and
/// `NIOTransport` (each package lists its own in ``all`` and ``fileUploads``).
struct TransportUnderTest: Sendable, CustomTestStringConvertible {
    /// How a test names it: "URLSession", "AsyncHTTPClient"…
    let name: String
    /// Whether a file body goes with its `Content-Length` (else chunked).
    let sendsFileLength: Bool
    /// Whether a body with a `Content-Encoding` or `Transfer-Encoding` the transport does not know reaches
    /// the pool as it was sent (SwiftNIO's), or fails typed (FoundationNetworking's libcurl).
    var readsUnknownCodings = true
    /// Makes a transport of this kind, of its own.
    let make: @Sendable () -> any Transport

    var testDescription: String { name }

    /// A pool over a new transport of this kind, configured as `configuration` says but for its transport,
    /// recording into `recorder` if given. By default a request times out after 15 s without an answer,
    /// stretched in a sanitizer's run as the other wall-clock bounds are (``slowRunScale``): there the whole
    /// suite runs at once, several times slower, and a request over `URLSession` waited longer than 15 s.
    func pool(
        _ configuration: TaskPool.Configuration = .init(requestTimeout: 15 * slowRunScale),
        recordingInto recorder: HARRecorder? = nil
    ) -> TaskPool {
        var configuration = configuration
        let transport = make()
        configuration.transport = recorder.map { RecordingTransport(transport, recorder: $0) } ?? transport
        return TaskPool(configuration: configuration)
    }
}
