import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The one route every send takes, whatever it delivers (memory, a file, a stream, events) and however it
/// is awaited (a caller, a completion handler, nobody):
///
/// 1. **Build** the request from the endpoint (``makeRequest(_:)``); an invalid one is refused here.
/// 2. **Admit** it (``submit(_:id:delivery:waiter:revalidating:)``): the cache stage answers from the
///    store or prepares to validate, then the state registers the task (duplicate policy) and gives it a
///    slot or a place in the queue.
/// 3. **Attempt** (``beginAttempt(_:of:)``): the cache's validators and the delivery's headers (`Range`,
///    `Last-Event-ID`) go on the request, the interceptors adapt it, a request adapted with a credential
///    that a renewal has since replaced is adapted again, and the transport sends it
///    (``send(_:of:attempt:hop:attemptRequest:body:)``) to a ``TransferReceiver``.
/// 4. **Answer**: the receiver delivers the body; a redirect is the next hop of the attempt (the redirect
///    stage, `TaskPool+Redirects.swift`);
///    at the end, a caller (or the pool) turns the answer into the attempt's outcome
///    (``finish(_:with:)``): the response, the cache's update, validation.
/// 5. **Retry**: a failure the interceptors may retry is theirs to decide (``decideRetry(_:attempt:after:failing:request:)``);
///    a retry begins a new attempt after its wait, and an event stream's reconnection is one (see
///    ``Delivery/reconnects``).
/// 6. **End**: the outcome (or the cache's stale answer standing in for a failure) ends the task, once.
///
/// The cache stage acts at steps 2, 3, 4 and 6; what it does at each is in `TaskPool+Cache.swift`.
extension TaskPool {
    /// What the route needs of a task, decided once when it is registered and kept by its ``DataTask``.
    struct Plan {
        /// The endpoint, boxed once, when the task is made.
        let endpoint: any Endpoint
        /// Where the response body goes, as the task's kind says: a file, a stream; `nil` for memory.
        let delivery: (any Delivery)?
        /// The request body when it is not bytes in the request (a file, a form with files).
        let upload: Upload
        /// What the pool's cache does with the task's answer, when it has a cache and the task may use it.
        let cache: CacheTransaction?
        /// The interceptors that adapt each attempt (the pool's, then the endpoint's) and those asked about a
        /// retry (the endpoint's, then the pool's).
        let interceptors: [any RequestInterceptor]
        let retriers: [any RequestInterceptor]
        /// Which redirects it follows, how large an answer may be in memory, how the server's status is read.
        let redirectPolicy: RedirectPolicy
        let maximumResponseBytes: Int
        let statusReader: any ServerStatusReader
        /// Seconds the whole task may take, retries and waits included.
        let deadline: TimeInterval?
        /// The request's URL redacted, made with the task when its pool logs or is inspected.
        let redactedURL: String?
        /// Its entry in the pool's durable store, for a durable write.
        var durable: DurableWrite? = nil
    }

    /// A send registered with the pool: its task, the token its caller waits with, and whether the
    /// caller is to begin the task's first attempt (it was given a slot now).
    struct Sent {
        let task: DataTask
        let token: UInt32
        let begins: Bool
    }

    /// The transport's answer to an attempt, for whoever turns it into the attempt's outcome.
    struct Answer: Sendable {
        let result: Result<(Data, ResponseHead), any Error>
        let attempt: Int
        let timing: TaskTimings.Attempt
        /// The attempt's request as prepared and adapted (before redirects): the response's request, and
        /// what the interceptors deciding on a retry see.
        let request: URLRequest
    }

    // MARK: 1–2. Building and admitting

    /// The endpoint's request, and its origin when it was read from a base URL the pool checked before.
    func makeRequest(_ endpoint: some Endpoint) throws(NetworkError) -> (request: URLRequest, origin: String?) {
        try endpoint.urlRequest(
            defaultHeaders: checkedDefaultHeaders ?? configuration.defaultHeaders,
            checked: checkedDefaultHeaders != nil,
            timeout: configuration.requestTimeout, bases: checkedBaseURLs)
    }

