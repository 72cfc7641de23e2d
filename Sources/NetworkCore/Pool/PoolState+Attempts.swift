import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A task's attempts: each is prepared (by the interceptors, if any), sent as one transfer or several
/// (each redirect the pool follows is the next), answered, turned into an outcome, and, when that is a
/// failure the interceptors may retry, decided on.
extension PoolState {
    /// What the transport's answer to a transfer comes to.
    enum Answered {
        /// The task has ended (a cancel, its deadline), or the transfer is not its current one: drop it.
        case dropped
        /// Turn the answer into the attempt's outcome and report it (``finished(_:attempt:with:retrying:at:into:)``):
        /// by this caller, on its own thread (it keeps its place among the waiters, empty, until it waits
        /// again); or, with no caller to do it, by the pool: `elsewhere` when a completion handler waits,
        /// which must not be called on the transport's thread.
        case finish(by: Waiter?, elsewhere: Bool, timing: TaskTimings.Attempt)
    }

    /// What an attempt's outcome comes to.
    enum Finished {
        /// The task has ended with this outcome.
        case ended(Outcome)
        /// The interceptors decide whether to send again: run them, then report with
        /// ``retryDecided(_:attempt:_:at:into:)``.
        case deciding(Handle)
    }

    /// What the interceptors decided after a failed attempt.
    enum Decision {
        /// The task ends with this outcome.
        case conclude(Outcome)
        /// The next attempt begins after this many seconds (0 or more).
        case retry(after: TimeInterval)
    }

    /// Which interceptor work a task runs: preparing an attempt's request, or deciding on a retry.
    enum WorkStage {
        case preparing
        case deciding
    }

    /// Interceptor work for the task's `attempt` runs (a Swift task): kept, to be stopped if the task ends;
    /// stopped at once when the task has ended already.
    mutating func workStarted(
        _ key: TaskKey, attempt: Int, stage: WorkStage, work: any Stoppable, into effects: inout Effects
    ) {
        let ended =
            update(key) { record -> Bool in
                if record.hasEnded { return true }
                guard record.attempt == attempt else { return false }
                switch (stage, record.life) {
                case (.preparing, .preparing(nil)): record.life = .preparing(work: work)
                case (.preparing, .waitingForCredential(nil)): record.life = .waitingForCredential(work: work)
                case (.deciding, .deciding(nil, let failure, let shown)):
                    record.life = .deciding(work: work, failure: failure, shown: shown)
                default: break  // the work is done already
                }
                return false
            } ?? true
        if ended { effects.stop(.interceptors(work)) }
    }

    /// An interceptor waits for a credential being renewed, for the task's `attempt`.
    mutating func waitingForCredential(_ key: TaskKey, attempt: Int) {
        update(key) { record in
            guard record.attempt == attempt else { return }
            switch record.life {
            case .preparing(let work): record.life = .waitingForCredential(work: work)
            case .deciding(let work, let failure, _):
                record.life = .deciding(work: work, failure: failure, shown: .waitingForCredential)
            default: break
            }
        }
    }

    /// An interceptor renewed the credential while the task waited for it.
    mutating func credentialRefreshed(_ key: TaskKey, at now: UInt64, into effects: inout Effects) {
        guard update(key, { $0.hasEnded }) == false else { return }
        log(.credentialRefreshed, key, at: now, into: &effects)
    }

    /// The request of the task's `attempt` (`hop` 0), or of a redirect the pool follows (the next hop),
    /// is about to go to the transport; the body has `bodyLength` bytes, and the answer continues `kept`
    /// bytes already received (a download asking for the rest). Returns whether to send it: not when the
    /// task has ended or has moved on.
    mutating func transferStarting(
        _ key: TaskKey, attempt: Int, hop: Int, bodyLength: Int?, kept: Int, at now: UInt64
    ) -> Bool {
        update(key) { record -> Bool in
            guard record.attempt == attempt else { return false }
            switch record.life {
            case .preparing, .waitingForCredential:
                guard hop == 0 else { return false }
                record.meter.openAttempt(attempt, bodyLength: bodyLength, kept: kept, at: now)
            case .transferring(let transfer):
                guard transfer.redirected, hop == transfer.hop + 1 else { return false }
            default:
                return false
            }
            record.life = .transferring(Transfer(attempt: attempt, hop: hop))
            return true
        } ?? false
    }

