import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NetworkCore
import NetworkCoreNIOSupport

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
/// - reports a redirect as the answer, and the pool follows it as the task's ``RedirectPolicy`` says
///   (credentials stay behind when the origin changes): the client's own `redirectConfiguration` is set
///   to `.disallow`;
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
    /// The configuration's redirect setting is replaced: the pool follows redirects, as the task's
    /// ``RedirectPolicy`` says.
    public init(
        configuration: HTTPClient.Configuration = AsyncHTTPClientTransport.defaultConfiguration,
        eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup
    ) {
        var configuration = configuration
        configuration.redirectConfiguration = .disallow
        maximumRequestsPerHost = configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit
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

    /// The client's connections per host (`connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit`, 8
    /// by default): a pool runs as many tasks per host at once, and the rest wait in its queue.
    public let maximumRequestsPerHost: Int?

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

    /// Sends `request`, then reports the answer.
    private func run(_ request: URLRequest, body: RequestBody, events: TransportEvents, transfer: Transfer) async throws
    {
        let (outgoing, sentWhole) = try await outgoingRequest(request, body: body, events: events)
        let wait = request.timeoutInterval > 0 ? min(request.timeoutInterval, 86_400 * 365) : 86_400 * 365
        let response = try await client.execute(
            outgoing, deadline: NIODeadline.now() + TimeAmount.nanoseconds(Int64(wait * 1e9)))
        if let sentWhole { events.sent(totalBytes: sentWhole, expected: sentWhole) }
        let head = HTTPURLResponse.head(
            status: Int(response.status.code), version: response.version, headers: response.headers, url: request.url)
        guard events.receive(head: head) else { return }
        for try await buffer in response.body {
            await transfer.waitWhilePaused()
            guard events.receive(body: Data(sharing: buffer)) else { return }
        }
        events.finish()
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
