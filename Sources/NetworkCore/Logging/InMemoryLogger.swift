import Foundation

/// A logger that keeps every event in memory, for tests and debugging screens.
///
/// ```swift
/// let logger = InMemoryLogger()
/// let pool = TaskPool(configuration: .init(logger: logger))
/// // … send through the pool …
/// #expect(logger.events(.retrying).count == 2)
/// ```
public final class InMemoryLogger: NetworkLogger, @unchecked Sendable {
    // @unchecked Sendable: `storage` is guarded by `lock`.
    private let lock = Lock()
    private var storage: [TaskEvent] = []
    /// Events below this level are not kept.
    public let minimumLevel: TaskEvent.Level

    /// Creates an empty logger that keeps events at `minimumLevel` and above.
    public init(minimumLevel: TaskEvent.Level = .debug) { self.minimumLevel = minimumLevel }

    /// Keeps the event.
    public func log(_ event: TaskEvent) {
        guard event.level >= minimumLevel else { return }
        lock.withLock { storage.append(event) }
    }

    /// Every event kept, in order.
    public var events: [TaskEvent] { lock.withLock { storage } }

    /// The events of one kind, in order.
    public func events(_ kind: TaskEvent.Kind) -> [TaskEvent] { events.filter { $0.kind == kind } }

    /// Forgets every event.
    public func removeAll() { lock.withLock { storage.removeAll() } }
}
