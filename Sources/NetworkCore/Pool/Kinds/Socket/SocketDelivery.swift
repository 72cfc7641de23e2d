import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A socket task's ``Delivery``: the transfer is opened through the transport's WebSocket capability, an
/// answer is the socket's only when it is `101 Switching Protocols`, and the messages go to the caller's
/// ``WebSocket`` through a ``BodyStream`` (so that a reader who falls behind pauses the connection's
/// reading). The task lives as long as the socket: it takes no slot and has no deadline. It is not sent
/// again once open; before, it is retried as any request (a `401` renews the credential once).
final class SocketDelivery: Delivery, Sendable {
    let options: WebSocketOptions
    /// The messages, joined by the transport, for the caller to read.
    let messages: BodyStream<SocketMessages>
    private let state = Locked<State>(State())

    private struct State: Sendable {
        var connection: (any WebSocketConnection)?
        var closeFrame: (code: WebSocketCloseCode, reason: String)?
    }

    /// A delivery with `options`, whose message limit is set.
    init(options: WebSocketOptions) {
        self.options = options
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

    func begin(_ head: HTTPURLResponse) throws(NetworkError) { try messages.begin(head) }

    /// An open socket's answer has no body: whatever bytes come are not messages.
    func write(_ data: Data) throws(NetworkError) {}

    func attach(_ control: any TransportControl) {
        if let connection = control as? any WebSocketConnection { state.withLock { $0.connection = connection } }
        messages.attach(control)
    }

    var allowsRetry: Bool { messages.allowsRetry }

    func receive(message: WebSocketMessage) throws(NetworkError) {
        try messages.deliver(message, bytes: message.byteCount)
    }

    func receive(closeCode: WebSocketCloseCode, reason: String) {
        state.withLock { $0.closeFrame = (closeCode, reason) }
    }

    /// The task ended: the connection is let go (it reports to the task's receiver, which holds the task,
    /// which holds this delivery: kept, none of them would be freed).
    func taskEnded(with outcome: DataTask.Outcome) {
        state.withLock { $0.connection = nil }
        messages.taskEnded(with: outcome)
    }

    /// The connection the transport returned, once it has.
    var connection: (any WebSocketConnection)? { state.withLock { $0.connection } }

    /// The server's close frame, once it came.
    var closeFrame: (code: WebSocketCloseCode, reason: String)? { state.withLock { $0.closeFrame } }
}

/// A socket's messages as a ``BodyStream`` holds them: the transport joins them, so no bytes are decoded here.
struct SocketMessages: ChunkDecoder {
    mutating func decode(_ data: Data) -> [WebSocketMessage] { [] }
    mutating func reset() {}
}
