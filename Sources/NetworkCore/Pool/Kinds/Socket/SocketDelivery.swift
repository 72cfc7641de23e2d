import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A socket task's ``Delivery``: the transfer is opened through the transport's WebSocket capability, an
/// answer is the socket's only when it is `101 Switching Protocols`, and the messages go to the caller's
/// ``WebSocket`` through a ``BodyStream`` (so that a reader who falls behind pauses the connection's
/// reading). The task lives as long as the socket: it takes no slot and has no deadline. Before it is
/// open, it is retried as any request (a `401` renews the credential once); once it has been open, it
/// opens again only by its ``WebSocketReconnection``, its messages one sequence across connections.
final class SocketDelivery: Delivery, Sendable {
    let options: WebSocketOptions
    /// The messages, joined by the transport, for the caller to read.
    let messages: BodyStream<SocketMessages>
    private let state: Locked<State>
    /// Draws the jitter of a reconnection's wait, from -1 to 1.
    private let random: @Sendable () -> Double

    private struct State: Sendable {
        /// The connection while it is open.
        var connection: (any WebSocketConnection)?
        /// The connection of the transfer that is opening, until its answer begins.
        var opening: (any WebSocketConnection)?
        /// Whether the current transfer's answer has begun (the socket is open).
        var begun = false
        /// Whether the current attempt opened the socket (it stays set after its transfer ends).
        var attemptOpened = false
        var closeFrame: (code: WebSocketCloseCode, reason: String)?
        /// How many times the socket has opened.
        var opens = 0
        /// Attempts to open again since the server last sent a message.
        var attemptsInARow = 0
        /// The app closed the socket: it does not open again.
        var closing = false
        /// Messages each way, for the task's row.
        var activity = SocketActivity()
        /// The last messages, for the live inspector.
        var recent: RecentFrames
    }

    /// A delivery with `options`, whose message limit is set, keeping the first `framePreview` bytes of its
    /// last messages for the live inspector (none when 0).
    init(
        options: WebSocketOptions, framePreview: Int = 0,
        random: @escaping @Sendable () -> Double = { Double.random(in: -1...1) }
    ) {
        self.options = options
        self.random = random
        state = Locked(State(recent: RecentFrames(prefixLimit: framePreview)))
        messages = BodyStream(elementLimit: options.maximumMessageBytes ?? .max, decoder: SocketMessages())
    }

    func start(
        _ request: URLRequest, body: RequestBody, events: TransportEvents, on transport: any Transport
    )
        -> any TransportControl
    {
        transport.startWebSocket(request, options: options, events: events)
    }

    func accepts(status: Int) -> Bool? { status == 101 }

    var isLongLived: Bool { true }

    /// The socket is open: its connection is the one to send on before the caller, waiting for the head,
    /// is resumed.
    func begin(_ head: HTTPURLResponse) throws(NetworkError) {
        state.withLock { state in
            state.opens += 1
            state.begun = true
            state.attemptOpened = true
            if let opening = state.opening { state.connection = opening }
            state.opening = nil
        }
        try messages.begin(head)
    }

    var reopened: Bool { state.withLock { $0.opens > 1 } }

    /// The connection is over (the task may open another).
    func transferEnded(complete: Bool) throws(NetworkError) {
        state.withLock { state in
            state.connection = nil
            state.begun = false
        }
    }

    func reopens(after failure: NetworkError) -> TimeInterval? {
        guard let policy = options.reconnection, WebSocketReconnection.reconnects(after: failure) else { return nil }
        let attempt = state.withLock { state -> Int? in
            guard state.opens > 0, !state.closing, state.attemptsInARow < policy.maximumAttempts else { return nil }
            state.attemptsInARow += 1
            return state.attemptsInARow
        }
        return attempt.map { policy.delay(before: $0, random: random()) }
    }

    /// The app closes the socket: the open connection, if any, is returned to be closed; none opens again.
    func close() -> (any WebSocketConnection)? {
        state.withLock { state in
            state.closing = true
            return state.connection
        }
    }

    /// An open socket's answer has no body: whatever bytes come are not messages.
    func write(_ data: Data) throws(NetworkError) {}

    func attach(_ control: any TransportControl) {
        if let connection = control as? any WebSocketConnection {
            // Open once its answer has begun, which may have come before the transport returned it.
            state.withLock { state in
                if state.begun { state.connection = connection } else { state.opening = connection }
            }
        }
        messages.attach(control)
    }

    /// An attempt begins: it has not opened the socket yet.
    func prepare(_ request: inout URLRequest) {
        state.withLock { $0.attemptOpened = false }
    }

    /// An attempt that did not open the socket is retried as any request (a `401` renews the credential,
    /// the first opening or a reconnection's); one that opened it goes again only by its reconnection.
    var allowsRetry: Bool { state.withLock { !$0.attemptOpened } }

    func receive(message: WebSocketMessage) throws(NetworkError) {
        state.withLock { state in
            state.attemptsInARow = 0
            state.activity.messagesReceived += 1
            state.activity.bytesReceived += message.byteCount
            let now = Date()
            state.activity.lastActivity = now
            state.recent.record(message, sent: false, at: now)
        }
        try messages.deliver(message, bytes: message.byteCount)
    }

    /// The connection took `message` from the app.
    func sent(_ message: WebSocketMessage) {
        state.withLock { state in
            state.activity.messagesSent += 1
            state.activity.bytesSent += message.byteCount
            let now = Date()
            state.activity.lastActivity = now
            state.recent.record(message, sent: true, at: now)
        }
    }

    /// The socket's traffic, and whether it is open now.
    var activity: SocketActivity? {
        state.withLock { state in
            var activity = state.activity
            activity.isOpen = state.connection != nil
            return activity
        }
    }

    /// The last messages each way, oldest first (kept only when an inspector watches the pool).
    var recentFrames: [RecentFrames.Frame] { state.withLock { $0.recent.inOrder } }

    func receive(closeCode: WebSocketCloseCode, reason: String) {
        state.withLock { $0.closeFrame = (closeCode, reason) }
    }

    /// The task ended: the connection is let go (it reports to the task's receiver, which holds the task,
    /// which holds this delivery: kept, none of them would be freed).
    func taskEnded(with outcome: DataTask.Outcome) {
        state.withLock { state in
            state.connection = nil
            state.opening = nil
        }
        messages.taskEnded(with: outcome)
    }

    /// The connection while it is open.
    var connection: (any WebSocketConnection)? { state.withLock { $0.connection } }

    /// The server's close frame, once it came.
    var closeFrame: (code: WebSocketCloseCode, reason: String)? { state.withLock { $0.closeFrame } }

    /// How many times the socket has opened again.
    var reconnections: Int { state.withLock { max(0, $0.opens - 1) } }
}

/// A socket's messages as a ``BodyStream`` holds them: the transport joins them, so no bytes are decoded here.
struct SocketMessages: ChunkDecoder {
    mutating func decode(_ data: Data) -> [WebSocketMessage] { [] }
    mutating func reset() {}
}
