import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns body bytes into the elements a stream yields: the chunks themselves, or parsed events.
protocol ChunkDecoder: Sendable {
    associatedtype Element: Sendable
    /// The elements these bytes complete; bytes of an element not complete yet are kept. Throws when an
    /// element grows past the decoder's limit.
    mutating func decode(_ data: Data) throws(NetworkError) -> [Element]
    /// A new connection begins: what was kept of the last one is dropped.
    mutating func reset()
    /// Whether a body that ends is a connection to open again, continuing the same elements.
    static var reconnects: Bool { get }
    /// Adds the headers a connection needs (`Accept`, `Last-Event-ID`).
    func prepare(_ request: inout URLRequest)
    /// The wait before connecting again that the server asked for.
    var reconnectionDelay: TimeInterval? { get }
    /// Whether the body ended in the middle of an element, which is then lost.
    var isMidElement: Bool { get }
    /// Checks an accepted head before its body is decoded: throws when the body cannot be these elements.
    static func accept(_ head: HTTPURLResponse) throws(NetworkError)
}

extension ChunkDecoder {
    static func accept(_ head: HTTPURLResponse) throws(NetworkError) {}
    static var reconnects: Bool { false }
    var isMidElement: Bool { false }
    func prepare(_ request: inout URLRequest) {}
    var reconnectionDelay: TimeInterval? { nil }
}

/// Body chunks as they arrive.
struct RawChunks: ChunkDecoder {
    mutating func decode(_ data: Data) -> [Data] { data.isEmpty ? [] : [data] }
    mutating func reset() {}
}

/// The elements of a streamed body between the transport and its consumers (each element to one of them,
/// those reading at once taking turns), with back-pressure: once
/// more than ``highWater`` bytes wait unread, the transfer is paused, and resumed when the consumer has
/// read them down to ``lowWater``. A transport that cannot pause keeps sending: past ``unreadLimit``
/// bytes unread the transfer fails with ``NetworkError/responseTooLarge(limit:)``, rather than memory
/// filling up with what the consumer has not read. A stream task's ``Delivery``.
final class BodyStream<Decoder: ChunkDecoder>: Delivery, @unchecked Sendable {
    // @unchecked Sendable: all mutable state is in `state`, a `Locked`.
    typealias Element = Decoder.Element
    private typealias Waiter = UnsafeContinuation<Result<Element?, NetworkError>, Never>
    /// What receiving bytes leads to: consumers to wake, each with an element (the first apart, so that the
    /// usual one reader costs no array), and a transfer to pause.
    private typealias Received = (
        first: (Waiter, Element)?, others: [(Waiter, Element)], pause: (any TransportControl)?
    )

    private struct State {
        var decoder: Decoder
        var head: HTTPURLResponse?
        var elements: [(element: Element, bytes: Int)] = []
        var next = 0
        var buffered = 0
        var end: Result<Void, NetworkError>?
        var headWaiter: UnsafeContinuation<Result<HTTPURLResponse, NetworkError>, Never>?
        /// The consumers waiting for an element, first come first served: each element goes to one.
        var waiters: [Waiter] = []
        var control: (any TransportControl)?
        var paused = false
    }

    let highWater: Int
    let lowWater: Int
    /// The most bytes that may wait unread.
    let unreadLimit: Int
    private let state: Locked<State>

    /// A stream for elements of up to `elementLimit` bytes: paused at a megabyte unread, or a quarter of the
    /// limit if that is less; failed past the limit.
    convenience init(elementLimit: Int, decoder: Decoder) {
        self.init(decoder: decoder, highWater: min(1 << 20, max(1, elementLimit / 4)), unreadLimit: elementLimit)
    }

    /// A stream that pauses its transfer at `highWater` bytes unread, and fails it past `unreadLimit`.
    init(decoder: Decoder, highWater: Int = 1 << 20, unreadLimit: Int = .max) {
        state = Locked(State(decoder: decoder))
        self.highWater = max(1, highWater)
        lowWater = max(1, highWater / 4)
        self.unreadLimit = max(self.highWater, unreadLimit)
    }

    func begin(_ head: HTTPURLResponse) throws(NetworkError) {
        try Decoder.accept(head)
        let waiter = state.withLock { state in
            state.head = head
            state.decoder.reset()
            defer { state.headWaiter = nil }
            return state.headWaiter
        }
        waiter?.resume(returning: .success(head))
    }

