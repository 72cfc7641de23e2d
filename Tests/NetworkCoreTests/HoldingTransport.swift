import Foundation

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport whose transfers wait until the test answers them, and which tells the test, without
/// polling, how many have started and been cancelled (``Tally``). A cancelled transfer fails at once.
final class HoldingTransport: Transport, @unchecked Sendable {
    // @unchecked Sendable: `transfers` is locked.
    /// One transfer: its request and events, and whether it has ended.
    private struct Transfer {
        let request: URLRequest
        /// Let go once the transfer has ended: the events hold the pool's receiver, and with it the pool.
        var events: TransportEvents?
        var ended: Bool { events == nil }
    }

    let starts = Tally()
    let cancels = Tally()
    private let transfers = Locked<[Transfer]>([])

    init() {}

    /// The requests handed over, in order.
    var requests: [URLRequest] { transfers.withLock { $0.map(\.request) } }

    /// The events of the transfer at `index`, while it runs.
    func events(_ index: Int) -> TransportEvents? { transfers.withLock { $0[index].events } }

    func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
        let index = transfers.withLock { transfers in
            transfers.append(Transfer(request: request, events: events))
            return transfers.count - 1
        }
        starts.increment()
        return Control { [weak self] in
            guard let self, let events = take(index)?.events else { return }
            cancels.increment()
            events.fail(URLError(.cancelled))
        }
    }

    /// Answers every transfer still open (or the one at `index`) with `response`, whole.
    func answer(_ response: StubResponse = .json("{}"), at index: Int? = nil) {
        let indices = index.map { [$0] } ?? Array(0..<transfers.withLock { $0.count })
        for index in indices {
            guard let transfer = take(index) else { continue }
            let head = HTTPURLResponse(
                url: transfer.request.url!, statusCode: response.statusCode, httpVersion: "HTTP/1.1",
                headerFields: response.headers)!
            guard let events = transfer.events, events.receive(head: head) else { continue }
            if !response.body.isEmpty, !events.receive(body: response.body) { continue }
            events.finish()
        }
    }

    /// The sockets opened, by the index of their transfer.
    private let sockets = Locked<[Int: HeldSocket]>([:])

    func startWebSocket(
        _ request: URLRequest, options: WebSocketOptions, events: TransportEvents
    )
        -> any WebSocketConnection
    {
        let index = transfers.withLock { transfers in
            transfers.append(Transfer(request: request, events: events))
            return transfers.count - 1
        }
        let socket = HeldSocket(options: options) { [weak self] code in
            guard let self, let events = take(index)?.events else { return }
            guard let code else {
                cancels.increment()
                return events.fail(URLError(.cancelled))
            }
            events.receive(closeCode: code, reason: "")
            events.finish()
        }
        sockets.withLock { $0[index] = socket }
        starts.increment()
        return socket
    }

    /// The socket of the transfer at `index`.
    func socket(_ index: Int) -> HeldSocket? { sockets.withLock { $0[index] } }

    /// The server accepts the socket at `index` (`101 Switching Protocols`, with `headers`).
    @discardableResult
    func open(_ index: Int, headers: [String: String] = [:]) -> Bool {
        guard let events = events(index), let url = requests[index].url else { return false }
        var fields = ["Upgrade": "websocket", "Connection": "Upgrade"]
        fields.merge(headers) { $1 }
        return events.receive(
            head: HTTPURLResponse(url: url, statusCode: 101, httpVersion: "HTTP/1.1", headerFields: fields)!)
    }

    /// The server sends `message` on the socket at `index`; whether the pool took it.
    @discardableResult
    func push(_ message: WebSocketMessage, at index: Int) -> Bool { events(index)?.receive(message: message) ?? false }

    /// The server closes the socket at `index` with `code` and `reason`, and the handshake completes.
    func serverCloses(_ index: Int, code: WebSocketCloseCode, reason: String = "") {
        guard let events = take(index)?.events else { return }
        events.receive(closeCode: code, reason: reason)
        if code == .normalClosure || code == .goingAway {
            events.finish()
        } else {
            events.fail(WebSocketError.closed(code, reason: reason))
        }
    }

    /// The connection of the socket at `index` is lost, with no close frame.
    func drop(_ index: Int) {
        take(index)?.events?.fail(WebSocketError.closed(.abnormalClosure, reason: "the connection was lost"))
    }

    /// Marks the transfer at `index` ended; returns it if it was open.
    private func take(_ index: Int) -> Transfer? {
        transfers.withLock { transfers in
            guard index < transfers.count, !transfers[index].ended else { return nil }
            defer { transfers[index].events = nil }
            return transfers[index]
        }
    }

    final class Control: TransportControl, @unchecked Sendable {  // immutable
        let onCancel: @Sendable () -> Void
        init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }
        func cancel() { onCancel() }
    }
}

/// A socket of a ``HoldingTransport``: it keeps what the pool sends, and how it was closed or cancelled.
final class HeldSocket: WebSocketConnection, @unchecked Sendable {
    // @unchecked Sendable: `state` is locked.
    private struct State {
        var sent: [WebSocketMessage] = []
        var closes: [(WebSocketCloseCode, String)] = []
        var cancels = 0
    }
    let options: WebSocketOptions
    private let state = Locked(State())
    private let ended: @Sendable (WebSocketCloseCode?) -> Void

    init(options: WebSocketOptions, ended: @escaping @Sendable (WebSocketCloseCode?) -> Void) {
        self.options = options
        self.ended = ended
    }

    /// The messages the pool sent, in order.
    var sent: [WebSocketMessage] { state.withLock { $0.sent } }
    /// The close frames the pool sent, as "code reason".
    var closes: [String] { state.withLock { $0.closes.map { "\($0.0.rawValue) \($0.1)" } } }
    /// How often the pool cancelled it.
    var cancels: Int { state.withLock { $0.cancels } }

    func send(_ message: WebSocketMessage) async throws {
        state.withLock { $0.sent.append(message) }
    }

    /// The pool's close: the held server answers at once, as a server that echoes the close frame.
    func close(_ code: WebSocketCloseCode, reason: String) {
        state.withLock { $0.closes.append((code, reason)) }
        ended(code)
    }

    /// A cancel: a close frame going away, and the connection dropped.
    func cancel() {
        state.withLock {
            $0.cancels += 1
            $0.closes.append((.goingAway, ""))
        }
        ended(nil)
    }
}
