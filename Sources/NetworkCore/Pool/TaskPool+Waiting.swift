/// The callers waiting for a task's outcome: each is resumed exactly once (see ``PoolState``).
extension TaskPool {
    /// Awaits the outcome of the task `sent` registered, beginning its first attempt first, if it is the
    /// caller's to begin. The caller may be handed the transport's answer to turn
    /// into the attempt's outcome (see ``finish(_:with:)``); if the task goes on (a retry), it waits
    /// again. Cancelling the calling Swift task withdraws this caller (it gets `.cancelled`); the task
    /// itself is cancelled when no caller is left.
    func wait(for sent: Sent) async -> Outcome {
        // The first attempt begins before this caller waits, not from inside its continuation's closure: an
        // answer that comes at once (a refused connection) must not resume the continuation while the
        // closure still runs on this thread. Such an answer finds no caller, is finished where it came,
        // and the caller takes the outcome when it waits.
        if sent.begins { beginAttempt(1, of: sent.task) }
        while true {
            let wake = await suspend(on: sent.task, token: sent.token)
            switch wake {
            case .ended(let outcome): return outcome
            case .finish(let answer): if let outcome = finish(sent.task, with: answer) { return outcome }
            }
        }
    }

    /// Awaits the outcome as ``wait(for:)`` does, telling `progress` every change of the task's progress
    /// meanwhile (the newest, when it falls behind), the last of them before returning.
    func wait(for sent: Sent, progress: (@Sendable (TransferProgress) -> Void)?) async -> Outcome {
        guard let progress else { return await wait(for: sent) }
        let updates = sent.task.progressUpdates
        let reporter = Task {
            for await value in updates { progress(value) }
        }
        let outcome = await wait(for: sent)
        // This caller may have left a task that others still wait for: stop telling it then.
        if sent.task.state == .running { reporter.cancel() }
        await reporter.value
        return outcome
    }

    /// Waits among the task's waiters with `token` until the pool resumes it.
    private func suspend(on task: DataTask, token: UInt32) async -> Wake {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                if let outcome = state.withLock({ $0.attach(.caller(continuation), token: token, to: task.key) }) {
                    return continuation.resume(returning: .ended(outcome))
                }
                // Cancelled before it waited: the cancellation handler found nothing to withdraw.
                if Task.isCancelled { return withdraw(token, from: task) }
            }
        } onCancel: {
            withdraw(token, from: task)
        }
    }

    private func withdraw(_ token: UInt32, from task: DataTask) {
        mutate { state, effects in state.withdraw(token, from: task.key, at: MonotonicClock.now(), into: &effects) }
    }
}
