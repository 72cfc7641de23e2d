import Foundation
import NetworkCore

/// What a ``MockServer`` sends for one request: a status, headers and a body, how the body is framed,
/// and the network faults to play while sending it.
///
/// ```swift
/// let page = MockResponse.json(#"{"page": 1, "results": []}"#)
/// let missing = MockResponse.json(#"{"status_code": 34}"#, statusCode: 404)
/// let cut = MockResponse.json(#"{"page": 1}"#).with(.cut(afterBodyBytes: 4))
/// let refused = MockResponse.fault(.reset)
/// ```
public struct MockResponse: Sendable {
    /// The HTTP status.
    public var statusCode: Int
    /// The response headers. `Content-Length` and `Transfer-Encoding` are the server's: it writes them from
    /// ``framing`` and drops yours. `Connection` says `keep-alive` or `close` as the connection's state
    /// has it, followed by the other options of yours (`Connection: x-trace` is sent as
    /// `Connection: keep-alive, x-trace`, for a test of the fields a `Connection` names).
    public var headers: [String: String]
    /// The body.
    public var body: Data
    /// How the body is framed on the wire.
    public var framing: Framing
    /// The faults played while sending, in the order given (see ``MockFault``).
    public var faults: [MockFault]
    /// Where the body is split into pieces written one by one (a server-sent event each, say), as offsets
    /// into ``body``; empty for one piece.
    var pieceEnds: [Int] = []
    /// Seconds between pieces.
    var pieceInterval: TimeInterval = 0
    /// Set on the answer of a route that lets the next answerer answer instead (a replay with no entry).
    var isUnanswered = false

    /// An answer that passes the request on to the next route or the handler.
    static var unanswered: MockResponse {
        var response = MockResponse()
        response.isUnanswered = true
        return response
    }

    /// How a body is framed (RFC 9112 §6).
    public enum Framing: Sendable, Equatable {
        /// A `Content-Length` header and the body.
        case contentLength
        /// `Transfer-Encoding: chunked`, in chunks of at most `pieceSize` bytes (at least 1).
        case chunked(pieceSize: Int)
        /// No length: the body ends when the server closes the connection after it (RFC 9112 §6.3), as an
        /// HTTP/1.0 server answers. `transferEncoding`, if given, is sent as the `Transfer-Encoding` field
        /// (the body is sent as it is, not coded), for a test of a coding the client does not know:
        /// `.untilClose(transferEncoding: "x-custom")`.
        case untilClose(transferEncoding: String?)
    }

