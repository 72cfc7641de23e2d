import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A task whose runner is its transfer alone: one attempt, no interceptors, a caller awaiting it.
extension TaskPool {
    /// Starts the task's one attempt on the transport with no Swift task of its own. The transport's
    /// answer (see ``answered(_:with:)``) goes to the caller that started the task, which finishes it on
    /// its own thread: a transport such as ``URLSessionTransport`` reports every transfer of its session
    /// on one queue, so what is done there for each limits how many requests a second the session carries.
    func transfer(_ task: DataTask) -> any TransportControl {
        let body = task.body(for: task.request)
        let number = openAttempt(of: task, body: body)
        let events = events(for: task, attempt: number, bytesSent: body.length ?? 0, completion: .pool)
        let control = configuration.transport.start(task.wireRequest, body: body, events: events)
        events.attach(control)
        return control
    }

    /// The transport answered the task's transfer: wake its finisher with the answer, or, with no
    /// finisher (the answer came before its caller waits, or that caller was cancelled while callers
    /// that joined still wait), finish the task here. A completion handler waiting is not called here,
    /// on the transport's thread (a session's one queue): the task is finished in a Swift task then.
    func answered(_ task: DataTask, with answer: DataTask.Answer) {
        switch lock.withLock({ task.storage.machine.answered() }) {
        case .resumeFinisher(.finisher(let continuation)): continuation.resume(returning: .answered(answer))
        case .resumeFinisher, .finish: finish(task, with: answer)
        case .finishElsewhere: Task { [self] in finish(task, with: answer) }
        case .drop: break
        }
    }

    /// Closes the attempt with the transport's answer, validates it and ends the task with it.
    /// - Returns: the task's outcome: this one, or the one that ended it first (a cancel, the deadline).
    @discardableResult
    func finish(_ task: DataTask, with answer: DataTask.Answer) -> DataTask.Outcome {
        let outcome = cacheFallback(for: outcome(of: answer, of: task, request: task.wireRequest), of: task)
        if settle(task, with: outcome, byRunner: true) { return outcome }
        return lock.withLock { task.storage.outcome } ?? outcome
    }
}
