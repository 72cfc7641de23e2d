// The pool suite's transport, shared by the suite (`NetworkCoreBenchmarks`) and `PoolOperations`.
import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The pool suite's transport, with no network: a request whose task id starts with `pending` never
/// answers until it is cancelled (its task stays tracked), and holds nothing but its events meanwhile,
/// as a transport over an event loop would; any other is answered at once.
public struct ScaleTransport: Transport {
    public init() {}

    private let instant = StubTransport { _, _ in StubResponse() }

    public func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
        guard events.taskID.hasPrefix("pending") else { return instant.start(request, body: body, events: events) }
        return PendingTransfer(events)
    }
}

/// A transfer that waits until it is cancelled, then reports the cancel once.
public final class PendingTransfer: TransportControl, @unchecked Sendable {
    // @unchecked Sendable: `events` is taken under `lock`.
    private let lock = NSLock()
    private var events: TransportEvents?

    init(_ events: TransportEvents) { self.events = events }

    public func cancel() {
        let events = lock.withLock { () -> TransportEvents? in
            defer { self.events = nil }
            return self.events
        }
        events?.fail(CancellationError())
    }
}
