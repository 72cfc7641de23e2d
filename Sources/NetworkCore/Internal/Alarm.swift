import Dispatch
import Foundation

/// Calls a handler on the pool's timer queue when a time comes, unless cancelled first; the handler may
/// set it again. Cancelling frees the timer and its handler at once.
///
/// A task's deadline and stall checks use this rather than a Swift task that sleeps: a cancelled
/// `Task.sleep` keeps its scheduled wake-up until the time it was to end, so with a deadline of
/// minutes every task that ended within it would still hold memory until then.
final class Alarm: @unchecked Sendable {
    // @unchecked Sendable: `source` is a dispatch source, safe to use from any thread.
    private let source: any DispatchSourceTimer

    /// Sets the alarm for `seconds` from now; at once if `seconds` is not positive.
    init(after seconds: TimeInterval, handler: @escaping @Sendable (Alarm) -> Void) {
        source = DispatchSource.makeTimerSource(queue: Self.queue)
        source.setEventHandler { [weak self] in
            if let self { handler(self) }
        }
        source.schedule(deadline: Self.deadline(after: seconds))
        source.activate()
    }

    /// Where every alarm's handler runs: a queue of NetworkCore's own, so that work others queue on the
    /// global queues (or a platform call blocking their threads) does not hold up a deadline.
    private static let queue = DispatchQueue(label: "NetworkCore.alarms", qos: .userInitiated, attributes: .concurrent)

    /// Sets it again, for `seconds` from now.
    func set(after seconds: TimeInterval) {
        source.schedule(deadline: Self.deadline(after: seconds))
    }

    /// Stops it for good and lets go of the handler; calling it again does nothing.
    func cancel() {
        source.cancel()
    }

    deinit { source.cancel() }

    private static func deadline(after seconds: TimeInterval) -> DispatchTime {
        .now() + .nanoseconds(Int(MonotonicClock.nanoseconds(seconds)))
    }
}
