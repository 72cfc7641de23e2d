import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends a pool's requests with AsyncHTTPClient (SwiftNIO): its connection pool, HTTP/2, TLS and
/// proxy settings, with NetworkCore's tasks, ids, retries, redirect policy and transfers on top.
///
/// Bodies stream both ways: a file or a stream is read as the connection takes it, and a response
/// body is handed to the pool chunk by chunk as it arrives, reading no further while a stream's
/// consumer falls behind. Cancelling a task cancels its request.
/// ```swift
/// let transport = AsyncHTTPClientTransport()
/// let pool = TaskPool(configuration: .init(transport: transport))
/// // … send through the pool …
/// try await transport.shutdown()
/// ```
///
/// The transport makes its own `HTTPClient` from the configuration you give, and:
/// - follows redirects itself, as the task's ``RedirectPolicy`` says (credentials stay behind when the
///   origin changes): the client's own `redirectConfiguration` is set to `.disallow`;
/// - waits for the response's head at most the request's `timeoutInterval` (the endpoint's `timeout`);
///   between body chunks, the client's read timeout applies (60 s in ``defaultConfiguration``);
/// - reports errors as `URLError`s with the codes ``RetryPolicy`` knows (`.timedOut`,
///   `.cannotConnectToHost`, `.networkConnectionLost`…), the client's own error underneath;
/// - keeps no cookies and no cache.
public final class AsyncHTTPClientTransport: Transport {
    /// The client requests go through. It belongs to this transport: ``shutdown()`` shuts it down.
    public let client: HTTPClient
    /// Whether the client decodes compressed answers, so requests ask for them.
    private let decompresses: Bool
    private let isShutDown = NIOLockedValueBox(false)

    /// The configuration ``init(configuration:eventLoopGroup:)`` uses unless told otherwise: AsyncHTTPClient's
    /// defaults, but for what makes it answer as `URLSession` does:
    /// - compressed answers (`gzip`, `deflate`) are decoded, with no ratio limit (the pool's
    ///   ``TaskPool/Configuration/maximumResponseBytes`` bounds the answers it keeps in memory);
    /// - a read that waits 60 s for the next bytes times out (`URLSession`'s `timeoutIntervalForRequest`);
    /// - a connection that cannot be made fails the request at once, for the pool's ``RetryPolicy`` to
    ///   judge, rather than being tried again by the client until its connect timeout.
    public static var defaultConfiguration: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.decompression = .enabled(limit: .none)
        configuration.timeout.read = TimeAmount.seconds(60)
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    /// Creates a transport with a client of its own, made from `configuration` on `eventLoopGroup`.
    /// The configuration's redirect setting is replaced: the transport follows redirects itself, as the
    /// task's ``RedirectPolicy`` says.
    public init(
        configuration: HTTPClient.Configuration = AsyncHTTPClientTransport.defaultConfiguration,
        eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup
    ) {
        var configuration = configuration
        configuration.redirectConfiguration = .disallow
        if case .enabled = configuration.decompression { decompresses = true } else { decompresses = false }
        client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
    }

    /// Shuts the client down: its connections close, and requests still running fail. Call it once the
    /// pools that use this transport are done; a transport dropped without it shuts its client down then.
    public func shutdown() async throws {
        let first = isShutDown.withLockedValue { shutDown in
            defer { shutDown = true }
            return !shutDown
        }
        guard first else { return }
        try await client.shutdown()
    }

    deinit {
        if !isShutDown.withLockedValue({ $0 }) { client.shutdown { _ in } }
    }

