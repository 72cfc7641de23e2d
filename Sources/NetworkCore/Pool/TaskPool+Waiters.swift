/// The callers waiting for a task's outcome: each is resumed exactly once (see ``TaskStateMachine``).
extension TaskPool {
    /// Awaits the task's outcome; `finishing`: as its finisher, ending the task with the transport's
    /// answer when that comes first (see ``DataTask/Resumer/finisher(_:)``). Cancelling the calling
    /// Swift task withdraws this caller (it gets `.cancelled`); the task itself is cancelled when no
    /// caller is left.
    func wait(for task: DataTask, finishing: Bool) async -> DataTask.Outcome {
        guard finishing else {
            // Ended already (an answer from the cache): no suspension, and no hop back to an executor.
            if let outcome = lock.withLock({ task.storage.outcome }) { return outcome }
            return await suspend(on: task, as: DataTask.Resumer.continuation)
        }
        switch await suspend(on: task, as: DataTask.Resumer.finisher) {
        case .ended(let outcome): return outcome
        case .answered(let answer): return finish(task, with: answer)
        }
    }

    /// Awaits the task's outcome as ``wait(for:finishing:)`` does, telling `progress` every change of the
    /// task's progress meanwhile (the newest, when it falls behind), the last of them before returning.
    func wait(
        for task: DataTask, finishing: Bool, progress: (@Sendable (TransferProgress) -> Void)?
    ) async -> DataTask.Outcome {
        guard let progress else { return await wait(for: task, finishing: finishing) }
        let updates = task.progressUpdates
        let reporter = Task {
            for await value in updates { progress(value) }
        }
        let outcome = await wait(for: task, finishing: finishing)
        // This caller may have left a task that others still wait for: stop telling it then.
        if !lock.withLock({ task.storage.hasEnded }) { reporter.cancel() }
        await reporter.value
        return outcome
    }

    /// Waits among the task's waiters, resumed through `resumer`, until the pool resumes it.
    private func suspend<Value>(
        on task: DataTask, as resumer: (UnsafeContinuation<Value, Never>) -> DataTask.Resumer
    ) async -> Value {
        let token = nextToken()
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                addWaiter(to: task, token: token, resumer: resumer(continuation))
                if Task.isCancelled { withdraw(token, from: task) }
            }
        } onCancel: {
            withdraw(token, from: task)
        }
    }

    /// Resumes `resumer` once with the task's outcome: now if it has ended, else when it ends.
    func addWaiter(to task: DataTask, token: UInt64, resumer: DataTask.Resumer) {
        if let outcome = lock.withLock({ task.storage.machine.add((token, resumer)) }) { resumer.resume(outcome) }
    }

    private func withdraw(_ token: UInt64, from task: DataTask) {
        guard let withdrawn = lock.withLock({ task.storage.machine.withdraw(token) }) else { return }
        if withdrawn.wasLast { settle(task, with: .failure(.cancelled)) }
        withdrawn.resumer.resume(.failure(.cancelled))
    }
}