    /// The transport returned its control of the transfer: kept, to cancel the transfer if the task ends;
    /// cancelled at once when the task has ended already. (A transfer that is over already, answered before
    /// its transport returned, keeps nothing.)
    mutating func transferAttached(
        _ key: TaskKey, attempt: Int, hop: Int, control: any TransportControl, into effects: inout Effects
    ) {
        let ended =
            update(key) { record -> Bool in
                if record.hasEnded { return true }
                guard case .transferring(var transfer) = record.life, transfer.attempt == attempt,
                    transfer.hop == hop, !transfer.redirected
                else { return false }
                transfer.control = control
                record.life = .transferring(transfer)
                return false
            } ?? true
        if ended { effects.stop(.transfer(control)) }
    }

    /// Whether `transfer` is the task's current one.
    private static func isCurrent(_ record: borrowing Record, attempt: Int, hop: Int) -> Bool {
        guard case .transferring(let transfer) = record.life else { return false }
        return transfer.attempt == attempt && transfer.hop == hop && !transfer.redirected
    }

    /// What a transfer's report comes to: whether the transfer still counts (not once the task has ended),
    /// and the progress to tell those following the task, if anyone does.
    typealias Reported = (counts: Bool, progress: Progress?)

    /// The response's head arrived, in `version` of HTTP, its body `extent` of the whole.
    mutating func head(
        _ key: TaskKey, attempt: Int, hop: Int, extent: (offset: Int, total: Int?), version: String? = nil,
        at now: UInt64
    ) -> Reported {
        update(key) { record -> Reported in
            guard Self.isCurrent(record, attempt: attempt, hop: hop) else { return (false, nil) }
            record.meter.head(extent: extent, version: version, at: now)
            return (true, Self.progress(of: record, at: now))
        } ?? (false, nil)
    }

    /// `count` body bytes arrived.
    mutating func received(_ key: TaskKey, attempt: Int, hop: Int, count: Int, at now: UInt64) -> Reported {
        update(key) { record -> Reported in
            guard case .transferring(var transfer) = record.life, transfer.attempt == attempt, transfer.hop == hop,
                !transfer.redirected
            else { return (false, nil) }
            if !transfer.receiving {
                transfer.receiving = true
                record.life = .transferring(transfer)
            }
            record.meter.received(count, at: now)
            return (true, Self.progress(of: record, at: now))
        } ?? (false, nil)
    }

    /// `total` bytes of the request's body are sent, of `expected` when known.
    mutating func sent(
        _ key: TaskKey, attempt: Int, hop: Int, total: Int, expected: Int?, at now: UInt64
    ) -> Reported {
        update(key) { record -> Reported in
            guard Self.isCurrent(record, attempt: attempt, hop: hop) else { return (false, nil) }
            record.meter.sent(total, expected: expected, at: now)
            return (true, Self.progress(of: record, at: now))
        } ?? (false, nil)
    }

    /// The server redirected with `status` to `url`. `followed`: the transport followed it
    /// within the transfer; else the transfer has ended and the pool follows, with the next hop (see
    /// ``transferStarting(_:attempt:hop:bodyLength:kept:at:)``). Returns whether the task goes on.
    mutating func redirected(
        _ key: TaskKey, attempt: Int, hop: Int, status: Int, to url: URL?, byTransport followed: Bool,
        at now: UInt64, into effects: inout Effects
    ) -> Bool {
        let counts =
            update(key) { record -> Bool in
                guard Self.isCurrent(record, attempt: attempt, hop: hop) else { return false }
                record.meter.redirected(at: now)
                if !followed { record.life = .transferring(Transfer(attempt: attempt, hop: hop, redirected: true)) }
                return true
            } ?? false
        if counts {
            log(.redirected, key, at: now, into: &effects) { entry in
                entry.statusCode = status
                entry.redirectURL = url
            }
        }
        return counts
    }

    /// The transfer ended: with the answer's body (`received` bytes, `status`), or with an error (both
    /// `nil`). Closes the attempt's timing and says who turns the answer into the attempt's outcome.
    ///
    /// `freesSlot`: the task makes no other attempt whatever its answer (no retriers, or its last attempt,
    /// and no kind that opens it again), so its slot is given back now, and the next waiting task begins
    /// here, on the transport's thread, while this one is finished elsewhere: its connection gets its next
    /// request without waiting for the finisher's turn.
    mutating func transferEnded(
        _ key: TaskKey, attempt: Int, hop: Int, received: Int?, status: Int?, freesSlot: Bool = false,
        at now: UInt64, into effects: inout Effects
    ) -> Answered {
        var freed: String?
        let answered =
            update(key) { record -> Answered in
                guard Self.isCurrent(record, attempt: attempt, hop: hop) else { return .dropped }
                let shown = record.phase
                let timing = record.meter.closeAttempt(received: received, status: status, at: now)
                record.life = .finishing(shown: shown)
                if freesSlot, record.takesSlot, !record.slotFreed {
                    record.slotFreed = true
                    freed = record.host
                }
                if let caller = record.waiters.first(where: { $0.waiter?.isCaller == true }) {
                    _ = record.waiters.replace(where: { $0.token == caller.token }, with: (caller.token, nil))
                    return .finish(by: caller.waiter, elsewhere: false, timing: timing)
                }
                return .finish(by: nil, elsewhere: record.waiters.contains { $0.waiter != nil }, timing: timing)
            } ?? .dropped
        if let host = freed {
            for next in scheduler.release(host: host) { dequeued(next, at: now, into: &effects) }
        }
        return answered
    }