    /// Starts `request` in a Swift task of its own: its head, body chunks, redirects, bytes sent and end go
    /// to `events`.
    public func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
        let transfer = Transfer()
        transfer.attach(
            Task { [self] in
                do {
                    try await run(request, body: body, events: events, transfer: transfer)
                } catch {
                    events.fail(Self.translate(error, cancelled: Task.isCancelled))
                }
            })
        return transfer
    }

    /// Sends `request`, following redirects as the task's policy says, then reports the answer.
    private func run(_ request: URLRequest, body: RequestBody, events: TransportEvents, transfer: Transfer) async throws
    {
        var current = request
        var body = body
        var hops = 0
        while true {
            let (outgoing, sentWhole) = try await outgoingRequest(current, body: body, events: events)
            let wait = current.timeoutInterval > 0 ? min(current.timeoutInterval, 86_400 * 365) : 86_400 * 365
            let response = try await client.execute(
                outgoing, deadline: NIODeadline.now() + TimeAmount.nanoseconds(Int64(wait * 1e9)))
            if let next = try await redirect(from: current, body: body, response: response, hops: &hops, events: events)
            {
                (current, body) = next
                continue
            }
            if let sentWhole { events.sent(totalBytes: sentWhole, expected: sentWhole) }
            guard events.receive(head: Self.head(of: response, url: current.url ?? request.url)) else { return }
            for try await buffer in response.body {
                await transfer.waitWhilePaused()
                guard events.receive(body: Self.data(sharing: buffer)) else { return }
            }
            return events.finish()
        }
    }

    /// The request to send next and its body when `response` is a redirect the policy follows (its body
    /// read and dropped, the hop reported); `nil` when it is the answer.
    private func redirect(
        from request: URLRequest, body: RequestBody, response: HTTPClientResponse, hops: inout Int,
        events: TransportEvents
    ) async throws -> (URLRequest, RequestBody)? {
        guard [301, 302, 303, 307, 308].contains(response.status.code),
            let location = response.headers.first(name: "Location"),
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL,
            let next = events.redirectPolicy.request(
                forHop: hops + 1, after: request, statusCode: Int(response.status.code), to: target)
        else { return nil }
        let keepsBody = next.httpMethod == request.httpMethod
        // A stream is read once: a redirect that would send it again is not followed.
        if keepsBody, case .stream = body { return nil }
        hops += 1
        // Read to its end, so that the connection serves the next request; a large one is dropped with it.
        _ = try? await response.body.collect(upTo: 1 << 20)
        events.redirected(statusCode: Int(response.status.code), to: next.url)
        return (next, keepsBody ? body : .none)
    }

    /// Bodies up to this size (in memory, or a file read at once) go in one write with the request, and
    /// count as sent when the answer comes; larger ones go in pieces of this size, each counted as it is
    /// handed to the connection.
    ///
    /// Why one write: AsyncHTTPClient fails a request whose server answers 2xx with `Connection: close`
    /// before the client has marked the end of a streamed body, which it does only once it has asked for
    /// the piece after the last (swift-server/async-http-client, `HTTPRequestStateMachine`). A body sent
    /// in one write has its end with it.
    static let smallBody = FileReader.pieceSize

    /// `request` as AsyncHTTPClient takes it, its body read from `body` as the connection takes it; and the
    /// body's length when it goes in one write.
    private func outgoingRequest(
        _ request: URLRequest, body: RequestBody, events: TransportEvents
    ) async throws -> (HTTPClientRequest, sentWhole: Int?) {
        guard let url = request.url else { throw URLError(.badURL) }
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
        for (name, value) in request.allHTTPHeaderFields ?? [:] { outgoing.headers.add(name: name, value: value) }
        if decompresses, !outgoing.headers.contains(name: "Accept-Encoding") {
            outgoing.headers.add(name: "Accept-Encoding", value: "gzip, deflate")
        }
        let sentWhole: Int?
        (outgoing.body, sentWhole) = try await Self.body(
            of: body, counter: SentCounter(events: events, expected: body.length))
        return (outgoing, sentWhole)
    }

    /// `body` as AsyncHTTPClient sends it, each piece counted by `counter`; and its length when it goes in
    /// one write with the request (``smallBody``).
    static func body(
        of body: RequestBody, counter: SentCounter
    ) async throws -> (HTTPClientRequest.Body?, sentWhole: Int?) {
        switch body {
        case .none:
            return (nil, nil)
        case .data(let data) where data.count <= Self.smallBody:
            return (data.isEmpty ? nil : .bytes(ByteBuffer(bytes: data)), data.count)
        case .data(let data):
            return (
                .stream(
                    DataPieces(data: data, pieceSize: Self.smallBody).counted(by: counter),
                    length: .known(Int64(data.count))), nil
            )
        case .file(let file):
            let length = try RequestBody.readableLength(of: file)
            if length <= Self.smallBody {
                // One piece: read now, sent with the request.
                let whole = try await FileReader(path: file.path, length: length).next() ?? ByteBuffer()
                return (whole.readableBytes == 0 ? nil : .bytes(whole), whole.readableBytes)
            }
            return (
                .stream(FileChunks(file: file, length: length).counted(by: counter), length: .known(Int64(length))),
                nil
            )
        case .stream(let chunks, let length):
            return (
                .stream(
                    StreamPieces(chunks: chunks, length: length).counted(by: counter),
                    length: length.map { .known(Int64($0)) } ?? .unknown), nil
            )
        }
    }

    /// The readable bytes of `buffer` as `Data` without copying them: the `Data` holds the buffer until it
    /// is freed (a large download moves each chunk to its file without a copy in memory).
    static func data(sharing buffer: ByteBuffer) -> Data {
        let count = buffer.readableBytes
        guard count > 0 else { return Data() }
        return buffer.withUnsafeReadableBytes { bytes in
            Data(
                bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), count: count,
                deallocator: .custom { _, _ in withExtendedLifetime(buffer) {} })
        }
    }

    /// The response's head as `URLSession` gives it: repeated fields joined with commas.
    static func head(of response: HTTPClientResponse, url: URL?) -> HTTPURLResponse {
        var fields: [String: String] = [:]
        var names: [String: String] = [:]  // lowercased → as first seen
        for (name, value) in response.headers {
            let key = name.lowercased()
            if let seen = names[key] {
                fields[seen, default: ""] += ", " + value
            } else {
                names[key] = name
                fields[name] = value
            }
        }
        let version = "HTTP/\(response.version.major).\(response.version.minor)"
        // Both are valid here: a URL from the request, and a status AsyncHTTPClient parsed.
        return HTTPURLResponse(
            url: url ?? URL(fileURLWithPath: "/"), statusCode: Int(response.status.code), httpVersion: version,
            headerFields: fields)!
    }
}

