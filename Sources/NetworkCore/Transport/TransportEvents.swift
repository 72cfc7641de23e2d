import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What receives the reports of one transfer: the response's head, its body in chunks, the bytes of the
/// request's body sent, and the end. A pool makes one for each request it hands a transport; a
/// transport that wraps another and watches its transfers (``RecordingTransport``) makes one that looks
/// and passes everything on.
///
/// A transport calls it one report at a time, in order: a head (``receive(head:)-(HTTPURLResponse)`` or
/// ``receive(head:)-(ResponseHead)``), ``receive(body:)`` for each chunk, then ``finish()`` or ``fail(_:)``,
/// exactly once. When a head's report or ``receive(body:)`` returns `false`, the transfer is over for the
/// receiver (the task has ended, or the answer is too large): the transport stops it and reports nothing
/// more, not even its end. A receiver ignores whatever comes after that, or after the end.
public protocol TransportReceiver: AnyObject, Sendable {
    /// The response's status and headers arrived. Returns `false` when the transfer is over.
    func receive(head: HTTPURLResponse) -> Bool
    /// The response's status and headers arrived, as the transport read them. Returns `false` when the
    /// transfer is over. By default, the head's ``ResponseHead/httpResponse`` goes to
    /// ``receive(head:)-(HTTPURLResponse)``; a receiver that reads only some fields implements this one too,
    /// and no `HTTPURLResponse` is made until something asks for it.
    func receive(head: ResponseHead) -> Bool
    /// More body bytes arrived. Returns `false` when the transfer is over.
    func receive(body: Data) -> Bool
    /// `totalBytes` of the request's body have been sent, of `expected` when known.
    func sent(totalBytes: Int, expected: Int?)
    /// The transport followed a redirect with `statusCode` to `url` itself, within this transfer. (The
    /// transports NetworkCore ships never do: they report a redirect as the answer, and the pool follows
    /// it as the task's ``RedirectPolicy`` says.)
    func redirected(statusCode: Int, to url: URL?)
    /// A whole message arrived on an open WebSocket. Returns `false` when the transfer is over. (By
    /// default, a receiver takes no messages: it returns `false`.)
    func receive(message: WebSocketMessage) -> Bool
    /// The server's close frame arrived on an open WebSocket, with its code and reason; the end follows.
    func receive(closeCode: WebSocketCloseCode, reason: String)
    /// From now on the transport carries `count` requests at once to this transfer's host (scheme, host and
    /// port), more or fewer than its ``Transport/maximumRequestsPerHost``: the stream limit of an HTTP/2
    /// connection, as the server's settings say. (By default, a receiver ignores it.)
    func carries(requestsAtOnce count: Int)
    /// The transfer ended with the whole answer.
    func finish()
    /// The transfer failed with `error`: a `URLError` for the network, `CancellationError` when cancelled.
    func fail(_ error: any Error)
}

extension TransportReceiver {
    /// Passes the head on as an `HTTPURLResponse`, made from it.
    public func receive(head: ResponseHead) -> Bool { receive(head: head.httpResponse) }

    /// Takes no messages: the transfer is over for this receiver.
    public func receive(message: WebSocketMessage) -> Bool { false }

    /// Ignores the close frame.
    public func receive(closeCode: WebSocketCloseCode, reason: String) {}

    /// Ignores the report.
    public func carries(requestsAtOnce count: Int) {}
}

/// Where a transport reports one transfer (see ``TransportReceiver``), and what it may know of the task:
/// its id and the endpoint's sample data. Made by the pool for each request it hands the transport.
///
/// A new head starts the body again. Whatever comes after the end, or after a head's report or
/// ``receive(body:)`` returned `false`, is ignored, so a transport need not know whether the task was
/// cancelled meanwhile.
public struct TransportEvents: Sendable {
    /// The id of the task the transfer is for.
    public let taskID: String
    /// Who receives the reports.
    public let receiver: any TransportReceiver
    /// Where the endpoint's sample data comes from, asked only when a transport wants it.
    private let sample: SampleData
    /// The pool's certificate pins (``TaskPool/Configuration/pins``): a transport that enforces pins
    /// (``Transport/pinningRefusal`` is `nil`) checks the connection for the request's host against these,
    /// with its own.
    public let pins: CertificatePins?

