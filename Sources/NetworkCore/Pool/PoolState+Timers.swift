import Foundation

/// The tasks' timers (deadlines, stall checks, retry waits: one heap of due times, with one dispatch
/// timer set by the pool for the earliest) and the scheduler's pause, resume and priorities.
extension PoolState {
    // MARK: Timers

    /// Sets the task's timer of `kind` for `seconds` after `now` (at once if not positive), replacing the
    /// one it had. Arms the pool's timer if this one is the earliest.
    mutating func setTimer(
        _ kind: TimerKind, of key: TaskKey, after seconds: TimeInterval, at now: UInt64, into effects: inout Effects
    ) {
        let (sum, overflow) = now.addingReportingOverflow(MonotonicClock.nanoseconds(seconds))
        let time = overflow ? UInt64.max : sum
        timers.insert(time, for: key, kind: kind)
        if time < armedTime {
            armedTime = time
            effects.timer = time
        }
    }

    /// The pool's timer fired at `now`: every due entry acts (a deadline ends its task, a stall check
    /// looks at its task's progress, a retry's wait ends), and the timer is armed for the next.
    mutating func timersFired(at now: UInt64, into effects: inout Effects) {
        armedTime = .max
        while let entry = timers.popDue(at: now) {
            switch entry.kind {
            case .deadline:
                // A timer is taken out when its task ends: its record is there.
                guard let seconds = update(entry.key, { $0.deadline }) ?? nil else { continue }
                end(entry.key, with: .failure(.deadlineExceeded(seconds: seconds)), at: now, into: &effects)
            case .stall:
                guard let threshold = update(entry.key, { $0.stallThreshold }) ?? nil else { continue }
                checkForStall(entry.key, threshold: threshold, at: now, into: &effects)
            case .retry: retryDue(entry.key, at: now, into: &effects)
            }
        }
        if let next = timers.earliest, next < armedTime {
            armedTime = next
            effects.timer = next
        }
    }

    /// Reports the task once if, while its request or answer is moving, nothing has moved for `threshold`
    /// seconds (at least a millisecond); otherwise sets its check again for when that would be.
    mutating func checkForStall(
        _ key: TaskKey, threshold: TimeInterval, at now: UInt64, into effects: inout Effects
    ) {
        let limit = max(MonotonicClock.nanoseconds(threshold), 1_000_000)  // NaN too: a millisecond
        let state = update(key) { record -> (watching: Bool, idle: UInt64)? in
            // Once per task: a reported task is not watched again.
            guard !record.hasEnded, !record.stallReported else { return nil }
            let watching = record.isTransferring
            let idle = now &- record.meter.lastProgress
            if watching, idle >= limit { record.stallReported = true }
            return (watching, idle)
        }
        guard let (watching, idle) = state ?? nil else { return }
        if watching, idle >= limit {
            log(.stalled, key, at: now, into: &effects) { $0.silence = Double(idle) / 1e9 }
            return
        }
        // The next check comes when the silence would reach the threshold, which stays the same.
        setTimer(.stall, of: key, after: Double(watching ? limit - idle : limit) / 1e9, at: now, into: &effects)
    }

    /// How many timers are set (for tests: every running task's, none of an ended one's).
    var timerCount: Int { timers.count }

    // MARK: Scheduling

    /// The transport of the task `key` carries `count` requests to its host at once from now on: the host's
    /// limit when the pool follows its transport; waiting tasks start if it grew.
    mutating func capacity(_ count: Int, of key: TaskKey, at now: UInt64, into effects: inout Effects) {
        guard let host = update(key, { $0.host }) else { return }
        for next in scheduler.setCapacity(count, host: host) { dequeued(next, at: now, into: &effects) }
    }

    /// Nothing new starts until ``resume(at:into:)``; what runs goes on.
    mutating func pause() { scheduler.pause() }

    /// Tasks start again: as many waiting ones as the limits allow, by priority.
    mutating func resume(at now: UInt64, into effects: inout Effects) {
        for key in scheduler.resume() { dequeued(key, at: now, into: &effects) }
    }

    /// The network is gone or back, as the pool's ``ConnectivityMonitor`` says: while it is gone nothing new
    /// starts (tasks wait, their deadlines running) and a retry after a lost connection waits for it; once
    /// back, waiting tasks start as the limits allow, and those retries go at once.
    mutating func connectivity(_ connectivity: Connectivity, at now: UInt64, into effects: inout Effects) {
        for key in scheduler.setOffline(!connectivity.isReachable) { dequeued(key, at: now, into: &effects) }
        // Back: the attempts that waited for it go now.
        guard connectivity.isReachable, !retriesAwaitingNetwork.isEmpty else { return }
        let due = retriesAwaitingNetwork
        retriesAwaitingNetwork = []
        for key in due { retryDue(key, at: now, into: &effects) }
    }

    /// The running task with this id gets `priority`; if it waits in the queue, it moves to the back of
    /// that priority's line. Returns whether a task has this id.
    mutating func reprioritize(id: String, to priority: RequestPriority) -> Bool {
        guard let key = ids[id]?.key,
            let host = update(
                key,
                { record -> String in
                    record.priority = priority
                    return record.host
                })
        else { return false }
        _ = scheduler.reprioritize(key, host: host, to: priority)
        return true
    }
}