    /// Builds the request and registers its task: answered by the cache, joined to a running task with
    /// the same id, or new, with a slot or a place in the queue. `waiter`: a completion handler, waiting
    /// from the start. `revalidating`: a background validation of a stale answer the cache gave.
    func submit(
        _ endpoint: some Endpoint, id: String?, delivery: (any Delivery)? = nil, waiter: Waiter? = nil,
        revalidating: Bool = false
    ) throws(NetworkError) -> Sent {
        var (request, origin) = try makeRequest(endpoint)
        let admission = try cacheAdmission(
            of: request, for: endpoint, deliveredInMemory: delivery == nil, revalidating: revalidating)
        let cached = admission.answer
        // A body that is not bytes in the request (a file) is only asked for where there can be one.
        let upload = request.httpBody == nil && request.httpMethod != nil ? try endpoint.upload(for: request) : .none
        let longLived = delivery?.isLongLived == true
        let deadline = longLived ? nil : endpoint.resourceTimeout ?? configuration.resourceTimeout
        if let deadline, !(deadline > 0 && deadline.isFinite) {
            throw .invalidEndpoint(
                url: endpoint.urlString,
                reason:
                    "the resource timeout must be a positive, finite number of seconds (nil for none), not \(deadline)")
        }
        // A durable write carries its idempotency key from here on; it is stored just before it is registered.
        let durable = try endpoint.durability.map { durability throws(NetworkError) in
            try durableWrite(
                of: endpoint, request: &request, upload: upload, id: id, durability: durability, delivery: delivery)
        }
        let endpointInterceptors = endpoint.interceptors
        // Most endpoints add none: then the pool's lists serve as they are, with no new array a send.
        var plan = Plan(
            endpoint: endpoint, delivery: delivery, upload: upload, cache: admission.transaction,
            interceptors: Self.joined(configuration.interceptors, endpointInterceptors),
            retriers: Self.joined(endpointInterceptors, configuration.interceptors),
            redirectPolicy: endpoint.redirectPolicy ?? configuration.redirectPolicy,
            maximumResponseBytes: max(1, endpoint.maximumResponseBytes ?? configuration.maximumResponseBytes),
            statusReader: endpoint.statusReader ?? configuration.statusReader, deadline: deadline,
            redactedURL: eventLogger == nil ? nil : Redactor.default.redact(request.url))
        plan.durable = durable
        let givenID = id?.isEmpty == false ? id : nil
        var submission = State.Submission(
            givenID: givenID, derivedID: givenID == nil ? TaskID.derive(from: request) : "",
            host: cached == nil ? origin ?? URLParts.origin(of: request.url) ?? "" : "", priority: endpoint.priority,
            deadline: deadline, stallThreshold: longLived ? nil : configuration.stallThreshold, cached: cached,
            duplicatePolicy: configuration.duplicatePolicy, waiter: waiter)
        submission.takesSlot = !longLived
        let ownInterceptors = !endpointInterceptors.isEmpty
        if let durable, !durable.restored { try durable.store.save(durable.entry) }
        let submitted = mutate { state, effects in
            state.submit(
                submission, at: MonotonicClock.now(), into: &effects,
                isSameCall: { delivery == nil && $0.isSameCall(as: request, hasInterceptors: ownInterceptors) },
                makeHandle: { [state = self.state] id, key in
                    DataTask(id: id, key: key, poolState: state, request: request, plan: plan)
                })
        }
        switch submitted {
        case .rejected(let error):
            // Not sent, nor to be sent later; a write from the store stays there.
            if let durable { durable.store.finish(durable.entry.key, keep: durable.restored) }
            throw error
        case .joined(_, let handle, let token):
            // The running task with its id is the one that writes (or is already written); a write from the
            // store stays there, to be sent once that task has ended.
            if let durable { durable.store.finish(durable.entry.key, keep: durable.restored) }
            return Sent(task: handle, token: token, begins: false)
        case .registered(_, let handle, let token, let begins):
            if admission.revalidates { revalidate(endpoint, id: handle.id) }
            return Sent(task: handle, token: token, begins: begins)
        }
    }

