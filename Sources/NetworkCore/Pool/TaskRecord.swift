import Foundation

/// A task's key in its pool's state: its slot among the records (see ``PoolState/Records``), and the slot's
/// generation, so that a key outlives nothing it named.
struct TaskKey: Hashable, Sendable, CustomStringConvertible {
    let slot: UInt32
    let generation: UInt32

    var description: String { "#\(slot).\(generation)" }
}

extension TaskKey: DenseKey {
    /// The task's slot in the records: unique among the tasks alive at once.
    var denseIndex: Int { Int(slot) }
}

/// A number of seconds, or none, in the 8 bytes of a `Double` (an optional one takes 16 in a record, with its
/// padding): none is a NaN with a payload of its own, which no arithmetic and no caller's `Double.nan` makes.
struct PackedSeconds {
    private static let none = Double(bitPattern: 0x7FF8_0000_5EC0_0DE5)
    private let stored: Double

    init(_ value: TimeInterval?) { stored = value ?? Self.none }

    var value: TimeInterval? { stored.bitPattern == Self.none.bitPattern ? nil : stored }
}

/// A caller waiting for a task's outcome, as the pool's state sees it.
protocol TaskWaiter {
    /// Whether it is an `async` caller: such a caller may be handed the transport's answer, to turn it
    /// into the task's outcome on its own thread (see ``PoolState/transferEnded(_:attempt:hop:received:status:at:)``).
    var isCaller: Bool { get }
}

/// Something running for a task that must stop when the task ends: a transfer, or a Swift task running
/// the interceptors. A class: a task's ``PoolState/Life`` then holds a reference, not an existential that
/// any value may fill, so records are copied and moved by plain code rather than through the runtime's type
/// metadata.
protocol Stoppable: AnyObject, Sendable {
    func stop()
}

/// The Swift task running a task's interceptors, as work to stop.
final class InterceptorWork: Stoppable {
    private let task: Task<Void, Never>

    init(_ task: Task<Void, Never>) { self.task = task }

    func stop() { task.cancel() }
}

/// What a task's end stops: its transfer (the transport's control), or its interceptors' work.
enum Work: Sendable {
    case transfer(any TransportControl)
    case interceptors(any Stoppable)

    func stop() {
        switch self {
        case .transfer(let control): control.cancel()
        case .interceptors(let work): work.stop()
        }
    }
}

extension PoolState {
    /// Where a task is in its life. Each case carries what that state owns: the transfer or interceptor
    /// work to stop when the task ends, the outcome once it has ended.
    enum Life {
        /// Waiting in the scheduler's queue for a slot.
        case queued
        /// Before an attempt: its request is being prepared by the interceptors (`work`, once it runs).
        case preparing(work: (any Stoppable)?)
        /// As `preparing`, while an interceptor waits for a credential being renewed.
        case waitingForCredential(work: (any Stoppable)?)
        /// An attempt's request is with the transport.
        case transferring(Transfer)
        /// The transport has answered; the answer is being turned into the attempt's outcome, by a caller
        /// or by the pool. `shown`: the phase the task shows meanwhile.
        case finishing(shown: DataTask.Phase)
        /// The attempt failed with `failure`; the interceptors decide whether to send again (`work`). (What
        /// the task ends with if they do not comes with their decision.) The failure is boxed: every record
        /// is as large as the largest case, and this, the rarest, would be the largest.
        case deciding(work: (any Stoppable)?, failure: FailedAttempt, shown: DataTask.Phase)
        /// Waiting before the next attempt (a retry timer).
        case backingOff
        /// Ended, with its outcome.
        case ended(Outcome)
    }

    /// An attempt's failure while the interceptors decide on a retry (see ``Life/deciding(work:failure:shown:)``).
    final class FailedAttempt: Sendable {
        let error: NetworkError

        init(_ error: NetworkError) { self.error = error }
    }

