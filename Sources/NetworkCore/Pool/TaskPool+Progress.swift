import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a task's transfers report: attempts opened and closed, first byte, bytes each way, redirects;
/// and the stall detector that reads it.
extension TaskPool {
    /// The events a transport reports the task's attempt `number` to.
    func events(
        for task: DataTask, attempt number: Int, bytesSent: Int, completion: TransportEvents.Completion
    ) -> TransportEvents {
        TransportEvents(
            owner: .attempt(pool: self, task: task, number: number, bytesSent: bytesSent), completion: completion,
            delivery: task.delivery, redirectPolicy: task.endpoint.redirectPolicy ?? configuration.redirectPolicy,
            maximumResponseBytes: maximumResponseBytes(for: task.endpoint))
    }

    /// The most body bytes an answer to `endpoint` may have in memory: the endpoint's limit, else the pool's,
    /// at least 1.
    func maximumResponseBytes(for endpoint: any Endpoint) -> Int {
        max(1, endpoint.maximumResponseBytes ?? configuration.maximumResponseBytes)
    }

    /// Marks the start of an attempt on the task, sending `body`; returns the attempt's number.
    @inline(never)
    func openAttempt(of task: DataTask, body: RequestBody) -> Int {
        let length = body.length
        let kept = task.delivery.keptBytes
        return lock.withLock { () -> Int in
            let now = MonotonicClock.now()
            task.storage.started = task.storage.started ?? now
            task.storage.attemptStart = now
            task.storage.attemptFirstByte = nil
            task.storage.attemptBytes = 0
            task.storage.bytesSent = 0
            task.storage.bytesToSend = length
            // A download that asks for the rest goes on from what it kept, its whole length known.
            task.storage.receivedOffset = kept
            if kept == 0 { task.storage.bytesExpected = nil }
            task.storage.openAttempt = (task.storage.attempts, length ?? 0)
            task.storage.lastProgress = now
            _ = task.storage.machine.attemptOpened()
            return task.storage.attempts
        }
    }

    /// Records what the transport reported: first byte (the answer's `head`, when the transport gave it),
    /// body bytes, redirects. Returns whether the task still runs: once it has ended, reports are neither
    /// counted nor logged.
    func record(_ progress: TransportContext.Progress, of task: DataTask, head: HTTPURLResponse? = nil) -> Bool {
        switch progress {
        case .response:
            let extent = head.map(TransferProgress.extent(of:))
            return lock.withLock {
                guard task.storage.machine.progressed() else { return false }
                let now = MonotonicClock.now()
                task.storage.firstByte = task.storage.firstByte ?? now
                task.storage.attemptFirstByte = task.storage.attemptFirstByte ?? now
                // A new head in the attempt (a redirect followed by a task of its own) starts the body again.
                task.storage.bytesReceived -= task.storage.attemptBytes
                task.storage.attemptBytes = 0
                task.storage.receivedOffset = extent?.offset ?? 0
                task.storage.bytesExpected = extent?.total
                task.storage.lastProgress = now
                task.storage.publishProgress(at: now)
                return true
            }
        case .bytes(let count):
            return lock.withLock {
                guard task.storage.machine.received() else { return false }
                let now = MonotonicClock.now()
                task.storage.firstByte = task.storage.firstByte ?? now
                task.storage.attemptFirstByte = task.storage.attemptFirstByte ?? now
                task.storage.bytesReceived += count
                task.storage.attemptBytes += count
                task.storage.lastProgress = now
                task.storage.publishProgress(at: now)
                return true
            }
        case .redirect(let status, let url):
            let running = lock.withLock { () -> Bool in
                guard task.storage.machine.progressed() else { return false }
                task.storage.lastProgress = MonotonicClock.now()
                task.storage.redirects += 1
                return true
            }
            // A transport may still report after a cancel or the deadline; the task's events have ended.
            if running { log(.redirected, task, statusCode: status, redirectURL: Redactor.default.redact(url)) }
            return running
        }
    }

    /// Records that `total` bytes of the request's body have been sent, of `expected`.
    func recordSent(_ total: Int, expected: Int?, of task: DataTask) {
        lock.withLock {
            guard task.storage.machine.progressed() else { return }
            let now = MonotonicClock.now()
            task.storage.bytesSent = total
            if let expected { task.storage.bytesToSend = expected }
            task.storage.lastProgress = now
            task.storage.publishProgress(at: now)
        }
    }

    /// The task enters `phase` (preparing, waiting for a credential), unless it has ended.
    func enter(_ phase: DataTask.Phase, _ task: DataTask) {
        lock.withLock { task.storage.machine.enter(phase) }
    }

