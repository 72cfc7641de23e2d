import Foundation

/// What a ``PoolInspector`` sees at one moment: the tasks running and waiting in its pools, and those
/// that ended most recently. Credentials are redacted; ``InspectedTask/details`` are left out.
public struct PoolInspection: Hashable, Sendable, Codable {
    /// When it was taken.
    public let takenAt: Date
    /// Whether a pool is paused (``TaskPool/pause()``).
    public let isPaused: Bool
    /// Whether a pool waits for the network (``TaskPool/isWaitingForNetwork``).
    public let isWaitingForNetwork: Bool
    /// Running and waiting tasks, oldest first.
    public let active: [InspectedTask]
    /// Ended tasks, newest first, at most the inspector's ``PoolInspector/historyLimit``.
    public let recent: [InspectedTask]
    /// Tasks that ended since the inspector was made, including those no longer in ``recent``.
    public let endedCount: Int
}