    /// One request of an attempt with the transport: `hop` 0 is the attempt's own, each redirect the pool
    /// follows is the next.
    struct Transfer {
        let attempt: Int
        let hop: Int
        /// What cancels it: the transport's control, once the transport has returned it.
        var control: (any TransportControl)?
        /// The answer was a redirect the pool follows: this hop is over, the next is to start.
        var redirected = false
        /// Whether body bytes have arrived: the task shows ``DataTask/Phase/receiving``.
        var receiving = false
    }

    /// One task's state. The pool keeps one for each task it tracks, so its fields are ordered to leave little
    /// padding between them: the eight-byte ones first, then `life`, then the small ones.
    struct Record {
        let id: String
        /// The origin the task is sent to, what the per-host limit counts.
        let host: String
        let key: TaskKey
        /// The order in which the pool made it: ``PoolState/activeTasks()`` lists oldest first.
        let sequence: UInt64
        /// The attempt under way or next, from 1.
        var attempt = 1
        /// The callers waiting, in the order they came. A caller handed the answer to finish the task
        /// keeps its place with no waiter until it waits again (see ``PoolState/attach(_:token:to:)``), so
        /// that the others' leaving does not cancel a task it is finishing.
        var waiters = InlineFirstList<(token: UInt32, waiter: Waiter?)>()
        /// The task's handle: held while the task runs, so that ``PoolState/activeTasks()`` can give it; let
        /// go (outside the lock) when the task ends.
        var handle: Handle?
        var meter: TaskMeter
        /// Those following the task's progress; ended with the task.
        var observers: [AsyncStream<TransferProgress>.Continuation] = []
        /// The request's URL redacted, kept once made.
        var redactedURL: String?
        var life: Life
        /// Whether it runs in one of the scheduler's slots (every task but an answer from the cache).
        let takesSlot: Bool
        var priority: RequestPriority
        var stallReported = false
        /// Ended, its end's effects not yet performed: a caller that comes now waits for them
        /// (``PoolState/settled(_:into:)``).
        var settling = false
        /// Whether it gave its slot back when its last transfer ended, before its own end (see
        /// ``PoolState/transferEnded(_:attempt:hop:received:status:freesSlot:at:into:)``).
        var slotFreed = false
        var nextToken: UInt32 = 0
        /// Seconds the whole task may take, and without a byte before it is reported stalled.
        let packedDeadline: PackedSeconds
        let packedStallThreshold: PackedSeconds

        var deadline: TimeInterval? { packedDeadline.value }
        var stallThreshold: TimeInterval? { packedStallThreshold.value }

        /// What a freed slot of ``Records`` holds: an ended record that owns nothing.
        static var vacant: Record {
            Record(
                id: "", host: "", key: TaskKey(slot: 0, generation: 0), sequence: 0, handle: nil,
                meter: TaskMeter(at: 0), life: .ended(.failure(.cancelled)), takesSlot: false, priority: .normal,
                packedDeadline: PackedSeconds(nil), packedStallThreshold: PackedSeconds(nil))
        }

        var outcome: Outcome? {
            if case .ended(let outcome) = life { return outcome }
            return nil
        }

        var hasEnded: Bool {
            if case .ended = life { return true }
            return false
        }

        var isQueued: Bool {
            if case .queued = life { return true }
            return false
        }

        /// What it does now, as ``DataTask/phase`` shows it.
        var phase: DataTask.Phase {
            switch life {
            case .queued: .queued
            case .preparing: .preparing
            case .waitingForCredential: .waitingForCredential
            case .transferring(let transfer): transfer.receiving ? .receiving : .sending
            case .finishing(let shown), .deciding(_, _, let shown): shown
            case .backingOff: .backingOff(beforeAttempt: attempt)
            case .ended: .ended
            }
        }

        /// Whether the stall detector watches it now: while its request or answer is moving.
        var isTransferring: Bool {
            if case .transferring = life { return true }
            return false
        }
    }

    /// What a task is, read whole: the public ``DataTask`` reads this.
    struct View {
        let phase: DataTask.Phase
        let outcome: Outcome?
        let attempts: Int
        let priority: RequestPriority
        let meter: TaskMeter
    }
}
