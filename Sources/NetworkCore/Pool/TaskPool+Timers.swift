import Dispatch
import Foundation

/// The running tasks' deadlines and stall checks: one heap of due times for the pool and one dispatch
/// timer set for the earliest, rather than a timer per task. A task takes its entries out when it ends
/// (see `TaskPool.end`), so nothing of it waits for a time that no longer matters.
extension TaskPool {
    /// Where the pool's timer fires: a queue of NetworkCore's own, so that work others queue on the
    /// global queues (or a platform call blocking their threads) does not hold up a deadline.
    private static let timerQueue = DispatchQueue(
        label: "NetworkCore.timers", qos: .userInitiated, attributes: .concurrent)

    /// Sets the task's timer of `kind` for `seconds` from now (at once if not positive), replacing the one
    /// it had; call with `lock` held, while the task runs. `interval` is what the timer stands for, handed
    /// back when it fires (a deadline's or a stall threshold's seconds): `seconds` unless told.
    func setTimer(_ kind: TimerKind, of task: DataTask, after seconds: TimeInterval, for interval: TimeInterval? = nil)
    {
        let now = MonotonicClock.now()
        let (sum, overflow) = now.addingReportingOverflow(MonotonicClock.nanoseconds(seconds))
        let time = overflow ? UInt64.max : sum
        timers.insert(time, for: task, kind: kind, seconds: interval ?? seconds)
        if time < timerSourceTime { setTimerSource(for: time, now: now) }
    }

    /// Sets the dispatch timer for `time`, making it the first time; call with `lock` held.
    private func setTimerSource(for time: UInt64, now: UInt64) {
        timerSourceTime = time
        let delay = DispatchTimeInterval.nanoseconds(Int(clamping: time > now ? time - now : 0))
        if let timerSource {
            timerSource.schedule(deadline: .now() + delay)
            return
        }
        let source = DispatchSource.makeTimerSource(queue: Self.timerQueue)
        source.setEventHandler { [weak self] in self?.timersFired() }
        source.schedule(deadline: .now() + delay)
        source.activate()
        timerSource = source
    }

    /// The dispatch timer fired: takes out every entry that is due, sets the timer for the next, and
    /// acts on each: a deadline ends its task, a stall check looks at its task's progress.
    private func timersFired() {
        let due = lock.withLock { () -> [TimerHeap<DataTask>.Entry] in
            let now = MonotonicClock.now()
            var due: [TimerHeap<DataTask>.Entry] = []
            while let entry = timers.popDue(at: now) { due.append(entry) }
            timerSourceTime = .max
            if let next = timers.earliest { setTimerSource(for: next, now: now) }
            return due
        }
        for entry in due {
            switch entry.kind {
            case .deadline: settle(entry.owner, with: .failure(.deadlineExceeded(seconds: entry.seconds)))
            case .stall: checkForStall(of: entry.owner, threshold: entry.seconds)
            }
        }
    }

    /// How many timers are set, for tests: every running task's, and none of an ended one.
    var timerCount: Int { lock.withLock { timers.count } }
}
