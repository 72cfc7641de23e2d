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
