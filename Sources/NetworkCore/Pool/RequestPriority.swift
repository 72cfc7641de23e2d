/// How soon a task starts when the pool's limits make tasks wait (see
/// ``TaskPool/Configuration/maximumConcurrentTasks``): a waiting task of a higher priority starts before
/// any of a lower one, and tasks of one priority start in the order they came.
///
/// Set it for an endpoint (``Endpoint/priority``), for one call (``Endpoint/prioritized(_:)``), or for a
/// waiting task with ``TaskPool/reprioritize(id:to:)``. It orders the queue only: a running task is
/// never stopped for a more urgent one.
public enum RequestPriority: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Prefetching, syncing, anything nobody waits for.
    case background
    /// Soon, but after what is on screen.
    case low
    /// The default.
    case normal
    /// What the user waits for now.
    case high

    /// Orders from ``background`` to ``high``.
    public static func < (lhs: RequestPriority, rhs: RequestPriority) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `"background"`, `"low"`, `"normal"` or `"high"`.
    public var description: String {
        switch self {
        case .background: "background"
        case .low: "low"
        case .normal: "normal"
        case .high: "high"
        }
    }
}
