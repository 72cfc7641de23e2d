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
/// - sends a request again when its connection closes (or is reset, or is found closed as the request is
///   written) before any of the answer arrives, up to as many times as the client has connections per host
///   (each kept-alive connection the server has let go fails once, and the client drops it),
///   as a server does to a kept-alive connection it has let go idle, if the server keeps connections alive
///   (an earlier answer from that origin left its connection open), the method is idempotent (`GET`,
///   `HEAD`, `PUT`, `DELETE`, `OPTIONS`, `TRACE`) and the body goes in one write (none, or at most 256 KB
///   in memory or a file). AsyncHTTPClient does not say whether the connection was a reused one, so a new
///   connection to such a server closed so is tried once more too. Anything else (a `POST`, a stream, a
///   second close) fails as `.networkConnectionLost`, for the pool's ``RetryPolicy`` to judge;
/// - keeps no cookies and no cache.
///
/// A request without a body, started while none of the transport's other requests without a body is in
/// flight, has its events delivered on one event loop of the group, always the same, and AsyncHTTPClient
/// prefers a connection on that loop: requests sent one after another then keep to one connection whose
/// events reach the pool without passing between threads. Requests started while others are in flight leave
/// the loop to the client, so that their connections spread over the group.
public final class AsyncHTTPClientTransport: Transport {
    /// The client requests go through. It belongs to this transport: ``shutdown()`` shuts it down.
    public let client: HTTPClient
    /// Whether the client decodes compressed answers, so requests ask for them.
    private let decompresses: Bool
    private let isShutDown = NIOLockedValueBox(false)
    /// The origins whose answers have left their connections open.
    private let keptAlive = KeptAliveOrigins()
    /// The requests without a body in flight, and the loop one started alone has its events on.
    let inFlight: RequestsInFlight
    /// The requests without a body waiting for their answers' heads, and the one timer that watches them.
    let headDeadlines: HeadDeadlines

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
        inFlight = RequestsInFlight(loop: eventLoopGroup.next())
        headDeadlines = HeadDeadlines(loop: inFlight.loop)
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

    /// How many times a request may be sent again when its connection turns out closed before any of the
    /// answer: once for each of the client's connections per host, each of which may be a kept-alive one the
    /// server has let go.
    var resends: Int { max(1, maximumRequestsPerHost ?? 1) }

    /// Pins are refused: AsyncHTTPClient offers no way to see a connection's certificate chain.
    public var pinningRefusal: String? { "AsyncHTTPClient offers no way to see a connection's certificate chain" }

    /// Starts `request`. Without a body it goes through the client's delegate interface: its head, body
    /// pieces and end reach `events` from the connection's event loop as they arrive, with no Swift task
    /// between. A request with a body is sent from a Swift task of its own, which reads the body as the
    /// connection takes it: over the delegate interface, an answer that comes before the client has
    /// marked the end of the body it sent was seen never to end.
    /// Refuses at once: AsyncHTTPClient has no WebSocket client.
    public func startWebSocket(
        _ request: URLRequest, options: WebSocketOptions, events: TransportEvents
    ) -> any WebSocketConnection {
        events.refuseWebSocket(by: "AsyncHTTPClientTransport", because: "AsyncHTTPClient has no WebSocket client")
    }

