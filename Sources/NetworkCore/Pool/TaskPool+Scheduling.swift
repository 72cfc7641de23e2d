import Foundation

/// Scheduling: pausing and resuming the start of tasks, and their priorities in the queue.
extension TaskPool {
    /// Stops starting tasks: new sends (and sockets opened with ``webSocket(_:id:options:)``), and those
    /// already waiting, wait in the queue until ``resume()``; tasks already running (open sockets too) go on. For an app going to the background, say. Nothing is lost or sent
    /// twice: a waiting task can still be cancelled, and its deadline still counts.
    public func pause() {
        state.withLock { $0.pause() }
    }

    /// Starts tasks again after ``pause()``: the waiting ones, as many as the limits allow, by priority.
    public func resume() {
        mutate { state, effects in state.resume(at: MonotonicClock.now(), into: &effects) }
    }

    /// Whether the pool is paused (see ``pause()``).
    public var isPaused: Bool { state.withLock { $0.scheduler.isPaused } }

    /// Whether the pool waits for the network: its ``Configuration/connectivity`` monitor says
    /// ``Connectivity/offline``, and it starts no task until the monitor says otherwise.
    public var isWaitingForNetwork: Bool { state.withLock { $0.scheduler.isOffline } }

    /// The running task with this id gets `priority`; if it waits in the queue, it moves to the back of
    /// that priority's line. O(1).
    /// - Returns: whether a running or waiting task has this id.
    @discardableResult
    public func reprioritize(id: String, to priority: RequestPriority) -> Bool {
        state.withLock { $0.reprioritize(id: id, to: priority) }
    }

    /// How many tasks wait in the queue for a slot.
    public var queuedCount: Int { state.withLock { $0.scheduler.queuedCount } }
}
