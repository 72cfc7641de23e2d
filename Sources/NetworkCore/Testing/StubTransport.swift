import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that answers in-process, for tests and offline use: from a closure, from each
/// endpoint's ``Endpoint/sampleData``, or with an error.
///
/// ```swift
/// let stub = StubTransport { request, _ in .json(#"{"id": 1}"#) }
/// let offline = StubTransport.sampleData(delay: 0.05)
/// let broken = StubTransport.failing(with: URLError(.notConnectedToInternet))
/// let pool = TaskPool(configuration: .init(transport: stub))
/// ```
/// A delay is cancellable: cancelling the task ends the wait at once.
public struct StubTransport: Transport {
    /// Answers a request, or throws any error (a `URLError` to simulate the network).
    public typealias Responder = @Sendable (URLRequest, TransportContext) async throws -> StubResponse

    /// Seconds to wait before answering.
    public let delay: TimeInterval
    private let responder: Responder

    /// Creates a stub that waits `delay` seconds, then answers with `responder`.
    public init(delay: TimeInterval = 0, responder: @escaping Responder) {
        self.delay = delay
        self.responder = responder
    }

    /// A stub makes no connection, so a pool's pins have nothing to refuse: `nil`.
    public var pinningRefusal: String? { nil }

    /// A stub that answers every request with its endpoint's ``Endpoint/sampleData``.
    /// A request whose endpoint has none fails with ``StubError/noSampleData(url:)``.
    public static func sampleData(statusCode: Int = 200, delay: TimeInterval = 0) -> StubTransport {
        StubTransport(delay: delay) { request, context in
            guard let data = context.sampleData else {
                throw StubError.noSampleData(url: Redactor.default.redact(request.url))
            }
            return StubResponse(statusCode: statusCode, headers: ["Content-Type": "application/json"], body: data)
        }
    }

    /// A stub whose every request fails with `error` after `delay` seconds.
    public static func failing(with error: any Error, delay: TimeInterval = 0) -> StubTransport {
        StubTransport(delay: delay) { _, _ in throw error }
    }

    /// Waits, asks the responder, and returns its answer as a real `HTTPURLResponse`.
    public func send(_ request: URLRequest, context: TransportContext) async throws -> (Data, HTTPURLResponse) {
        if delay > 0 {
            try await Task.sleep(nanoseconds: MonotonicClock.nanoseconds(delay))
        }
        try Task.checkCancellation()
        let stub = try await responder(request, context)
        guard let url = request.url,
            let response = HTTPURLResponse(
                url: url, statusCode: stub.statusCode, httpVersion: "HTTP/1.1", headerFields: stub.headers)
        else {
            throw URLError(.badURL)
        }
        context.didReceiveResponse()
        if !stub.body.isEmpty { context.didReceive(bytes: stub.body.count) }
        return (stub.body, response)
    }
}

/// One canned answer of a ``StubTransport``.
public struct StubResponse: Sendable {
    /// The HTTP status.
    public var statusCode: Int
    /// The response headers.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// Creates an answer.
    public init(statusCode: Int = 200, headers: [String: String] = [:], body: Data = Data()) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
    }

    /// A JSON answer: `.json(#"{"id": 1}"#, statusCode: 200)`.
    public static func json(_ text: String, statusCode: Int = 200, headers: [String: String] = [:]) -> StubResponse {
        StubResponse(
            statusCode: statusCode, headers: headers.merging(["Content-Type": "application/json"]) { mine, _ in mine },
            body: Data(text.utf8))
    }
}

/// Why a ``StubTransport`` could not answer.
public enum StubError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request's endpoint has no ``Endpoint/sampleData``.
    case noSampleData(url: String)

    /// What to fix, e.g. "StubTransport.sampleData has no answer for https://…: its endpoint's sampleData is
    /// nil".
    public var description: String {
        switch self {
        case .noSampleData(let url):
            "StubTransport.sampleData has no answer for \(url): its endpoint's sampleData is nil"
        }
    }
}
