/// A caller waiting for a task's outcome, as the state machine sees it: whether it is the finisher,
/// the caller that ends the task with the transport's answer, and whether it is a completion handler.
protocol TaskWaiter {
    var isFinisher: Bool { get }
    var isHandler: Bool { get }
}

/// The life of one task as a value: each mutating method takes an event (a runner started, an
/// attempt opened, a head or chunk arrived, the transport answered, a caller came or withdrew, a retry
/// is due, the task ended by its answer, a cancel or its deadline) and returns what the pool is to do.
///
/// The pool keeps it in the task's storage, calls it with its lock held, and performs the actions after
/// letting go of the lock. Every guarantee of a task's end is here, where tests drive it through every
/// order of events: the outcome is set once ("ended" is final), each waiter is resumed exactly once
/// (by the end, at once if it comes after the end, or when it withdraws), and the runner is stopped
/// once, by whoever ends the task. (The task's timers are the pool's, taken out where the task ends.)
struct TaskStateMachine<Resumer: TaskWaiter> {
    typealias Waiter = (token: UInt64, resumer: Resumer)

    enum State {
        /// Not ended; the phase says what it does.
        case running
        /// The finisher has the transport's answer and is ending the task: it no longer waits among the
        /// waiters, yet the task is not abandoned when the last of them withdraws.
        case finishing
        case ended(DataTask.Outcome)
    }

    /// What ending the task leaves to do outside the lock: resume each waiter with the outcome, cancel
    /// the runner.
    struct Ending {
        let outcome: DataTask.Outcome
        let waiters: InlineFirstList<Waiter>
        var runner: DataTask.Runner?
    }

    /// What to do with the transport's answer (see ``answered()``).
    enum AnswerAction {
        /// Wake the finisher with it; it ends the task on its own thread.
        case resumeFinisher(Resumer)
        /// No finisher waits: end the task with it here.
        case finish
        /// No finisher waits and a completion handler does: end the task with it elsewhere than on the
        /// transport's thread, where the handler must not run.
        case finishElsewhere
        /// The task has ended: drop it.
        case drop
    }

    private(set) var state = State.running
    /// What the running task does now.
    private(set) var phase = DataTask.Phase.preparing
    /// The attempt under way or next, from 1.
    private(set) var attempts = 1
    private(set) var waiters = InlineFirstList<Waiter>()
    private(set) var runner: DataTask.Runner?

    /// Whether the task has ended.
    var hasEnded: Bool {
        if case .ended = state { return true }
        return false
    }

    /// The outcome, once ended.
    var outcome: DataTask.Outcome? {
        if case .ended(let outcome) = state { return outcome }
        return nil
    }

    // MARK: Events

    /// The runner is ready. Returns it back to be stopped if the task ended first (a transport answered
    /// at once, or a cancel came in between).
    mutating func started(runner: DataTask.Runner) -> DataTask.Runner? {
        guard !hasEnded else { return runner }
        self.runner = runner
        return nil
    }

    /// The phase changes (preparing, waiting for a credential); ignored once ended.
    mutating func enter(_ phase: DataTask.Phase) {
        guard !hasEnded else { return }
        self.phase = phase
    }

    /// An attempt was sent. Returns whether it counts (the task still runs).
    mutating func attemptOpened() -> Bool {
        guard !hasEnded else { return false }
        phase = .sending
        return true
    }

    /// The response head, a redirect or bytes sent arrived. Returns whether it counts.
    func progressed() -> Bool { !hasEnded }

    /// Body bytes arrived. Returns whether they count.
    mutating func received() -> Bool {
        guard !hasEnded else { return false }
        phase = .receiving
        return true
    }

    /// The interceptors retry: attempt `attempt` is due after a wait. Returns whether it counts.
    mutating func retrying(attempt: Int) -> Bool {
        guard !hasEnded else { return false }
        attempts = attempt
        phase = .backingOff(beforeAttempt: attempt)
        return true
    }

    /// The transport answered the attempt the finisher waits for.
    mutating func answered() -> AnswerAction {
        guard case .running = state else { return hasEnded ? .drop : .finish }
        guard let finisher = waiters.remove(where: { $0.resumer.isFinisher }) else {
            return waiters.contains(where: { $0.resumer.isHandler }) ? .finishElsewhere : .finish
        }
        state = .finishing
        return .resumeFinisher(finisher.resumer)
    }

    /// A caller waits for the outcome. Returns the outcome if the task has ended: resume it now.
    mutating func add(_ waiter: Waiter) -> DataTask.Outcome? {
        if let outcome { return outcome }
        waiters.append(waiter)
        return nil
    }

    /// The caller with `token` withdraws (its Swift task was cancelled). Returns it, to be resumed with
    /// `.cancelled`, and whether it was the last: then the task is abandoned, unless its finisher is
    /// ending it.
    mutating func withdraw(_ token: UInt64) -> (resumer: Resumer, wasLast: Bool)? {
        guard let waiter = waiters.remove(where: { $0.token == token }) else { return nil }
        guard case .running = state else { return (waiter.resumer, false) }
        return (waiter.resumer, waiters.isEmpty)
    }

    /// The task ends with `outcome`: its answer, a failure, a cancel or its deadline. Returns what to do,
    /// or `nil` if it had ended already.
    mutating func end(with outcome: DataTask.Outcome) -> Ending? {
        guard !hasEnded else { return nil }
        state = .ended(outcome)
        phase = .ended
        let ending = Ending(outcome: outcome, waiters: waiters, runner: runner)
        waiters = InlineFirstList()
        runner = nil
        return ending
    }
}