    /// Creates a response.
    public init(
        statusCode: Int = 200, headers: [String: String] = [:], body: Data = Data(), framing: Framing = .contentLength,
        faults: [MockFault] = []
    ) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.framing = framing
        self.faults = faults
    }

    /// The same answer as a ``StubResponse`` given to a `StubTransport`, sent over the network.
    public init(_ stub: StubResponse, faults: [MockFault] = []) {
        self.init(statusCode: stub.statusCode, headers: stub.headers, body: stub.body, faults: faults)
    }

    /// A JSON body given as text: `.json(#"{"id": 1}"#, statusCode: 200)`.
    public static func json(_ text: String, statusCode: Int = 200, headers: [String: String] = [:]) -> MockResponse {
        MockResponse(StubResponse.json(text, statusCode: statusCode, headers: headers))
    }

    /// A JSON body encoded from `value` (with `encoder`); throws what the encoder throws.
    public static func json<Value: Encodable>(
        encoding value: Value, statusCode: Int = 200, headers: [String: String] = [:],
        encoder: JSONEncoder = JSONEncoder()
    ) throws -> MockResponse {
        let data = try encoder.encode(value)
        return .data(data, statusCode: statusCode, contentType: "application/json", headers: headers)
    }

    /// A `text/plain` body.
    public static func text(_ text: String, statusCode: Int = 200, headers: [String: String] = [:]) -> MockResponse {
        .data(Data(text.utf8), statusCode: statusCode, contentType: "text/plain; charset=utf-8", headers: headers)
    }

    /// Bytes with a `Content-Type`.
    public static func data(
        _ data: Data, statusCode: Int = 200, contentType: String = "application/octet-stream",
        headers: [String: String] = [:]
    ) -> MockResponse {
        MockResponse(
            statusCode: statusCode, headers: headers.merging(["Content-Type": contentType]) { mine, _ in mine },
            body: data)
    }

    /// A status with no body, e.g. `.status(204)` or `.status(503, headers: ["Retry-After": "1"])`.
    public static func status(_ statusCode: Int, headers: [String: String] = [:]) -> MockResponse {
        MockResponse(statusCode: statusCode, headers: headers)
    }

    /// The contents of the file at `url`; throws ``MockServerError/unreadableFile(path:reason:)`` if it
    /// cannot be read.
    public static func file(
        _ url: URL, statusCode: Int = 200, contentType: String = "application/octet-stream",
        headers: [String: String] = [:]
    ) throws -> MockResponse {
        do {
            return .data(try Data(contentsOf: url), statusCode: statusCode, contentType: contentType, headers: headers)
        } catch {
            throw MockServerError.unreadableFile(path: url.path, reason: "\(error)")
        }
    }

    /// A JSON fixture from a bundle, such as a captured API response in a test target's resources:
    /// `try .fixture("now_playing", in: .module)` reads `now_playing.json`. Throws
    /// ``MockServerError/missingFixture(name:bundle:)`` if the bundle holds no such file.
    public static func fixture(
        _ name: String, extension fileExtension: String = "json", in bundle: Bundle, subdirectory: String? = nil,
        statusCode: Int = 200, headers: [String: String] = [:]
    ) throws -> MockResponse {
        guard
            let url = bundle.url(forResource: name, withExtension: fileExtension, subdirectory: subdirectory)
                ?? bundle.url(forResource: name, withExtension: fileExtension, subdirectory: "Fixtures")
        else {
            throw MockServerError.missingFixture(name: "\(name).\(fileExtension)", bundle: bundle.bundlePath)
        }
        let type = fileExtension == "json" ? "application/json" : "application/octet-stream"
        return try .file(url, statusCode: statusCode, contentType: type, headers: headers)
    }

    /// A redirect to `location` (a path on the same server, or an absolute URL).
    public static func redirect(to location: String, statusCode: Int = 302) -> MockResponse {
        .status(statusCode, headers: ["Location": location])
    }

    /// A `text/event-stream` body (chunked), one event per piece with `interval` seconds before each
    /// but the first: a slow drip of server-sent events. Each event is written as `data: <event>` lines
    /// and a blank line.
    public static func serverSentEvents(_ events: [String], interval: TimeInterval) -> MockResponse {
        var body = Data()
        var ends: [Int] = []
        for event in events {
            for line in event.split(separator: "\n", omittingEmptySubsequences: false) {
                body.append(contentsOf: Array("data: \(line)\n".utf8))
            }
            body.append(UInt8(ascii: "\n"))
            ends.append(body.count)
        }
        var response = MockResponse(
            headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache"], body: body,
            framing: .chunked(pieceSize: max(1, body.count)))
        response.pieceEnds = ends
        response.pieceInterval = max(0, interval)
        return response
    }

    /// No answer at all, only `fault` (one that ends the connection, such as ``MockFault/reset``).
    public static func fault(_ fault: MockFault) -> MockResponse {
        MockResponse(faults: [fault])
    }

    /// This response with `fault` played too.
    public func with(_ fault: MockFault) -> MockResponse {
        var copy = self
        copy.faults.append(fault)
        return copy
    }

    /// This response with its body sent chunked, `pieceSize` bytes a chunk.
    public func chunked(pieceSize: Int = 16_384) -> MockResponse {
        var copy = self
        copy.framing = .chunked(pieceSize: max(1, pieceSize))
        return copy
    }
}

