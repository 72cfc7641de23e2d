import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where a kind of task puts its answer's body, and what that kind asks of the route: the one contract a
/// kind of task implements (see CONTRIBUTING.md, "A new kind of task").
///
/// A data task or an upload has none: its body is read into memory, up to `maximumResponseBytes`, and is
/// the ``Response``'s `body`; only such an answer may be joined by a second caller or come from the cache.
/// A download writes to a file (``DownloadFile``), a stream hands its body to a consumer as it arrives
/// (``BodyStream``). An answer with a status the pool does not accept never reaches a delivery: it is read
/// into memory, so that its error body can be read (see ``TransferReceiver``).
///
/// A delivery is made for one task and lives as long as it; its calls come one at a time, in the order
/// of the task's attempts. Each requirement but ``write(_:)`` has a default that does nothing.
protocol Delivery: AnyObject, Sendable {
    /// An accepted answer begins (again, after a reconnection or a resumed download); throws when the body
    /// cannot go there (a file that cannot be written, an event stream's answer that is not one), which
    /// fails the attempt.
    func begin(_ head: HTTPURLResponse) throws(NetworkError)

    /// Body bytes of an accepted answer arrived; throws when they cannot be taken (a full disk, an element
    /// past its limit), which fails the attempt.
    func write(_ data: Data) throws(NetworkError)

    /// The accepted answer's transfer ended, whole when `complete`: a download moves its file into place
    /// (and throws when it cannot), or keeps what it has for the next attempt.
    func transferEnded(complete: Bool) throws(NetworkError)

    /// The transfer's control, once its transport has returned it: a stream pauses and resumes it.
    func attach(_ control: any TransportControl)

    /// Adds what the next attempt needs to continue where the last stopped: `Range` and `If-Range` for a
    /// download, `Accept` and `Last-Event-ID` for events.
    func prepare(_ request: inout URLRequest)

    /// The body bytes the next attempt starts from: what a download has written when it will ask for the rest.
    var keptBytes: Int { get }

    /// Whether another attempt may be sent: not once a stream's consumer has had part of a body.
    var allowsRetry: Bool { get }

    /// Whether a body that ends is a connection to open again (Server-Sent Events).
    var reconnects: Bool { get }

    /// The wait before connecting again that the server asked for, if any.
    var reconnectionDelay: TimeInterval? { get }

    /// Whether the body ended in the middle of an element (an event), which is lost.
    var endedMidElement: Bool { get }

    /// Where the body was written, for the ``Response``'s ``Response/fileURL``.
    var fileURL: URL? { get }

    /// The task has ended with `outcome`: nothing more comes. A stream tells its consumer; a download's
    /// partial file goes unless it was completed.
    func taskEnded(with outcome: DataTask.Outcome)

    /// Hands a transfer of the task to the transport, through the transport's capability for this kind:
    /// ``Transport/start(_:body:events:)`` for a request, ``Transport/startWebSocket(_:options:events:)``
    /// for a socket.
    func start(
        _ request: URLRequest, body: RequestBody, events: TransportEvents, on transport: any Transport
    )
        -> any TransportControl

    /// Whether an answer with `status` is this kind's (a socket's `101`), or `nil` to leave it to the
    /// pool's validation, as for any request.
    func accepts(status: Int) -> Bool?

    /// Whether the task lives on once open (a socket): it takes none of the pool's slots, and has no
    /// deadline and no stall check (the socket's keep-alive watches it).
    var isLongLived: Bool { get }

    /// A message arrived on an open socket; throws when it cannot be taken, which fails the transfer.
    func receive(message: WebSocketMessage) throws(NetworkError)

    /// The server's close frame arrived on an open socket.
    func receive(closeCode: WebSocketCloseCode, reason: String)

    /// The wait before the task's transfer opens again by the kind's own policy after `failure` (a
    /// socket's ``WebSocketReconnection``), or `nil` to leave the failure to the retriers. Asked once per
    /// failed attempt.
    func reopens(after failure: NetworkError) -> TimeInterval?

    /// Whether the answer just begun opened the task again after it had been open (a socket's
    /// reconnection, which the pool logs as ``TaskEvent/Kind/reconnected``).
    var reopened: Bool { get }

    /// A socket's traffic, and whether it is open, for the task's row (``TaskSnapshot/socket``).
    var activity: SocketActivity? { get }

    /// A socket's last messages, for the live inspector's detail of its task.
    var recentFrames: [RecentFrames.Frame] { get }
}

extension Delivery {
    func begin(_ head: HTTPURLResponse) throws(NetworkError) {}
    func transferEnded(complete: Bool) throws(NetworkError) {}
    func attach(_ control: any TransportControl) {}
    func prepare(_ request: inout URLRequest) {}
    var keptBytes: Int { 0 }
    var allowsRetry: Bool { true }
    var reconnects: Bool { false }
    var reconnectionDelay: TimeInterval? { nil }
    var endedMidElement: Bool { false }
    var fileURL: URL? { nil }
    func taskEnded(with outcome: DataTask.Outcome) {}
    func start(
        _ request: URLRequest, body: RequestBody, events: TransportEvents, on transport: any Transport
    )
        -> any TransportControl
    {
        transport.start(request, body: body, events: events)
    }
    func accepts(status: Int) -> Bool? { nil }
    var isLongLived: Bool { false }
    func receive(message: WebSocketMessage) throws(NetworkError) {}
    func receive(closeCode: WebSocketCloseCode, reason: String) {}
    func reopens(after failure: NetworkError) -> TimeInterval? { nil }
    var reopened: Bool { false }
    var activity: SocketActivity? { nil }
    var recentFrames: [RecentFrames.Frame] { [] }
}