    /// The durable stage of a send (``Endpoint/durable(for:)``): its idempotency key goes on `request`, and its
    /// entry (the request without credentials, its body or its file's bytes) is made, to be stored before the
    /// task is registered; a write read back from the store keeps its own. Refused, typed, without a store, for
    /// a download, stream or socket, or a body streamed from a form with files.
    private func durableWrite(
        of endpoint: some Endpoint, request: inout URLRequest, upload: Upload, id: String?, durability: Durability,
        delivery: (any Delivery)?
    ) throws(NetworkError) -> DurableWrite {
        func refuse(_ reason: String) -> NetworkError { .invalidEndpoint(url: endpoint.urlString, reason: reason) }
        guard let store = configuration.durableStore else {
            throw refuse("a durable send needs a pool with a durableStore (TaskPool.Configuration.durableStore)")
        }
        guard delivery == nil else { throw refuse("only a send whose answer is kept in memory can be durable") }
        if let stored = endpoint as? StoredWrite {
            return DurableWrite(
                store: store, entry: stored.entry, restored: true, report: configuration.durableOutcomes)
        }
        guard durability.expiry > 0, durability.expiry.isFinite else {
            throw refuse(
                "a durable write's expiry must be a positive, finite number of seconds, not \(durability.expiry)")
        }
        let body: Data
        switch upload {
        case .none: body = request.httpBody ?? Data()
        case .file(let url):
            do {
                body = try Data(contentsOf: url)
            } catch {
                throw .fileAccessFailed(path: url.path, reason: "the file could not be copied into the durable store")
            }
        case .form: throw refuse("a form with files is streamed and cannot be kept as a durable write")
        }
        let key = UUID().uuidString.lowercased()
        request.setValue(key, forHTTPHeaderField: configuration.idempotencyKeyHeader)
        let taskID = id?.isEmpty == false ? id! : TaskID.derive(from: request)
        let entry = DurableEntry(
            id: taskID, key: key, request: request, body: body, created: Date(), expiry: durability.expiry)
        return DurableWrite(store: store, entry: entry, restored: false, report: configuration.durableOutcomes)
    }

    /// `first` then `second`, sharing either's storage when the other is empty.
    private static func joined(
        _ first: [any RequestInterceptor], _ second: [any RequestInterceptor]
    ) -> [any RequestInterceptor] {
        first.isEmpty ? second : second.isEmpty ? first : first + second
    }

    /// Ends the task with `outcome` unless it has ended.
    func end(_ task: DataTask, with outcome: Outcome) {
        mutate { state, effects in state.end(task.key, with: outcome, at: MonotonicClock.now(), into: &effects) }
    }

    // MARK: 3. The attempt

    /// Begins the task's `attempt`: its request with the cache's validators and the delivery's headers,
    /// adapted by the interceptors, if any (in a Swift task, which runs on this thread until its first
    /// wait where the platform allows), then sent.
    func beginAttempt(_ attempt: Int, of task: DataTask) {
        var request = task.wireRequest
        task.plan.delivery?.prepare(&request)
        guard !task.plan.interceptors.isEmpty else { return send(request, of: task, attempt: attempt) }
        let work = InterceptorWork(immediateTask { [self] in await adapt(request, of: task, attempt: attempt) })
        mutate { state, effects in
            state.workStarted(task.key, attempt: attempt, stage: .preparing, work: work, into: &effects)
        }
    }

    /// How many times an attempt's request is adapted again because a credential was renewed meanwhile.
    private static let maximumAdaptations = 16

    /// The interceptors adapt the request, in order; it is sent unless an interceptor says it is no
    /// longer current (a credential renewed since it was applied), in which case it is adapted again,
    /// up to ``maximumAdaptations`` times.
    private func adapt(_ prepared: URLRequest, of task: DataTask, attempt: Int) async {
        var context = attemptContext(attempt, of: task)
        for adaptation in 1...Self.maximumAdaptations {
            context.adaptation = adaptation
            var request = prepared
            do {
                for interceptor in task.plan.interceptors {
                    request = try await interceptor.adapt(request, context: context)
                }
            } catch {
                let failure = NetworkError.from(error, timeout: task.request.timeoutInterval)
                return end(task, with: cacheFallback(for: .failure(failure), of: task))
            }
            if Task.isCancelled { return }  // the task has ended and stopped this work
            if adaptation == Self.maximumAdaptations
                || task.plan.interceptors.allSatisfy({ $0.isCurrent(request, context: context) })
            {
                return send(request, of: task, attempt: attempt)
            }
        }
    }