    func write(_ data: Data) throws(NetworkError) {
        try take(data.count) { (decoder) throws(NetworkError) in try decoder.decode(data) }
    }

    /// An element made elsewhere (a socket's message, which its transport joined) arrived, of `bytes` bytes.
    func deliver(_ element: Element, bytes: Int) throws(NetworkError) {
        try take(bytes) { _ in [element] }
    }

    /// Takes the elements `decode` makes of `bytes` more bytes: the waiting consumer gets the first.
    private func take(
        _ bytes: Int, _ decode: (inout Decoder) throws(NetworkError) -> [Element]
    ) throws(NetworkError) {
        let received = try state.withLock { (state) throws(NetworkError) -> Received in
            let decoded = try decode(&state.decoder)
            guard !decoded.isEmpty else { return (nil, [], nil) }
            // Bytes are counted against the element that completes with them.
            var elements = decoded.map { ($0, 0) }
            elements[elements.count - 1].1 = bytes
            // Waiting consumers exist only while nothing is buffered: each takes the next element.
            var first: (Waiter, Element)?
            var others: [(Waiter, Element)] = []
            while !state.waiters.isEmpty, !elements.isEmpty {
                let handed = (state.waiters.removeFirst(), elements.removeFirst().0)
                if first == nil { first = handed } else { others.append(handed) }
            }
            append(elements, to: &state)
            // What is read already stays for the consumer; the transfer ends after it.
            guard first != nil || state.buffered <= unreadLimit else { throw .responseTooLarge(limit: unreadLimit) }
            return (first, others, shouldPause(&state))
        }
        if let control = received.pause { tell(control, paused: true) }
        if let (waiter, element) = received.first { waiter.resume(returning: .success(element)) }
        for (waiter, element) in received.others { waiter.resume(returning: .success(element)) }
    }

    private func append(_ elements: [(Element, Int)], to state: inout State) {
        for (element, bytes) in elements {
            state.elements.append((element, bytes))
            state.buffered += bytes
        }
    }

    /// Tells `control` to pause (or resume), then again whatever the stream decided meanwhile, until what it
    /// was told last is what the stream wants. The stream decides under its lock but tells the transport
    /// after, from the thread that decided (the connection's for a pause, the consumer's for a resume): a
    /// pause decided first may otherwise reach the transport after the resume decided next, and the transfer
    /// stays paused while its consumer waits for ever. Bounded, though each round needs another thread to
    /// have changed the wish meanwhile (and that thread then tells the transport itself).
    private func tell(_ control: any TransportControl, paused: Bool) {
        var wish = paused
        for _ in 0..<1_000 {
            if wish { control.pauseReceiving() } else { control.resumeReceiving() }
            let now = state.withLock { state in state.control === control ? state.paused : wish }
            if now == wish { return }
            wish = now
        }
    }

    private func shouldPause(_ state: inout State) -> (any TransportControl)? {
        guard !state.paused, state.buffered > highWater else { return nil }
        state.paused = true
        return state.control
    }

    func prepare(_ request: inout URLRequest) {
        let decoder = state.withLock { $0.decoder }
        decoder.prepare(&request)
    }

    var allowsRetry: Bool { Decoder.reconnects || state.withLock { $0.head == nil } }

    var reconnects: Bool { Decoder.reconnects }

    var reconnectionDelay: TimeInterval? { state.withLock { $0.decoder.reconnectionDelay } }

    var endedMidElement: Bool { state.withLock { $0.decoder.isMidElement } }

    func attach(_ control: any TransportControl) {
        let paused = state.withLock { state in
            state.control = control
            return state.paused
        }
        if paused { tell(control, paused: true) }
    }

    func taskEnded(with outcome: DataTask.Outcome) {
        let outcome = outcome.map { _ in () }
        let (headWaiter, waiters) = state.withLock { state in
            if state.end == nil { state.end = outcome }
            defer {
                state.headWaiter = nil
                state.waiters = []
                state.control = nil
            }
            return (state.headWaiter, state.next == state.elements.count ? state.waiters : [])
        }
        switch outcome {
        case .success: headWaiter?.resume(returning: .failure(.transport(URLError(.badServerResponse))))
        case .failure(let error): headWaiter?.resume(returning: .failure(error))
        }
        for waiter in waiters { waiter.resume(returning: outcome.map { nil }) }
    }