/// A network fault a ``MockServer`` plays for one response (``MockResponse/with(_:)``) or for the next
/// requests (``MockServer/failNext(_:with:)``).
///
/// The first five end the connection instead of answering. The others shape how the answer is sent,
/// and can be combined: a delay, then a huge header, then a throttled body cut after 1,000 bytes.
public enum MockFault: Sendable {
    /// Resets the connection (TCP RST) as soon as the request is read.
    case reset
    /// Closes the connection as soon as the request is read, sending nothing.
    case closeBeforeAnswer
    /// Sends nothing and keeps the connection open until the client closes it (its timeout or cancel), a
    /// minute at most.
    case neverAnswer
    /// As ``neverAnswer``, and calls `then` when the client closes the connection: how a test sees that a
    /// cancel or a timeout reached the network.
    case holdUntilClientCloses(then: @Sendable () -> Void)
    /// Sends a head that is not HTTP, then closes the connection.
    case malformedHead
    /// Waits `seconds` before sending the head.
    case delayHead(TimeInterval)
    /// Adds a header `X-Mock-Padding` of `bytes` bytes to the head.
    case hugeHeader(bytes: Int)
    /// Sends the body at about `bytesPerSecond` (at least 1), in pieces a tenth of a second apart.
    case throttle(bytesPerSecond: Int)
    /// Sends the body in `pieces` parts, with `interval` seconds before each.
    case trickle(pieces: Int, interval: TimeInterval)
    /// Sends the head (with the whole body's length) and the first `bytes` of the body, then closes.
    case cut(afterBodyBytes: Int)
    /// Sends the head and half the body, then closes.
    case cutMidBody
    /// Sends the head and the first `bytes` of the body, then waits until `gate` is opened (a minute at
    /// most; then it closes the connection there) and sends the rest.
    case pause(afterBodyBytes: Int, until: MockGate)
}

extension MockFault {
    /// Whether the fault ends the connection instead of sending an answer.
    var endsConnection: Bool {
        switch self {
        case .reset, .closeBeforeAnswer, .neverAnswer, .holdUntilClientCloses, .malformedHead: true
        default: false
        }
    }
}

/// A gate a test opens to let a paused response go on (``MockFault/pause(afterBodyBytes:until:)``).
public final class MockGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    /// Creates a closed gate.
    public init() {}

    /// Opens the gate for one waiting response (or the next one to arrive at it).
    public func open() { semaphore.signal() }

    /// Waits until opened or `seconds` have passed; whether it was opened.
    func wait(seconds: TimeInterval) -> Bool { semaphore.wait(timeout: .now() + seconds) == .success }
}

/// Why a ``MockServer`` call failed.
public enum MockServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server could not listen on the loopback address: the call that failed and its `errno`.
    case couldNotStart(String)
    /// ``MockServer/takeRequest(timeout:)`` waited `seconds` and no request came.
    case noRequest(within: TimeInterval)
    /// ``MockServer/takeRequest(timeout:)`` was waiting when the server stopped.
    case stopped
    /// A file given to ``MockResponse/file(_:statusCode:contentType:headers:)`` could not be read.
    case unreadableFile(path: String, reason: String)
    /// ``MockResponse/fixture(_:extension:in:subdirectory:statusCode:headers:)`` found no such file.
    case missingFixture(name: String, bundle: String)
    /// A route's pattern is not a path: it must start with `/` (or be `*`).
    case invalidPattern(String)

    /// What went wrong, in a sentence.
    public var description: String {
        switch self {
        case .couldNotStart(let reason): "MockServer could not start: \(reason)"
        case .noRequest(let seconds): "MockServer received no request within \(seconds) s"
        case .stopped: "MockServer stopped while a request was awaited"
        case .unreadableFile(let path, let reason): "MockServer could not read \(path): \(reason)"
        case .missingFixture(let name, let bundle): "MockServer found no fixture \(name) in \(bundle)"
        case .invalidPattern(let pattern): "MockServer route pattern \"\(pattern)\" must start with / or be *"
        }
    }
}