    /// What interceptors learn of attempt `attempt`, and the hooks they report through.
    private func attemptContext(_ attempt: Int, of task: DataTask) -> AttemptContext {
        let elapsed = task.elapsed
        return AttemptContext(
            taskID: task.id, attempt: attempt, method: HTTPMethod(rawValue: task.method),
            requiresAuthentication: task.plan.endpoint.requiresAuthentication,
            elapsed: elapsed, remaining: task.plan.deadline.map { $0 - elapsed },
            onWaitingForCredential: { [self] in
                state.withLock { $0.waitingForCredential(task.key, attempt: attempt) }
            },
            onCredentialRefreshed: { [self] in
                mutate { state, effects in
                    state.credentialRefreshed(task.key, at: MonotonicClock.now(), into: &effects)
                }
            })
    }

    /// Hands `request` to the transport, as hop `hop` of the task's `attempt` (each redirect the pool
    /// follows is the next), with a receiver of its own, unless the task has ended or moved on.
    func send(
        _ request: URLRequest, of task: DataTask, attempt: Int, hop: Int = 0, attemptRequest: URLRequest? = nil,
        body: RequestBody? = nil
    ) {
        let body = body ?? task.body(for: request)
        let receiver = TransferReceiver(
            pool: self, task: task, attempt: attempt, hop: hop, request: request,
            attemptRequest: attemptRequest ?? request)
        // A download that asks for the rest goes on from what it kept.
        let kept = hop == 0 ? task.plan.delivery?.keptBytes ?? 0 : 0
        let sending = state.withLock {
            $0.transferStarting(
                task.key, attempt: attempt, hop: hop, bodyLength: body.length, kept: kept, at: MonotonicClock.now())
        }
        guard sending else { return }
        let pins = configuration.pins
        let events = TransportEvents(taskID: task.id, receiver: receiver, sampleDataFrom: receiver, pins: pins)
        let control: any TransportControl
        if let pins, let refusal = Self.pinningRefusal(of: request, pins: pins, transport: configuration.transport) {
            events.fail(refusal)
            control = AsyncTransfer.none
        } else {
            control =
                task.plan.delivery?.start(request, body: body, events: events, on: configuration.transport)
                ?? configuration.transport.start(request, body: body, events: events)
        }
        // Kept by the state, which cancels it if the task ends (at once, if it has ended meanwhile).
        mutate { state, effects in
            state.transferAttached(task.key, attempt: attempt, hop: hop, control: control, into: &effects)
        }
        task.plan.delivery?.attach(control)
    }

    /// Why a request to a pinned host cannot go: over plain `http`, or through a transport that does not
    /// enforce pins. `nil` for a host without pins.
    static func pinningRefusal(
        of request: URLRequest, pins: CertificatePins, transport: any Transport
    )
        -> PinningError?
    {
        guard let host = request.url?.host, !pins.pins(for: host).isEmpty else { return nil }
        let scheme = request.url?.scheme?.lowercased()
        guard scheme == "https" || scheme == "wss" else { return .notEncrypted(host: host.lowercased()) }
        return transport.pinningRefusal.map {
            .unsupported(transport: String(describing: type(of: transport)), reason: $0)
        }
    }

    // MARK: 4. The answer

    /// The receiver's transfer reported its response's head, whose `expectedContentLength` is `length`.
    func receivedHead(_ head: ResponseHead, length: Int64, for receiver: TransferReceiver) -> Bool {
        let extent = TransferProgress.extent(of: head, length: length)
        let now = MonotonicClock.now()
        return report {
            $0.head(
                receiver.task.key, attempt: receiver.attempt, hop: receiver.hop, extent: extent,
                version: head.httpVersion, at: now)
        }
    }

    /// The receiver's transfer reported `count` body bytes.
    func received(_ count: Int, for receiver: TransferReceiver) -> Bool {
        let now = MonotonicClock.now()
        return report {
            $0.received(receiver.task.key, attempt: receiver.attempt, hop: receiver.hop, count: count, at: now)
        }
    }