    /// Events for a transfer of the task `taskID`, reported to `receiver`; `sampleData` gives the endpoint's
    /// canned answer (``Endpoint/sampleData``) to stand-ins that answer with it.
    public init(
        taskID: String, receiver: any TransportReceiver, sampleData: @escaping @Sendable () -> Data? = { nil }
    ) {
        self.init(taskID: taskID, receiver: receiver, sample: .closure(sampleData))
    }

    /// Events whose sample data comes from `source` (the pool's receiver knows its task's endpoint), with
    /// the pool's `pins`.
    init(
        taskID: String, receiver: any TransportReceiver, sampleDataFrom source: any SampleDataSource,
        pins: CertificatePins?
    ) {
        self.init(taskID: taskID, receiver: receiver, sample: .source(source), pins: pins)
    }

    private init(taskID: String, receiver: any TransportReceiver, sample: SampleData, pins: CertificatePins? = nil) {
        self.taskID = taskID
        self.receiver = receiver
        self.sample = sample
        self.pins = pins
    }

    /// The same events, reported to `receiver` instead: for a transport that wraps another and watches its
    /// transfers, with a receiver that looks and passes everything on to this one's.
    public func reporting(to receiver: any TransportReceiver) -> TransportEvents {
        TransportEvents(taskID: taskID, receiver: receiver, sample: sample, pins: pins)
    }

    /// What the task is, for transports written with ``Transport/send(_:context:)``: its id and sample
    /// data. Its redirect policy is ``RedirectPolicy/never``: the pool follows redirects itself.
    public var context: TransportContext {
        TransportContext(
            taskID: taskID, sample: { [sample] in sample.data }, redirectPolicy: .never,
            maximumResponseBytes: .max
        ) { _ in }
    }

    /// The response's status and headers arrived. Returns `false` when the transfer is over: stop it.
    @discardableResult
    public func receive(head response: HTTPURLResponse) -> Bool { receiver.receive(head: response) }

    /// From now on the transport carries `count` requests at once to this transfer's host (scheme, host and
    /// port): an HTTP/2 connection's stream limit, as the server's settings say. A pool whose
    /// ``TaskPool/Configuration/maximumTasksPerHost`` is `nil` then runs that many tasks for the host at once
    /// (at least 1, within its ``TaskPool/Configuration/maximumConcurrentTasks``) instead of the transport's
    /// ``Transport/maximumRequestsPerHost``.
    public func carries(requestsAtOnce count: Int) { receiver.carries(requestsAtOnce: count) }

    /// The response's status and headers arrived, as the transport read them: the report of a transport that
    /// parses HTTP itself, which need not make an `HTTPURLResponse` (see ``ResponseHead``). Returns `false`
    /// when the transfer is over: stop it.
    @discardableResult
    public func receive(head: ResponseHead) -> Bool { receiver.receive(head: head) }

    /// More body bytes arrived. Returns `false` when the transfer is over: stop it.
    @discardableResult
    public func receive(body data: Data) -> Bool { receiver.receive(body: data) }

    /// The transport followed a redirect with `statusCode` to `url` itself (see
    /// ``TransportReceiver/redirected(statusCode:to:)``).
    public func redirected(statusCode: Int, to url: URL?) { receiver.redirected(statusCode: statusCode, to: url) }

    /// `totalBytes` of the request's body have been sent, of `expected` when it is known.
    public func sent(totalBytes: Int, expected: Int?) { receiver.sent(totalBytes: totalBytes, expected: expected) }

    /// The transfer ended with the whole answer; without a head, it fails with `URLError(.badServerResponse)`.
    public func finish() { receiver.finish() }

    /// Reports a whole message received on an open WebSocket; `false` when the transfer is over.
    public func receive(message: WebSocketMessage) -> Bool { receiver.receive(message: message) }

    /// Reports the server's close frame on an open WebSocket.
    public func receive(closeCode: WebSocketCloseCode, reason: String) {
        receiver.receive(closeCode: closeCode, reason: reason)
    }

    /// The transfer failed with `error` (a `URLError` for the network, `CancellationError` when cancelled).
    public func fail(_ error: any Error) { receiver.fail(error) }
}

/// What gives a transfer's sample data (``Endpoint/sampleData``), when a transport asks for it. A
/// class, as every case of ``SampleData`` holds a reference: events are then copied by plain code rather
/// than through the runtime's type metadata.
protocol SampleDataSource: AnyObject, Sendable {
    var sampleData: Data? { get }
}