    /// Closes the attempt's timing at `time`; `received` is the body size when the transport returned one.
    /// If the task ended meanwhile, its attempt was closed then and stays as it was.
    @discardableResult
    func finishAttempt(
        _ number: Int, of task: DataTask, bytesSent: Int, received: Int?, status: Int?, at time: UInt64
    )
        -> TaskTimings.Attempt
    {
        lock.withLock {
            guard task.storage.openAttempt?.number == number else {
                return task.storage.attemptTimings.last { $0.number == number }
                    ?? TaskTimings.Attempt(
                        number: number, start: task.offset(task.storage.attemptStart), firstByte: nil,
                        end: task.offset(time), bytesSent: bytesSent, bytesReceived: received ?? 0,
                        statusCode: status)
            }
            return closeAttempt(of: task, received: received, status: status, at: time)
        }
    }

    /// Appends the open attempt's timing and closes it; call with `lock` held.
    @discardableResult
    func closeAttempt(
        of task: DataTask, received: Int?, status: Int?, at now: UInt64 = MonotonicClock.now()
    ) -> TaskTimings.Attempt {
        let open = task.storage.openAttempt ?? (task.storage.attempts, 0)
        let bytes = max(task.storage.attemptBytes, received ?? 0)
        // Transports that report no progress still count what they returned.
        task.storage.bytesReceived += bytes - task.storage.attemptBytes
        task.storage.attemptBytes = bytes
        let timing = TaskTimings.Attempt(
            number: open.number, start: task.offset(task.storage.attemptStart),
            firstByte: task.storage.attemptFirstByte.map(task.offset), end: task.offset(now),
            bytesSent: open.bytesSent, bytesReceived: bytes, statusCode: status)
        task.storage.attemptTimings.append(timing)
        task.storage.openAttempt = nil
        return timing
    }

    /// Reports the task once if, while sending or receiving, nothing has arrived for `threshold`
    /// seconds (at least a millisecond); otherwise sets its stall check again for when that would be.
    func checkForStall(of task: DataTask, threshold: TimeInterval) {
        let limit = max(MonotonicClock.nanoseconds(threshold), 1_000_000)  // NaN too: a millisecond
        let silence = lock.withLock { () -> UInt64? in
            guard !task.storage.hasEnded else { return nil }
            let phase = task.storage.machine.phase
            let watching = phase == .sending || phase == .receiving
            let idle = MonotonicClock.now() &- task.storage.lastProgress
            if watching, idle >= limit {
                task.storage.stallReported = true
                return idle
            }
            // The next check comes when the silence would reach the threshold, which stays the same.
            setTimer(.stall, of: task, after: Double(watching ? limit - idle : limit) / 1e9, for: threshold)
            return nil
        }
        if let silence { log(.stalled, task, snapshot: task.snapshot, silence: Double(silence) / 1e9) }
    }
}

extension DataTask.Storage {
    /// The transfer's progress at `now`, a monotonic time. The rate is measured to `now` while an attempt
    /// runs, is the last attempt's own once the task has ended, and is 0 between attempts.
    func progress(at now: UInt64) -> TransferProgress {
        // Between attempts (backing off, waiting for a credential) nothing moves: no end, no rate.
        let end: UInt64? = openAttempt != nil ? now : hasEnded ? lastProgress : nil
        var rate = 0.0
        if let end, let first = attemptFirstByte, attemptBytes > 0 {
            rate = Double(attemptBytes) / max(MonotonicClock.seconds(from: first, to: end), 0.001)
        } else if let end, bytesSent > 0 {
            rate = Double(bytesSent) / max(MonotonicClock.seconds(from: attemptStart, to: end), 0.001)
        }
        return TransferProgress(
            bytesSent: bytesSent, bytesToSend: bytesToSend, bytesReceived: receivedOffset + attemptBytes,
            bytesExpected: bytesExpected, bytesPerSecond: rate)
    }

    /// Tells those following the task's progress where it is now; those who stopped listening are dropped.
    /// Call with the pool's lock held: a yield only stores the value and wakes the reader elsewhere.
    mutating func publishProgress(at now: UInt64) {
        guard !progressObservers.isEmpty else { return }
        let progress = progress(at: now)
        progressObservers.removeAll { observer in
            if case .terminated = observer.yield(progress) { return true }
            return false
        }
    }

    /// The task has ended: its last progress is told, and every progress stream ends.
    mutating func finishProgress(at now: UInt64) {
        guard !progressObservers.isEmpty else { return }
        publishProgress(at: now)
        for observer in progressObservers { observer.finish() }
        progressObservers = []
    }
}
