import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where a transport reports one transfer: the response's head, its body in chunks, redirects, bytes
/// sent, and the end. Made by the pool for each attempt of a task (or by ``Transport/send(_:context:)``).
///
/// Call it one event at a time, in order: ``receive(head:)``, then ``receive(body:)`` for each chunk,
/// then ``finish()`` or ``fail(_:)``, exactly once. A new head starts the body again (a redirect the
/// transport follows itself). Whatever comes after the end is ignored, so a transport need not know
/// whether the task was cancelled meanwhile. When ``receive(head:)`` or ``receive(body:)`` returns
/// `false` the transfer is over (its answer is too large, or the task has ended): stop it and report
/// nothing more.
public final class TransportEvents: @unchecked Sendable {
    // @unchecked Sendable: a transport reports one event at a time (its contract), so `head`, `body`,
    // `expectedLength` and `ended` are never touched at once; what the pool shares it changes under its lock.

    /// Who receives the events: an attempt of a pool's task, or a caller collecting the answer.
    enum Owner {
        case attempt(pool: TaskPool, task: DataTask, number: Int, bytesSent: Int)
        case context(TransportContext)
        /// Passes every event on to other events, showing each to a tap first: a transport that wraps
        /// another and watches its transfer (``RecordingTransport``).
        case relay(TransportEvents, tap: @Sendable (Relayed) -> Void)
    }

    /// What a relay's tap is shown.
    enum Relayed {
        case head(HTTPURLResponse)
        case body(Data)
        /// The transfer ended: with its whole answer (`nil`), or with an error (`NetworkError.cancelled`
        /// when the events it relays to took no more).
        case end((any Error)?)
    }

    /// Who is told the answer: the pool's finisher path, or a suspended caller.
    enum Completion {
        /// The pool decides (see `TaskPool.answered(_:with:)`).
        case pool
        case continuation(UnsafeContinuation<DataTask.Answer, Never>)
    }

    /// The id of the task the transfer is for.
    public let taskID: String
    /// Which redirects to follow, and how; a transport that follows redirects itself must honour it.
    public let redirectPolicy: RedirectPolicy
    /// The most body bytes the answer may have: once more arrive, ``receive(body:)`` returns `false`
    /// and the task ends with ``NetworkError/responseTooLarge(limit:)``.
    public let maximumResponseBytes: Int

    let owner: Owner
    private let completion: Completion
    /// Where an accepted answer's body goes; an answer the pool does not accept is read into memory.
    private let delivery: Delivery
    /// Whether this answer's body goes to the delivery (it was accepted) rather than into memory.
    private var delivering = false
    private var head: HTTPURLResponse?
    private var body = Data()
    private var expectedLength = 0
    private var ended = false
    /// Run once when the transfer ends, however it ends: a transport's own clean-up (a spooled body's
    /// file). Set before the transfer starts.
    var whenEnded: (@Sendable () -> Void)?

    init(
        owner: Owner, completion: Completion, delivery: Delivery = .memory, redirectPolicy: RedirectPolicy,
        maximumResponseBytes: Int
    ) {
        self.owner = owner
        self.completion = completion
        self.delivery = delivery
        self.redirectPolicy = redirectPolicy
        self.maximumResponseBytes = maximumResponseBytes
        switch owner {
        case .attempt(_, let task, _, _): taskID = task.id
        case .context(let context): taskID = context.taskID
        case .relay(let outer, _): taskID = outer.taskID
        }
    }

    /// Events that pass everything on to `outer`, showing each event to `tap` first.
    convenience init(relayingTo outer: TransportEvents, tap: @escaping @Sendable (Relayed) -> Void) {
        self.init(
            owner: .relay(outer, tap: tap), completion: .pool, redirectPolicy: outer.redirectPolicy,
            maximumResponseBytes: outer.maximumResponseBytes)
    }

    /// What the task is, for transports that take a ``TransportContext`` (``Transport/send(_:context:)``).
    public var context: TransportContext {
        switch owner {
        case .attempt(_, let task, _, _):
            TransportContext(
                taskID: taskID, sample: { [endpoint = task.endpoint] in endpoint.sampleData },
                redirectPolicy: redirectPolicy, maximumResponseBytes: maximumResponseBytes, onProgress: { _ in })
        case .context(let context): context
        case .relay(let outer, _): outer.context
        }
    }