    /// Waits for the accepted head, or the task's failure.
    func head() async -> Result<HTTPURLResponse, NetworkError> {
        await withUnsafeContinuation { continuation in
            let ready = state.withLock { state -> Result<HTTPURLResponse, NetworkError>? in
                if let head = state.head { return .success(head) }
                if case .failure(let error) = state.end { return .failure(error) }
                if state.end != nil { return .failure(.transport(URLError(.badServerResponse))) }
                state.headWaiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// The next element, `nil` at the end of the body, or the task's failure. Consumers reading at once
    /// take turns: each element goes to one of them, the first to wait first.
    func next() async -> Result<Element?, NetworkError> {
        await withUnsafeContinuation { continuation in
            let (ready, resume) = state.withLock {
                state -> (Result<Element?, NetworkError>?, (any TransportControl)?) in
                if state.next < state.elements.count {
                    let (element, bytes) = state.elements[state.next]
                    state.next += 1
                    state.buffered -= bytes
                    if state.next == state.elements.count {
                        state.elements.removeAll(keepingCapacity: true)
                        state.next = 0
                    }
                    var resume: (any TransportControl)?
                    if state.paused, state.buffered <= lowWater {
                        state.paused = false
                        resume = state.control
                    }
                    return (.success(element), resume)
                }
                if let end = state.end { return (end.map { nil }, nil) }
                state.waiters.append(continuation)
                return (nil, nil)
            }
            if let resume { tell(resume, paused: false) }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// A stream open to a consumer: the accepted head, the task that carries it, and its elements. Letting
/// go of it cancels the task; so does cancelling the Swift task that waits for an element.
final class OpenStream<Decoder: ChunkDecoder>: Sendable {
    let httpResponse: HTTPURLResponse
    let task: DataTask
    /// The most bytes one element (a line, an event) may hold, and the most that may wait unread: the
    /// endpoint's or the pool's `maximumResponseBytes`.
    let elementLimit: Int
    private let body: BodyStream<Decoder>
    private let end: @Sendable (NetworkError) -> Void

    /// Starts the endpoint's task with its body delivered to a stream decoded by the decoder `makeDecoder`
    /// makes for the element limit, and waits for the accepted head.
    convenience init(
        _ endpoint: some Endpoint, id: String?, pool: TaskPool, decoder makeDecoder: (_ elementLimit: Int) -> Decoder
    ) async throws(NetworkError) {
        let elementLimit = max(1, endpoint.maximumResponseBytes ?? pool.configuration.maximumResponseBytes)
        let body = BodyStream(elementLimit: elementLimit, decoder: makeDecoder(elementLimit))
        try await self.init(endpoint, id: id, pool: pool, body: body, delivery: body, elementLimit: elementLimit)
    }

    /// Starts the endpoint's task with `delivery`, whose elements go to `body`, and waits for the accepted
    /// head.
    init(
        _ endpoint: some Endpoint, id: String?, pool: TaskPool, body: BodyStream<Decoder>, delivery: any Delivery,
        elementLimit: Int
    ) async throws(NetworkError) {
        let sent = try pool.submit(endpoint, id: id, delivery: delivery)
        let task = sent.task
        if sent.begins { pool.beginAttempt(1, of: task) }
        let end: @Sendable (NetworkError) -> Void = { [weak pool] error in pool?.end(task, with: .failure(error)) }
        httpResponse = try await withTaskCancellationHandler {
            await body.head()
        } onCancel: {
            end(.cancelled)
        }.get()
        self.task = task
        self.elementLimit = elementLimit
        self.body = body
        self.end = end
    }

    deinit { end(.cancelled) }

    /// Ends the task with `error`, unless it has ended.
    func end(with error: NetworkError) { end(error) }

    /// Waits until the task has ended.
    func ended() async {
        for await _ in task.progressUpdates {}
    }

    /// The next element, `nil` at the end; throws the task's ``NetworkError``.
    func next() async throws -> Decoder.Element? {
        try await withTaskCancellationHandler {
            await body.next()
        } onCancel: { [end] in
            end(.cancelled)
        }.get()
    }
}