    /// The receiver's transfer reported bytes of the request's body sent.
    func sent(_ total: Int, expected: Int?, for receiver: TransferReceiver) {
        let now = MonotonicClock.now()
        _ = report {
            $0.sent(
                receiver.task.key, attempt: receiver.attempt, hop: receiver.hop, total: total, expected: expected,
                at: now)
        }
    }

    /// The receiver's transfer ended: its answer goes to a caller waiting for the task, which turns it
    /// into the attempt's outcome on its own thread; with none, it is done here, or, when a completion
    /// handler waits, in a Swift task, so that the handler never runs on the transport's thread.
    func transferEnded(_ receiver: TransferReceiver, with result: Result<(Data, ResponseHead), any Error>) {
        let (received, status): (Int?, Int?) =
            switch result {
            case .success(let (body, head)): (body.count, head.statusCode)
            case .failure: (nil, nil)
            }
        // A task that makes no other attempt gives its slot back now: the next waiting task begins here.
        let freesSlot = receiver.task.plan.delivery == nil && !mayRetry(receiver.task, after: receiver.attempt)
        let answered = mutate { state, effects in
            state.transferEnded(
                receiver.task.key, attempt: receiver.attempt, hop: receiver.hop, received: received, status: status,
                freesSlot: freesSlot, at: MonotonicClock.now(), into: &effects)
        }
        guard case .finish(let caller, let elsewhere, let timing) = answered else { return }
        let answer = Answer(result: result, attempt: receiver.attempt, timing: timing, request: receiver.attemptRequest)
        if case .caller(let continuation) = caller { return continuation.resume(returning: .finish(answer)) }
        let task = receiver.task
        if elsewhere {
            Task { [self] in finish(task, with: answer) }
        } else {
            finish(task, with: answer)
        }
    }

    /// Turns the answer into the attempt's outcome and reports it. Returns the task's outcome when it
    /// has ended, `nil` when it goes on (the interceptors decide on a retry).
    @discardableResult
    func finish(_ task: DataTask, with answer: Answer) -> Outcome? {
        let outcome = outcome(of: answer, for: task)
        if case .failure(let error) = outcome, let wait = task.plan.delivery?.reopens(after: error) {
            return reopen(task, attempt: answer.attempt, after: error, wait: wait)
        }
        let failure = retryable(outcome, of: task, attempt: answer.attempt)
        let final = failure == nil ? cacheFallback(for: outcome, of: task) : outcome
        let finished = mutate { state, effects in
            state.finished(
                task.key, attempt: answer.attempt, with: final, retrying: failure, at: MonotonicClock.now(),
                into: &effects)
        }
        switch finished {
        case .ended(let outcome):
            return outcome
        case .deciding:
            if let failure {
                decideRetry(task, attempt: answer.attempt, after: outcome, failing: failure, request: answer.request)
            }
            return nil
        }
    }

    /// The attempt's outcome: the response (its cache stage applied) validated, or the error typed.
    @inline(never)
    private func outcome(of answer: Answer, for task: DataTask) -> Outcome {
        switch answer.result {
        case .success(let (body, head)):
            let written = accepts(head.statusCode, for: task)
            if written, task.plan.delivery?.endedMidElement == true {
                // An event stream that ended in the middle of an event lost it: a lost connection, which a
                // retry policy reconnects.
                return .failure(
                    .transport(
                        URLError(
                            .networkConnectionLost,
                            userInfo: [NSLocalizedDescriptionKey: "the event stream ended in the middle of an event"])))
            }
            var response = Response(
                request: answer.request, head: head, body: body, duration: answer.timing.duration,
                statusReader: task.plan.statusReader, timing: answer.timing,
                fileURL: written ? task.plan.delivery?.fileURL : nil)
            response = cacheResolved(response, of: task, request: answer.request)
            if let accepted = task.plan.delivery?.accepts(status: head.statusCode) {
                return accepted ? .success(response) : .failure(.httpStatus(response))
            }
            return validate(response)
        case .failure(let error):
            return .failure(NetworkError.from(error, timeout: answer.request.timeoutInterval))
        }
    }

    /// Whether an answer with `status` is the task's: as its kind says (a socket's `101`), else as the
    /// pool's validation does.
    func accepts(_ status: Int, for task: DataTask) -> Bool {
        task.plan.delivery?.accepts(status: status) ?? configuration.validation.acceptableStatusCodes.contains(status)
    }