/// Where a transfer's sample data comes from: an object that knows the task, or a closure.
private enum SampleData: Sendable {
    case source(any SampleDataSource)
    case closure(@Sendable () -> Data?)

    var data: Data? {
        switch self {
        case .source(let source): source.sampleData
        case .closure(let make): make()
        }
    }
}

extension TransportEvents {
    /// Starts `request` on `transport`, collects its answer in memory, and waits for it, progress reported
    /// to `context`; cancelling the calling Swift task cancels the transfer.
    static func collect(
        from transport: some Transport, request: URLRequest, body: RequestBody, context: TransportContext
    ) async -> Result<(Data, HTTPURLResponse), any Error> {
        let slot = ControlSlot()
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                let receiver = CollectingReceiver(context: context, continuation: continuation)
                let events = TransportEvents(taskID: context.taskID, receiver: receiver) { context.sampleData }
                if slot.attach(transport.start(request, body: body, events: events)) { slot.cancel() }
            }
        } onCancel: {
            slot.cancel()
        }
    }
}

/// Collects a transfer's answer in memory, up to the context's limit, reporting progress to the context,
/// and resumes its caller once with the answer or the error.
private final class CollectingReceiver: TransportReceiver, @unchecked Sendable {
    // @unchecked Sendable: the transport reports one event at a time (its contract), so the `var`s are
    // never touched at once.
    private let context: TransportContext
    private var continuation: UnsafeContinuation<Result<(Data, HTTPURLResponse), any Error>, Never>?
    private var head: HTTPURLResponse?
    private var body = Data()

    init(
        context: TransportContext, continuation: UnsafeContinuation<Result<(Data, HTTPURLResponse), any Error>, Never>
    ) {
        self.context = context
        self.continuation = continuation
    }

    func receive(head response: HTTPURLResponse) -> Bool {
        guard continuation != nil else { return false }
        guard response.expectedContentLength <= context.maximumResponseBytes else {
            end(.failure(NetworkError.responseTooLarge(limit: context.maximumResponseBytes)))
            return false
        }
        head = response
        body = Data()
        context.report(.response)
        return true
    }

    func receive(body data: Data) -> Bool {
        guard continuation != nil else { return false }
        guard head != nil else {
            end(.failure(URLError(.badServerResponse)))
            return false
        }
        guard data.count <= context.maximumResponseBytes - body.count else {
            end(.failure(NetworkError.responseTooLarge(limit: context.maximumResponseBytes)))
            return false
        }
        body.append(data)
        if !data.isEmpty { context.report(.bytes(data.count)) }
        return true
    }

    func sent(totalBytes: Int, expected: Int?) {}

    func redirected(statusCode: Int, to url: URL?) {
        guard continuation != nil else { return }
        context.report(.redirect(statusCode: statusCode, to: url))
    }

    func finish() {
        guard let head else { return end(.failure(URLError(.badServerResponse))) }
        end(.success((body, head)))
    }

    func fail(_ error: any Error) { end(.failure(error)) }

    private func end(_ result: Result<(Data, HTTPURLResponse), any Error>) {
        guard let continuation else { return }
        self.continuation = nil
        body = Data()
        continuation.resume(returning: result)
    }
}

/// A transfer's control once its transport has returned it: cancelling before then cancels it as soon as
/// it is attached; once the transfer has ended, the control is let go (it holds the transfer's events,
/// which may hold what holds this slot) and one attached later is not kept. Copies share the slot.
struct ControlSlot: Sendable {
    private let state = Locked<(control: (any TransportControl)?, cancelled: Bool, released: Bool)>((nil, false, false))

    /// Attaches the control; returns whether it must be cancelled at once.
    func attach(_ control: any TransportControl) -> Bool {
        state.withLock { state in
            guard !state.released else { return false }
            state.control = control
            return state.cancelled
        }
    }

    /// Cancels the transfer, now or once attached.
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            return state.control
        }?.cancel()
    }

    /// The transfer has ended: its control is let go.
    func release() {
        let control = state.withLock { state in
            defer {
                state.control = nil
                state.released = true
            }
            return state.control
        }
        _ = control  // released here, outside the lock
    }
}