    public func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
        let sentWhole: Int?  // through the delegate interface: reported as sent when the head comes
        switch body {
        case .none:
            sentWhole = nil
        case .data(let data) where data.isEmpty:
            sentWhole = 0
        default:
            let transfer = Transfer(events: events, url: request.url, headTimeout: request.timeoutInterval)
            transfer.attach(
                Task { [self] in
                    do {
                        try await run(request, body: body, events: events, transfer: transfer)
                    } catch {
                        transfer.fail(error)
                    }
                })
            return transfer
        }
        let loop = inFlight.enter()
        let transfer = Transfer(
            events: events, url: request.url, headTimeout: request.timeoutInterval, sentWhole: sentWhole,
            keptAlive: Self.isIdempotent(request) ? keptAlive : nil, resends: resends, inFlight: inFlight,
            headDeadlines: headDeadlines)
        execute(request, transfer: transfer, on: loop.map { .delegate(on: $0) } ?? .indifferent)
        return transfer
    }

    /// Whether `request`'s method is idempotent (RFC 9110 §9.2.2): sending it twice does what sending it
    /// once does, so one that met a closed connection before its answer may be sent again.
    static func isIdempotent(_ request: URLRequest) -> Bool {
        ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"].contains((request.httpMethod ?? "GET").uppercased())
    }

    /// Whether `error` says the connection closed, or was reset, before any of the answer arrived (the
    /// caller knows none did), or was found closed when the request was written to it (SwiftNIO's
    /// `ioOnClosedChannel`: a kept-alive connection the server had just let go).
    static func isClosedConnection(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError { return error == .remoteConnectionClosed }
        if let error = error as? ChannelError { return error == .ioOnClosedChannel }
        if let error = error as? IOError { return error.errnoCode == ECONNRESET || error.errnoCode == EPIPE }
        return false
    }

    /// Sends `request`, without a body, through the client's delegate interface, its events on `loop`.
    private func execute(_ request: URLRequest, transfer: Transfer, on loop: HTTPClient.EventLoopPreference) {
        let outgoing: HTTPClient.Request
        do {
            guard let url = request.url else { throw URLError(.badURL) }
            outgoing = try HTTPClient.Request(
                url: url, method: HTTPMethod(rawValue: request.httpMethod ?? "GET"), headers: headers(of: request))
        } catch {
            return transfer.fail(error)
        }
        transfer.send { [client] transfer in
            client.execute(request: outgoing, delegate: transfer, eventLoop: loop)
        }
    }

    /// The headers `request` goes with: its own, and `Accept-Encoding` where the client decodes answers.
    private func headers(of request: URLRequest) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.add(name: name, value: value) }
        if decompresses, !headers.contains(name: "Accept-Encoding") {
            headers.add(name: "Accept-Encoding", value: "gzip, deflate")
        }
        return headers
    }

    /// Sends `request`, then reports the answer.
    private func run(_ request: URLRequest, body: RequestBody, events: TransportEvents, transfer: Transfer) async throws
    {
        let (outgoing, sentWhole) = try await outgoingRequest(request, body: body, events: events)
        let wait = request.timeoutInterval > 0 ? min(request.timeoutInterval, 86_400 * 365) : 86_400 * 365
        let deadline = NIODeadline.now() + TimeAmount.nanoseconds(Int64(wait * 1e9))
        // A body in one write is in `outgoing` whole, and goes again as it is.
        var resendsLeft = sentWhole != nil && Self.isIdempotent(request) ? resends : 0
        let response: HTTPClientResponse
        while true {
            do {
                response = try await client.execute(outgoing, deadline: deadline)
                break
            } catch
                where resendsLeft > 0 && Self.isClosedConnection(error) && keptAlive.contains(request.url)
                && !Task.isCancelled
            {
                resendsLeft -= 1
            }
        }
        if HTTPResponseHead(version: response.version, status: response.status, headers: response.headers).isKeepAlive {
            keptAlive.insert(request.url)
        }
        if let sentWhole { events.sent(totalBytes: sentWhole, expected: sentWhole) }
        let head = ResponseHead(
            status: Int(response.status.code), version: response.version, headers: response.headers, url: request.url)
        guard events.receive(head: head) else { return }
        let loop = client.eventLoopGroup.any()
        for try await buffer in response.body {
            await transfer.waitWhilePaused(on: loop)
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
        outgoing.headers = headers(of: request)
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

// MARK: - The transfer

/// A running request. For a request without a body it is the client's delegate: it passes the head, each
/// body piece and the end on to the pool's events from the connection's event loop, and a head that has not
/// come within the request's timeout fails it as timed out. Cancelling it cancels the client's request (or
/// the Swift task that sends a request with a body); pausing it holds back the client's next read until it is
/// resumed.
final class Transfer: HTTPClientResponseDelegate, TransportControl {
    typealias Response = Void

    private struct State {
        /// The client's request, through the delegate interface.
        var request: HTTPClient.Task<Void>?
        /// The Swift task that sends a request with a body.
        var task: Task<Void, Never>?
        var cancelled = false
        /// The end is reported, or the receiver declined the transfer: nothing more is reported.
        var over = false
        var headArrived = false
        /// The transfer is among the transport's ``HeadDeadlines``.
        var watched = false
        /// Makes the client's request, kept while it may be sent again.
        var send: (@Sendable (Transfer) -> HTTPClient.Task<Void>)?
        /// How many more times it may be sent again.
        var resendsLeft = 0
        var paused = false
        /// The read held back while paused.
        var held: EventLoopPromise<Void>?
    }

    private let state = NIOLockedValueBox(State())
    private let events: TransportEvents
    private let url: URL?
    private let headTimeout: TimeInterval
    /// Through the delegate interface, the length of the body sent (0 for an empty one, `nil` for none),
    /// reported as sent when the head comes.
    private let sentWhole: Int?
    /// For a request that may be sent once more if its connection closes before any of the answer arrives:
    /// the origins whose answers have left their connections open, which the transfer's answer joins if it
    /// does so too. The request goes again only to such an origin.
    private let keptAlive: KeptAliveOrigins?
    /// Through the delegate interface, the transport's count of requests in flight, which the transfer has
    /// entered and leaves once it is over, before it reports its end.
    private let inFlight: RequestsInFlight?
    /// Through the delegate interface, the transport's requests waiting for their heads, which the transfer
    /// joins when its first request starts and leaves when its head comes or it ends.
    private let headDeadlines: HeadDeadlines?

    init(
        events: TransportEvents, url: URL?, headTimeout: TimeInterval, sentWhole: Int? = nil,
        keptAlive: KeptAliveOrigins? = nil, resends: Int = 0, inFlight: RequestsInFlight? = nil,
        headDeadlines: HeadDeadlines? = nil
    ) {
        state.withLockedValue { $0.resendsLeft = keptAlive == nil ? 0 : resends }
        self.events = events
        self.url = url
        self.headTimeout = headTimeout
        self.sentWhole = sentWhole
        self.keptAlive = keptAlive
        self.inFlight = inFlight
        self.headDeadlines = headDeadlines
    }

    /// Sends the client's request that `make` makes; it makes it again if the request is to go once more.
    func send(_ make: @escaping @Sendable (Transfer) -> HTTPClient.Task<Void>) {
        if keptAlive != nil { state.withLockedValue { $0.send = make } }
        attach(make(self))
    }

    /// The task that sends the request; cancelled at once if the transfer already was.
    func attach(_ task: Task<Void, Never>) {
        let cancelled = state.withLockedValue { state in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    /// The client's request: cancelled at once if the transfer already was; its head awaited at most the
    /// request's timeout, from the first request's start. A request the client fails without telling its
    /// delegate (one sent after the client was shut down) ends the transfer with that failure.
    private func attach(_ request: HTTPClient.Task<Void>) {
        let timeout = headTimeout > 0 ? min(headTimeout, 86_400 * 365) : nil
        let cancelled = state.withLockedValue { state in
            state.request = request
            if !state.cancelled, !state.headArrived, !state.over, !state.watched, let timeout, let headDeadlines {
                // Joined under the transfer's lock, so that a head that comes at once finds it there to leave.
                state.watched = true
                headDeadlines.add(self, deadline: .now() + TimeAmount.nanoseconds(Int64(timeout * 1e9)))
            }
            return state.cancelled
        }
        // Once the request is the transfer's: a failure of a request the transfer does not wait for is
        // ignored, and one that failed at once (the client shut down) would otherwise have been taken for it.
        request.futureResult.whenFailure { [self] error in fail(error, of: request) }
        if cancelled { request.cancel() }
    }

    /// The head has not come within the request's timeout: the client's request fails as timed out.
    func headTimedOut() {
        let request = state.withLockedValue { state in
            state.watched = false  // the deadlines let it go as they tell it
            return state.headArrived ? nil : state.request
        }
        request?.fail(reason: HTTPClientError.deadlineExceeded)
    }

    /// Reports `error` as the transfer's end, unless it has ended. A failure of the client's `request` whose
    /// connection closed before any of the answer arrived sends the request once more, if it may go again;
    /// a failure of a request the transfer no longer waits for is not its end.
    func fail(_ error: any Error, of request: HTTPClient.Task<Void>? = nil) {
        enum Next {
            case ignore
            case sendAgain(@Sendable (Transfer) -> HTTPClient.Task<Void>)
            case end(cancelled: Bool, reports: Bool, watched: Bool)
        }
        let resendable =
            request != nil && AsyncHTTPClientTransport.isClosedConnection(error) && keptAlive?.contains(url) == true
        let next = state.withLockedValue { state -> Next in
            if let request, state.request !== request { return .ignore }
            if resendable, let send = state.send, state.resendsLeft > 0, !state.cancelled, !state.over,
                !state.headArrived
            {
                state.resendsLeft -= 1
                state.request = nil
                return .sendAgain(send)
            }
            defer {
                state.over = true
                state.watched = false
                state.send = nil
            }
            return .end(cancelled: state.cancelled, reports: !state.over, watched: state.watched)
        }
        switch next {
        case .ignore:
            return
        case .sendAgain(let send):
            attach(send(self))
        case .end(let cancelled, let reports, let watched):
            if watched { headDeadlines?.remove(self) }
            guard reports else { return }
            inFlight?.leave()
            events.fail(AsyncHTTPClientTransport.translate(error, cancelled: cancelled))
        }
    }

    func cancel() {
        let (request, task, held) = state.withLockedValue { state in
            state.cancelled = true
            defer { state.held = nil }
            return (state.request, state.task, state.held)
        }
        held?.succeed(())
        task?.cancel()
        request?.cancel()
    }

    func pauseReceiving() {
        state.withLockedValue { $0.paused = true }
    }

    func resumeReceiving() {
        state.withLockedValue { state in
            state.paused = false
            defer { state.held = nil }
            return state.held
        }?.succeed(())
    }

    /// Returns at once unless the transfer is paused (no future made for a read that need not wait); then
    /// once it is resumed or cancelled.
    func waitWhilePaused(on loop: any EventLoop) async {
        guard state.withLockedValue({ $0.paused && !$0.cancelled }) else { return }
        try? await nextRead(on: loop).get()
    }

    /// When the next body piece may be read: at once, unless the transfer is paused; then once it is resumed
    /// or cancelled.
    func nextRead(on loop: any EventLoop) -> EventLoopFuture<Void> {
        state.withLockedValue { state -> EventLoopFuture<Void>? in
            guard state.paused, !state.cancelled else { return nil }
            let held = loop.makePromise(of: Void.self)
            state.held = held
            return held.futureResult
        } ?? loop.makeSucceededVoidFuture()
    }

    // MARK: The client's delegate

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let watched = state.withLockedValue { state in
            state.headArrived = true
            defer { state.watched = false }
            return state.watched
        }
        if watched { headDeadlines?.remove(self) }
        if head.isKeepAlive { keptAlive?.insert(url) }
        if let sentWhole { events.sent(totalBytes: sentWhole, expected: sentWhole) }
        let response = ResponseHead(
            status: Int(head.status.code), version: head.version, headers: head.headers, url: url)
        if !events.receive(head: response) { decline(task) }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        guard events.receive(body: Data(sharing: buffer)) else {
            decline(task)
            return task.eventLoop.makeSucceededVoidFuture()
        }
        return nextRead(on: task.eventLoop)
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        fail(error, of: task)
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        if endsHere() { events.finish() }
    }

    /// The receiver wants no more: the client's request is cancelled, and its end not reported.
    private func decline(_ task: HTTPClient.Task<Void>) {
        _ = endsHere()
        task.cancel()
    }

    /// Marks the transfer over; if it was not yet, counts it out of the transport's requests in flight and
    /// returns `true`.
    private func endsHere() -> Bool {
        let first = state.withLockedValue { state in
            defer { state.over = true }
            return !state.over
        }
        if first { inFlight?.leave() }
        return first
    }
}

/// A transfer waiting for its answer's head under ``HeadDeadlines``.
protocol HeadWaiter: AnyObject, Sendable {
    /// Its deadline has passed before its head came.
    func headTimedOut()
}

extension Transfer: HeadWaiter {}

/// A transport's requests waiting for their answers' heads, each with its deadline, and one timer for all of
/// them, set for the earliest: a request joins when it starts and leaves when its head comes or it ends, a
/// lock and a dictionary's insert and removal, where a timer of its own was scheduled from the caller's
/// thread and cancelled on the loop for each request. When the timer fires, it tells the waiters whose
/// deadlines have passed, lets them go, and is set again for the earliest of the rest. A waiter that leaves
/// does not move it: it fires then, finds nothing due, and is set for what is left. One timer is set at a
/// time: one replaced as it fires does nothing.
final class HeadDeadlines: Sendable {
    private struct State {
        var waiting: [ObjectIdentifier: (waiter: any HeadWaiter, deadline: NIODeadline)] = [:]
        /// When the timer fires, the timer, and its number, while it is set.
        var timer: (deadline: NIODeadline, scheduled: Scheduled<Void>, number: UInt64)?
        /// The number of the last timer set: a timer that fires when another has replaced it does nothing.
        var timers: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())
    /// The loop the timer runs on.
    let loop: any EventLoop

    init(loop: any EventLoop) { self.loop = loop }

    /// Adds `waiter`, to be told if `deadline` passes before it leaves; the timer is set for it if it is the
    /// earliest.
    func add(_ waiter: any HeadWaiter, deadline: NIODeadline) {
        state.withLockedValue { state in
            state.waiting[ObjectIdentifier(waiter)] = (waiter, deadline)
            if let timer = state.timer, timer.deadline <= deadline { return }
            state.timer?.scheduled.cancel()
            Self.setTimer(in: &state, at: deadline, for: self)
        }
    }

    /// Lets `waiter` go: it is not told.
    func remove(_ waiter: any HeadWaiter) {
        _ = state.withLockedValue { $0.waiting.removeValue(forKey: ObjectIdentifier(waiter)) }
    }

    /// How many wait.
    var count: Int { state.withLockedValue { $0.waiting.count } }

    /// When the timer fires next, if it is set.
    var nextFiring: NIODeadline? { state.withLockedValue { $0.timer?.deadline } }

    /// Sets a new timer for `deadline`; the one it replaces, if it fires before it could be cancelled, does nothing.
    private static func setTimer(in state: inout State, at deadline: NIODeadline, for deadlines: HeadDeadlines) {
        state.timers &+= 1
        let number = state.timers
        let scheduled = deadlines.loop.scheduleTask(deadline: deadline) { [weak deadlines] () -> Void in
            deadlines?.fire(number)
        }
        state.timer = (deadline, scheduled, number)
    }

    /// Tells the waiters whose deadlines have passed, after letting them go; sets the timer for the rest.
    private func fire(_ number: UInt64) {
        let now = loop.now
        let due = state.withLockedValue { state -> [any HeadWaiter] in
            guard state.timer?.number == number else { return [] }
            state.timer = nil
            var due: [any HeadWaiter] = []
            var earliest: NIODeadline?
            for (key, entry) in state.waiting {
                if entry.deadline <= now {
                    due.append(entry.waiter)
                    state.waiting[key] = nil
                } else if earliest.map({ entry.deadline < $0 }) ?? true {
                    earliest = entry.deadline
                }
            }
            if let earliest { Self.setTimer(in: &state, at: earliest, for: self) }
            return due
        }
        for waiter in due { waiter.headTimedOut() }
    }
}

/// How many of a transport's requests without a body are in flight; a request started while none is has its
/// events on ``loop``, the same for every such request, so that requests sent one after another keep to one
/// connection, on that loop, and no event of theirs passes between threads.
final class RequestsInFlight: Sendable {
    private let count = NIOLockedValueBox(0)
    /// The loop a request started alone has its events on.
    let loop: any EventLoop

    init(loop: any EventLoop) { self.loop = loop }

    /// Counts a request in: ``loop`` if no other is in flight, else `nil` (the client chooses).
    func enter() -> (any EventLoop)? {
        count.withLockedValue { count in
            defer { count += 1 }
            return count == 0 ? loop : nil
        }
    }

    /// Counts a request out, once it is over (before its end is reported, so that the next request its
    /// caller sends finds it gone).
    func leave() {
        count.withLockedValue { $0 -= 1 }
    }

    /// How many are in flight.
    var current: Int { count.withLockedValue { $0 } }
}

/// The origins (scheme, host and port, as the URL writes them) whose answers have left their connections open:
/// a request to one of them that meets a closed connection before its answer met, most likely, a kept-alive
/// connection the server let go. At most ``limit`` are kept: past it they are forgotten, and learnt again
/// from the next answers.
final class KeptAliveOrigins: Sendable {
    private let origins = NIOLockedValueBox(Set<Substring>())
    /// The most origins kept.
    let limit: Int

    init(limit: Int = 1_024) { self.limit = limit }

    /// Adds `url`'s origin.
    func insert(_ url: URL?) {
        guard let origin = Self.origin(of: url) else { return }
        origins.withLockedValue { origins in
            if origins.count >= limit, !origins.contains(origin) { origins.removeAll() }
            origins.insert(origin)
        }
    }

    /// How many origins are kept.
    var count: Int { origins.withLockedValue { $0.count } }

    /// Whether `url`'s origin is one of them.
    func contains(_ url: URL?) -> Bool {
        guard let origin = Self.origin(of: url) else { return false }
        return origins.withLockedValue { $0.contains(origin) }
    }

    /// The URL's text up to its path, query or fragment (`http://127.0.0.1:8080`), for a URL with an authority:
    /// read on every answer, so not taken apart (`URL`'s `scheme`, `host` and `port` took twice as long). The
    /// same origin written two ways (`Example.com`, `example.com:80`) counts as two.
    static func origin(of url: URL?) -> Substring? {
        guard var text = url?.absoluteString else { return nil }
        // Read from the bytes (a tenth of the instructions of `String.UTF8View`'s indices).
        let length = text.withUTF8 { bytes -> Int? in
            guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes.count > colon + 2,
                bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
            else { return nil }
            let authority = colon + 3
            var end = authority
            while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"),
                bytes[end] != UInt8(ascii: "#")
            {
                end += 1
            }
            return end > authority ? end : nil
        }
        return length.map { Substring(text.utf8.prefix($0)) }
    }
}