    /// The response's status and headers arrived. Returns `false` when the transfer is over: the
    /// task has ended, or the announced length (`Content-Length`) is over ``maximumResponseBytes``.
    @discardableResult
    public func receive(head response: HTTPURLResponse) -> Bool {
        guard !ended else { return false }
        if case .relay(let outer, let tap) = owner {
            head = response
            tap(.head(response))
            return relayed(outer.receive(head: response))
        }
        delivering = false
        if !delivery.isMemory, case .attempt(let pool, _, _, _) = owner,
            pool.configuration.validation.acceptableStatusCodes.contains(response.statusCode)
        {
            do throws(NetworkError) {
                switch delivery {
                case .memory: break
                case .file(let file): try file.begin(response)
                case .stream(let sink): try sink.begin(response)
                }
            } catch {
                end(.failure(error))
                return false
            }
            delivering = true
            head = response
            body = Data()
            return report(.response, head: response)
        }
        let length = response.expectedContentLength
        if length > maximumResponseBytes {
            end(.failure(NetworkError.responseTooLarge(limit: maximumResponseBytes)))
            return false
        }
        head = response
        body = Data()
        expectedLength = length > 0 && length < 64 << 20 ? Int(length) : 0
        return report(.response, head: response)
    }

    /// More body bytes arrived. Returns `false` when the transfer is over: the task has ended, or the
    /// body is now over ``maximumResponseBytes``.
    @discardableResult
    public func receive(body data: Data) -> Bool {
        guard !ended else { return false }
        if case .relay(let outer, let tap) = owner {
            tap(.body(data))
            return relayed(outer.receive(body: data))
        }
        guard head != nil else {
            end(.failure(URLError(.badServerResponse)))
            return false
        }
        if delivering {
            do throws(NetworkError) {
                switch delivery {
                case .memory: break
                case .file(let file): try file.write(data)
                case .stream(let sink): try sink.receive(data)
                }
            } catch {
                end(.failure(error))
                return false
            }
            return data.isEmpty || report(.bytes(data.count))
        }
        guard data.count <= maximumResponseBytes - body.count else {
            end(.failure(NetworkError.responseTooLarge(limit: maximumResponseBytes)))
            return false
        }
        if body.isEmpty {
            body = data  // kept as it came: a body that arrives in one piece is not copied
        } else {
            // The first append copies the first piece into a buffer of the announced length.
            if expectedLength > body.count { body.reserveCapacity(expectedLength) }
            body.append(data)
        }
        return data.isEmpty || report(.bytes(data.count))
    }

    /// The server redirected, with `statusCode`, to `url`, and the transport follows.
    public func redirected(statusCode: Int, to url: URL?) {
        if !ended, case .relay(let outer, _) = owner { return outer.redirected(statusCode: statusCode, to: url) }
        guard !ended, case .attempt(let pool, let task, _, _) = owner else {
            if !ended, case .context(let context) = owner { context.report(.redirect(statusCode: statusCode, to: url)) }
            return
        }
        // A redirect after the task's end is not reported; the head that follows ends the transfer.
        _ = pool.record(.redirect(statusCode: statusCode, to: url), of: task)
    }

    /// `totalBytes` of the request's body have been sent, of `expected` when it is known.
    public func sent(totalBytes: Int, expected: Int?) {
        if !ended, case .relay(let outer, _) = owner { return outer.sent(totalBytes: totalBytes, expected: expected) }
        guard !ended, case .attempt(let pool, let task, _, _) = owner else { return }
        pool.recordSent(totalBytes, expected: expected, of: task)
    }

    /// The transfer ended with the whole answer; without a head, it fails with `URLError(.badServerResponse)`.
    public func finish() {
        guard !ended else { return }
        if case .relay(let outer, let tap) = owner {
            endRelay(tap, with: head == nil ? URLError(.badServerResponse) : nil)
            return outer.finish()
        }
        guard let head else { return end(.failure(URLError(.badServerResponse))) }
        end(.success((body, head)))
    }