    /// The attempt's outcome, made from the transport's answer. `retrying`: the failure to ask the
    /// interceptors about (they may send again); `nil` when the outcome is final. A caller that finished
    /// the task and is told it goes on waits again (``attach(_:token:to:)``).
    mutating func finished(
        _ key: TaskKey, attempt: Int, with outcome: Outcome, retrying failure: NetworkError?, at now: UInt64,
        into effects: inout Effects
    ) -> Finished {
        let state = update(key) { record -> (ended: Outcome?, handle: Handle?) in
            if let ended = record.outcome { return (ended, nil) }
            guard case .finishing(let shown) = record.life, record.attempt == attempt, let failure else {
                return (nil, nil)
            }
            record.life = .deciding(work: nil, failure: FailedAttempt(failure), shown: shown)
            return (nil, record.handle)
        }
        guard let (ended, handle) = state else { return .ended(outcome) }
        if let ended { return .ended(ended) }
        if let handle { return .deciding(handle) }
        end(key, with: outcome, at: now, into: &effects)
        return .ended(outcome)
    }

    /// The interceptors decided after the failure of the task's `attempt`. A retry whose wait would end
    /// after the task's deadline ends it now, with ``NetworkError/deadlineExceeded(seconds:)``.
    mutating func retryDecided(
        _ key: TaskKey, attempt: Int, _ decision: Decision, at now: UInt64, into effects: inout Effects
    ) {
        let state = update(key) { record -> (failure: NetworkError, deadline: TimeInterval?, elapsed: TimeInterval)? in
            guard case .deciding(_, let failure, _) = record.life, record.attempt == attempt else { return nil }
            return (failure.error, record.deadline, record.meter.elapsed(at: now))
        }
        guard let (failure, deadline, elapsed) = state ?? nil else { return }
        switch decision {
        case .conclude(let outcome):
            end(key, with: outcome, at: now, into: &effects)
        case .retry(let wait):
            if let deadline, elapsed + wait >= deadline {
                end(key, with: .failure(.deadlineExceeded(seconds: deadline)), at: now, into: &effects)
                return
            }
            // The network is gone and took the attempt with it: the next one waits for its return, not
            // for the backoff (its deadline still runs).
            let awaitsNetwork = scheduler.isOffline && failure.lostTheNetwork
            let handle = update(key) { record -> Handle? in
                record.attempt += 1
                record.life = wait > 0 || awaitsNetwork ? .backingOff : .preparing(work: nil)
                return record.handle
            }
            log(.retrying, key, at: now, into: &effects) { entry in
                entry.error = failure
                entry.delay = awaitsNetwork ? nil : wait
            }
            if awaitsNetwork {
                retriesAwaitingNetwork.insert(key)
                log(.waitingForNetwork, key, at: now, into: &effects)
            } else if wait > 0 {
                setTimer(.retry, of: key, after: wait, at: now, into: &effects)
            } else if let handle = handle ?? nil {
                effects.begin(Begin(key: key, handle: handle, attempt: attempt + 1))
            }
        }
    }

    /// The task's `attempt` opened it again after it had been open (a socket's reconnection): logged.
    mutating func reopened(_ key: TaskKey, attempt: Int, at now: UInt64, into effects: inout Effects) {
        let current = update(key) { record in record.attempt == attempt && record.outcome == nil } ?? false
        if current { log(.reconnected, key, at: now, into: &effects) }
    }

    /// The wait before the task's next attempt is over: it begins.
    mutating func retryDue(_ key: TaskKey, at now: UInt64, into effects: inout Effects) {
        // Its wait ended while the network is gone: the attempt waits for it (see ``connectivity(_:at:into:)``).
        if scheduler.isOffline {
            if update(key, { record in if case .backingOff = record.life { true } else { false } }) == true {
                retriesAwaitingNetwork.insert(key)
            }
            return
        }
        let begin = update(key) { record -> Begin? in
            guard case .backingOff = record.life, let handle = record.handle else { return nil }
            record.life = .preparing(work: nil)
            return Begin(key: key, handle: handle, attempt: record.attempt)
        }
        if let begin = begin ?? nil { effects.begin(begin) }
    }
}