// MARK: - The transfer's control

/// A running request: cancelling it cancels its Swift task (and with it the client's request); pausing
/// it stops reading the response body after the chunk in hand.
final class Transfer: TransportControl {
    private struct State {
        var task: Task<Void, Never>?
        var cancelled = false
        var paused = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = NIOLockedValueBox(State())

    /// The task that runs the request; cancelled at once if the transfer already was.
    func attach(_ task: Task<Void, Never>) {
        let cancelled = state.withLockedValue { state in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    func cancel() {
        let (task, waiter) = state.withLockedValue { state in
            state.cancelled = true
            defer { state.waiter = nil }
            return (state.task, state.waiter)
        }
        waiter?.resume()
        task?.cancel()
    }

    func pauseReceiving() {
        state.withLockedValue { $0.paused = true }
    }

    func resumeReceiving() {
        state.withLockedValue { state in
            state.paused = false
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }

    /// Returns at once unless the transfer is paused; then when it is resumed or cancelled.
    func waitWhilePaused() async {
        guard state.withLockedValue({ $0.paused && !$0.cancelled }) else { return }
        await withCheckedContinuation { continuation in
            let waits = state.withLockedValue { state in
                guard state.paused, !state.cancelled else { return false }
                state.waiter = continuation
                return true
            }
            if !waits { continuation.resume() }
        }
    }
}

// MARK: - Request bodies

/// Counts the bytes of a request body as the connection takes them, and reports them to the task.
struct SentCounter: Sendable {
    private let report: @Sendable (_ total: Int) -> Void
    private let total = NIOLockedValueBox(0)

    /// Reports to `events`, of `expected` bytes when known.
    init(events: TransportEvents, expected: Int?) {
        self.init { events.sent(totalBytes: $0, expected: expected) }
    }

    /// Reports each new total to `report`.
    init(report: @escaping @Sendable (_ total: Int) -> Void) {
        self.report = report
    }

    func add(_ count: Int) {
        report(
            total.withLockedValue { total in
                total += count
                return total
            })
    }
}

/// A sequence of byte buffers whose sizes are reported to a ``SentCounter`` as they are taken.
struct CountedBuffers<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    let base: Base
    let counter: SentCounter

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let counter: SentCounter

        mutating func next() async throws -> ByteBuffer? {
            guard let buffer = try await base.next() else { return nil }
            counter.add(buffer.readableBytes)
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), counter: counter) }
}

extension AsyncSequence where Self: Sendable, Element == ByteBuffer {
    func counted(by counter: SentCounter) -> CountedBuffers<Self> { CountedBuffers(base: self, counter: counter) }
}

/// Bytes in memory, in pieces of `pieceSize`.
struct DataPieces: AsyncSequence, Sendable {
    let data: Data
    let pieceSize: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let data: Data
        let pieceSize: Int
        var offset: Int

        mutating func next() async -> ByteBuffer? {
            guard offset < data.endIndex else { return nil }
            let end = Swift.min(offset + pieceSize, data.endIndex)
            defer { offset = end }
            return ByteBuffer(bytes: data[offset..<end])
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(data: data, pieceSize: pieceSize, offset: data.startIndex)
    }
}

/// A stream body's chunks as byte buffers; a stream that gives more or fewer bytes than it announced
/// fails typed, as it would over `URLSessionTransport`.
struct StreamPieces: AsyncSequence, Sendable {
    let chunks: AsyncThrowingStream<Data, any Error>
    let length: Int?

    struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: AsyncThrowingStream<Data, any Error>.AsyncIterator
        let length: Int?
        var given = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await chunks.next() else {
                if let length, given != length { throw mismatch(length) }
                return nil
            }
            given += chunk.count
            if let length, given > length { throw mismatch(length) }
            return ByteBuffer(bytes: chunk)
        }

        private func mismatch(_ length: Int) -> NetworkError {
            .encodingFailed(reason: "the request body stream gave \(given) bytes, not the \(length) it announced")
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: chunks.makeAsyncIterator(), length: length) }
}

/// A file's contents in pieces, read on a thread of NIO's blocking pool as the connection takes them;
/// the file is opened by the first read and closed at its end, or when the request is dropped.
struct FileChunks: AsyncSequence, Sendable {
    let file: URL
    let length: Int

    func makeAsyncIterator() -> FileReader { FileReader(path: file.path, length: length) }
}