    /// The transfer failed with `error` (a `URLError` for the network, `CancellationError` when cancelled).
    public func fail(_ error: any Error) {
        guard !ended else { return }
        if case .relay(let outer, let tap) = owner {
            endRelay(tap, with: error)
            return outer.fail(error)
        }
        end(.failure(error))
    }

    /// The transfer's control, once its transport has returned it: a stream pauses and resumes it.
    func attach(_ control: any TransportControl) {
        if case .stream(let sink) = delivery { sink.attach(control) }
    }

    /// Passes progress on; returns whether the transfer still counts. Once its task has ended (a cancel,
    /// the deadline) it does not, and the transfer ends here, as cancelled: the transport is told to stop
    /// and report nothing more, and whoever awaits the attempt must still hear its end.
    private func report(_ progress: TransportContext.Progress, head: HTTPURLResponse? = nil) -> Bool {
        switch owner {
        case .attempt(let pool, let task, _, _):
            guard pool.record(progress, of: task, head: head) else {
                end(.failure(NetworkError.cancelled))
                return false
            }
            return true
        case .context(let context):
            context.report(progress)
            return true
        case .relay:
            return true  // a relay passes its events on before this is reached
        }
    }

    /// A relay's answer from the events it passes on: once they take no more, the relay's transfer is over,
    /// and its tap is told so.
    private func relayed(_ accepted: Bool) -> Bool {
        if !accepted, case .relay(_, let tap) = owner { endRelay(tap, with: NetworkError.cancelled) }
        return accepted
    }

    private func endRelay(_ tap: @Sendable (Relayed) -> Void, with error: (any Error)?) {
        ended = true
        if let whenEnded {
            self.whenEnded = nil
            whenEnded()
        }
        tap(.end(error))
    }

    private func end(_ result: Result<(Data, HTTPURLResponse), any Error>) {
        ended = true
        if let whenEnded {
            self.whenEnded = nil
            whenEnded()
        }
        var result = result
        if delivering, case .file(let file) = delivery {
            if case .success = result {
                do throws(NetworkError) { try file.complete() } catch { result = .failure(error) }
            } else {
                file.pause()
            }
        }
        body = Data()
        var answer = DataTask.Answer(result: result, attempt: 0, bytesSent: 0, time: MonotonicClock.now())
        if case .attempt(let pool, let task, let number, let bytesSent) = owner {
            answer.attempt = number
            answer.bytesSent = bytesSent
            if case .pool = completion { return pool.answered(task, with: answer) }
        }
        if case .continuation(let continuation) = completion { continuation.resume(returning: answer) }
    }
}

extension TransportEvents {
    /// Starts `request` on `transport` with events made by `events`, and waits for its answer;
    /// cancelling the calling Swift task cancels the transfer.
    static func awaitAnswer(
        from transport: some Transport, request: URLRequest, body: RequestBody,
        events: (UnsafeContinuation<DataTask.Answer, Never>) -> TransportEvents
    ) async -> DataTask.Answer {
        let control = ControlSlot()
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                let events = events(continuation)
                let started = transport.start(request, body: body, events: events)
                events.attach(started)
                if control.attach(started) { control.cancel() }
            }
        } onCancel: {
            control.cancel()
        }
    }

    /// Drives `transport` for `request` and collects its answer, progress reported to `context`.
    static func collect(
        from transport: some Transport, request: URLRequest, body: RequestBody, context: TransportContext
    ) async -> Result<(Data, HTTPURLResponse), any Error> {
        await awaitAnswer(from: transport, request: request, body: body) { continuation in
            TransportEvents(
                owner: .context(context), completion: .continuation(continuation),
                redirectPolicy: context.redirectPolicy, maximumResponseBytes: context.maximumResponseBytes)
        }.result
    }
}

/// A transfer's control once its transport has returned it: cancelling before then cancels it as soon
/// as it is attached. Copies share the slot.
private struct ControlSlot: Sendable {
    private let state = Locked<(control: (any TransportControl)?, cancelled: Bool)>((nil, false))

    /// Attaches the control; returns whether it must be cancelled at once.
    func attach(_ control: any TransportControl) -> Bool {
        state.withLock { state in
            state.control = control
            return state.cancelled
        }
    }

    func cancel() {
        state.withLock { state in
            state.cancelled = true
            return state.control
        }?.cancel()
    }
}