    func validate(_ response: Response) -> Outcome {
        let validation = configuration.validation
        guard validation.acceptableStatusCodes.contains(response.statusCode) else {
            return .failure(.httpStatus(response))
        }
        if validation.detectsServerRefusal, response.isServerRefusal {
            return .failure(.serverRefused(response))
        }
        return .success(response)
    }

    // MARK: 5–6. Retry and end

    /// The failure to ask the interceptors about, when they may send the task again; `nil` when the
    /// outcome is final. An event stream that ends is a connection to open again, if they retry.
    private func retryable(_ outcome: Outcome, of task: DataTask, attempt: Int) -> NetworkError? {
        guard mayRetry(task, after: attempt) else { return nil }
        switch outcome {
        case .success(let response) where task.plan.delivery?.reconnects == true && response.statusCode != 204:
            return .transport(URLError(.networkConnectionLost))
        case .success, .failure(.cancelled): return nil
        case .failure(let error): return error
        }
    }

    /// Whether the interceptors may be asked to send `task` again after `attempt`: it has retriers, attempts
    /// left, and a delivery that allows it.
    private func mayRetry(_ task: DataTask, after attempt: Int) -> Bool {
        !task.plan.retriers.isEmpty && attempt < configuration.maximumAttempts
            && (task.plan.delivery?.allowsRetry ?? true)
    }

    /// The kind opens the task's transfer again by its own policy (a socket's reconnection) after `wait`:
    /// the retriers are not asked. Returns the task's outcome when it had ended meanwhile (a cancel).
    private func reopen(_ task: DataTask, attempt: Int, after failure: NetworkError, wait: TimeInterval) -> Outcome? {
        let now = MonotonicClock.now()
        let finished = mutate { state, effects in
            let finished = state.finished(
                task.key, attempt: attempt, with: .failure(failure), retrying: failure, at: now, into: &effects)
            if case .deciding = finished {
                state.retryDecided(task.key, attempt: attempt, .retry(after: wait), at: now, into: &effects)
            }
            return finished
        }
        if case .ended(let outcome) = finished { return outcome }
        return nil
    }

    /// The receiver's transport carries `count` requests to its task's host at once (see
    /// ``TransportEvents/carries(requestsAtOnce:)``).
    func capacity(_ count: Int, for receiver: TransferReceiver) {
        mutate { state, effects in
            state.capacity(count, of: receiver.task.key, at: MonotonicClock.now(), into: &effects)
        }
    }

    /// The receiver's answer opened its task again after it had been open (a socket's reconnection).
    func reopened(_ receiver: TransferReceiver) {
        mutate { state, effects in
            state.reopened(receiver.task.key, attempt: receiver.attempt, at: MonotonicClock.now(), into: &effects)
        }
    }

    /// Asks the retriers, in order, what to do after `failure` (the first answer other than
    /// ``RetryDecision/doNotRetry`` wins), in a Swift task, and reports their decision: a retry after the
    /// wait they ask for (an event stream's server may ask for its own), or the end with `outcome`.
    private func decideRetry(
        _ task: DataTask, attempt: Int, after outcome: Outcome, failing failure: NetworkError, request: URLRequest
    ) {
        let run = immediateTask { [self] in
            let context = attemptContext(attempt, of: task)
            var decision = RetryDecision.doNotRetry
            for retrier in task.plan.retriers {
                decision = await retrier.retry(request, failing: failure, context: context)
                if case .doNotRetry = decision { continue }
                break
            }
            let decided: State.Decision
            switch decision {
            case .doNotRetry: decided = .conclude(cacheFallback(for: outcome, of: task))
            case .fail(let error): decided = .conclude(cacheFallback(for: .failure(error), of: task))
            case .retry(let delay):
                let asked = task.plan.delivery?.reconnectionDelay ?? delay
                decided = .retry(after: asked > 0 ? asked : 0)  // NaN too
            }
            mutate { state, effects in
                state.retryDecided(task.key, attempt: attempt, decided, at: MonotonicClock.now(), into: &effects)
            }
        }
        let work = InterceptorWork(run)
        mutate { state, effects in
            state.workStarted(task.key, attempt: attempt, stage: .deciding, work: work, into: &effects)
        }
    }
}
