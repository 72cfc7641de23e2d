import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One call tracked by a ``TaskPool``: its id, request, state, timing and outcome.
///
/// Two tasks are equal when their ids are. Read its properties at any time from any thread;
/// they change as the call goes on, and stop changing once ``state`` leaves ``State/running``.
public final class DataTask: @unchecked Sendable {  // mutable state is guarded by the owning pool's `lock`.
    /// Where a task is in its life.
    public enum State: String, Sendable, Hashable {
        /// Sent and not finished.
        case running
        /// Answered and accepted.
        case completed
        /// Ended with an error other than cancellation.
        case failed
        /// Cancelled.
        case cancelled
    }

    /// What a running task is doing now.
    public enum Phase: Sendable, Hashable, CustomStringConvertible {
        /// Interceptors are preparing the request.
        case preparing
        /// Waiting for a credential being renewed.
        case waitingForCredential
        /// Waiting for a slot: the pool's limits are reached, or it is paused.
        case queued
        /// Sent; no byte of the answer yet.
        case sending
        /// Body bytes are arriving.
        case receiving
        /// Waiting before sending attempt `attempt`.
        case backingOff(beforeAttempt: Int)
        /// The task has ended; see ``DataTask/state``.
        case ended

        /// `"sending"`, `"waiting for credential"`, `"backing off before attempt 2"`…
        public var description: String {
            switch self {
            case .queued: "queued"
            case .preparing: "preparing"
            case .waitingForCredential: "waiting for credential"
            case .sending: "sending"
            case .receiving: "receiving"
            case .backingOff(let attempt): "backing off before attempt \(attempt)"
            case .ended: "ended"
            }
        }
    }

    typealias Outcome = Result<Response, NetworkError>
    typealias Waiter = (token: UInt64, resumer: Resumer)

    /// How a caller waiting for the outcome is told: its suspended Swift task, or a completion handler.
    enum Resumer: Sendable, TaskWaiter {
        /// An `async` caller. Unchecked: the pool resumes it exactly once, as it does every waiter
        /// (a waiter is removed from the task under the lock before it is resumed), and a checked
        /// continuation would cost an allocation of its own on every send.
        case continuation(UnsafeContinuation<Outcome, Never>)
        /// The `async` caller whose send started the task's transfer: woken with the transport's answer,
        /// it closes the attempt, validates the answer and ends the task itself (see `TaskPool.finish`),
        /// on its own thread rather than on the session's queue; woken with the outcome if the task ends
        /// before the answer comes (a cancel, the deadline).
        case finisher(UnsafeContinuation<Wake, Never>)
        case handler(@Sendable (Outcome) -> Void)

        func resume(_ outcome: Outcome) {
            switch self {
            case .continuation(let continuation): continuation.resume(returning: outcome)
            case .finisher(let continuation): continuation.resume(returning: .ended(outcome))
            case .handler(let handler): handler(outcome)
            }
        }

        var isFinisher: Bool {
            if case .finisher = self { return true }
            return false
        }

        var isHandler: Bool {
            if case .handler = self { return true }
            return false
        }
    }

    /// What wakes a ``Resumer/finisher(_:)``: the task's outcome, or the answer to finish the task with.
    enum Wake: Sendable {
        case ended(Outcome)
        case answered(Answer)
    }

    /// A transport's answer to one attempt of a task, and when it came.
    struct Answer: Sendable {
        let result: Result<(Data, HTTPURLResponse), any Error>
        var attempt: Int
        var bytesSent: Int
        /// When the answer arrived, by `MonotonicClock`: the attempt's end.
        let time: UInt64
    }

    /// The callers waiting for the outcome, in the order they came.
    typealias Waiters = InlineFirstList<Waiter>

    struct Storage {
        /// The task's life: phase, attempts, waiters, runner, timers, outcome (see ``TaskStateMachine``).
        var machine = TaskStateMachine<Resumer>()
        var stallReported = false
        var lastProgress: UInt64 = 0
        var started: UInt64?
        var firstByte: UInt64?
        var attemptStart: UInt64 = 0
        var attemptFirstByte: UInt64?
        var attemptBytes = 0
        /// The attempt being sent, until its timing is closed: its number and the body bytes it sends.
        var openAttempt: (number: Int, bytesSent: Int)?
        var attemptTimings = InlineFirstList<TaskTimings.Attempt>()
        var bytesReceived = 0
        /// Body bytes of the request sent so far in the current attempt, and how many it has, when known.
        var bytesSent = 0
        var bytesToSend: Int?
        /// Where the current answer's body starts in the whole (a resumed download's kept bytes), and the
        /// whole's length when the answer named it.
        var receivedOffset = 0
        var bytesExpected: Int?
        /// Those following ``DataTask/progressUpdates``; ended with the task.
        var progressObservers: [AsyncStream<TransferProgress>.Continuation] = []
        /// Redirects followed, in every attempt.
        var redirects = 0
        /// When the task ended; set in `TaskPool.end`, the one place a task ends.
        var endTime: UInt64?
        /// The origin it is sent to (scheme, host and port), what the pool's per-host limit counts.
        var host = ""
        /// How soon it starts when tasks wait.
        var priority = RequestPriority.normal
        /// The request's URL redacted, made the first time an event or a row needs it.
        var redactedURL: String?
        /// It holds one of the pool's slots (it runs), or waits in the pool's queue for one.
        var holdsSlot = false
        var isQueued = false
        /// Where the task's deadline and stall check are in the pool's timer heap; -1 for none.
        var timerSlots: (deadline: Int32, stall: Int32) = (-1, -1)

        /// Whether the task has ended. Asked of `endTime`, a plain integer, rather than of the machine's
        /// state, whose every read copies a `Result` through its value witnesses.
        var hasEnded: Bool { endTime != nil }
        var outcome: Outcome? { machine.outcome }
        /// What it does now: waiting in the pool's queue, or its machine's phase.
        var phase: Phase { isQueued ? .queued : machine.phase }
        var attempts: Int { machine.attempts }
    }

    /// What performs a task: a Swift task, or, when nothing needs one, the transfer itself.
    enum Runner: Sendable {
        case task(Task<Void, Never>)
        case transfer(any TransportControl)

        func cancel() {
            switch self {
            case .task(let task): task.cancel()
            case .transfer(let transfer): transfer.cancel()
            }
        }
    }

    /// The task's id, unique among the pool's running tasks.
    public let id: String
    /// The request as built from the endpoint, with the pool's headers.
    public let request: URLRequest
    /// When the task started.
    public let startDate: Date
    /// The service that started it (the endpoint's ``Endpoint/service``), asked for only when shown.
    public var service: String { endpoint.service }
    /// The request's URL with credentials redacted, as events and rows show it: made once, when first asked.
    var redactedURL: String {
        if let made = lock.withLock({ storage.redactedURL }) { return made }
        let made = Redactor.default.redact(request.url)
        lock.withLock { storage.redactedURL = made }
        return made
    }
    /// The request as it goes on the wire before interceptors: with the validators of a stored answer
    /// that the cache is checking.
    var wireRequest: URLRequest {
        guard let cache, cache.validating != nil else { return request }
        return cache.conditional(request)
    }
    /// Boxed once, when the task is made, and shared with every transport context of the task.
    let endpoint: any Endpoint

    let sequence: UInt64
    let startTime: UInt64
    let lock: Lock
    /// Guarded by `lock`: every access holds it, so accesses never overlap, and the runtime's dynamic
    /// exclusivity check (a runtime call on each access from a closure, several per request) is left out.
    @exclusivity(unchecked) var storage = Storage()

    /// Where the response body goes: memory, a file, a stream.
    let delivery: Delivery
    /// The request body when it is not bytes in the request (a file).
    let upload: Upload
    /// What the pool's cache does with the task's answer, when it has a cache and the task may use it.
    let cache: CacheTransaction?

    init(
        id: String, request: URLRequest, endpoint: any Endpoint, sequence: UInt64, lock: Lock,
        delivery: Delivery = .memory, upload: Upload = .none, cache: CacheTransaction? = nil
    ) {
        self.id = id
        self.cache = cache
        self.delivery = delivery
        self.upload = upload
        self.endpoint = endpoint
        self.request = request
        self.sequence = sequence
        self.lock = lock
        startDate = Date()
        startTime = MonotonicClock.now()
        LiveObjects.created(.dataTask)
    }

    deinit { LiveObjects.destroyed(.dataTask) }

    /// Where the task is in its life.
    public var state: State {
        lock.withLock {
            switch storage.outcome {
            case nil: .running
            case .success: .completed
            case .failure(.cancelled): .cancelled
            case .failure: .failed
            }
        }
    }

    /// How many times the request has been sent, from 1.
    public var attempts: Int { lock.withLock { storage.attempts } }

    /// What the task is doing now: preparing, waiting for a credential, sending, receiving, backing off.
    public var phase: Phase { lock.withLock { storage.phase } }

    /// How soon it starts when tasks wait (see ``TaskPool/reprioritize(id:to:)``).
    public var priority: RequestPriority { lock.withLock { storage.priority } }

    /// Body bytes received so far.
    public var bytesReceived: Int { lock.withLock { storage.bytesReceived } }

    /// Redirects followed so far, in every attempt.
    public var redirects: Int { lock.withLock { storage.redirects } }

    /// How far the transfer has come now: bytes sent and received, what they should come to, the rate.
    public var progress: TransferProgress {
        lock.withLock { storage.progress(at: storage.endTime ?? MonotonicClock.now()) }
    }

    /// The task's progress as it changes: the current value at once, then each change (a reader that
    /// falls behind gets the newest), ending after the last value once the task has ended.
    ///
    /// ```swift
    /// for await progress in task.progressUpdates { bar.show(progress.fractionCompleted ?? 0) }
    /// ```
    public var progressUpdates: AsyncStream<TransferProgress> {
        AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            lock.withLock {
                continuation.yield(storage.progress(at: storage.endTime ?? MonotonicClock.now()))
                if storage.hasEnded {
                    continuation.finish()
                } else {
                    storage.progressObservers.append(continuation)
                }
            }
        }
    }

    /// When the task ended, or `nil` while it runs: ``startDate`` plus the task's monotonic duration
    /// (``elapsed``), so a change of the system clock while it ran does not show.
    public var endDate: Date? { lock.withLock { storage.endTime }.map { startDate.addingTimeInterval(offset($0)) } }

    /// Seconds since the task started, or its whole duration once it has ended.
    public var elapsed: TimeInterval {
        let end = lock.withLock { storage.endTime } ?? MonotonicClock.now()
        return MonotonicClock.seconds(from: startTime, to: end)
    }

    /// The accepted response, once the task has completed.
    public var response: Response? {
        lock.withLock {
            if case .success(let response) = storage.outcome { return response }
            return nil
        }
    }

    /// The error, once the task has failed or been cancelled.
    public var error: NetworkError? {
        lock.withLock {
            if case .failure(let error) = storage.outcome { return error }
            return nil
        }
    }

    /// The request method.
    public var method: String { request.httpMethod ?? "GET" }

    /// When each step happened, measured by the pool: queued, started, first byte, finished, each attempt.
    public var timings: TaskTimings {
        lock.withLock {
            TaskTimings(
                queuedAt: startDate, started: storage.started.map(offset), firstByte: storage.firstByte.map(offset),
                finished: storage.endTime.map(offset), attempts: Array(storage.attemptTimings))
        }
    }

    /// The task as a row of data: id, service, method, redacted URL, phase, attempt, elapsed, bytes.
    public var snapshot: TaskSnapshot {
        let (phase, attempts, bytes, redirects, progress) = lock.withLock {
            (
                storage.phase, storage.attempts, storage.bytesReceived,
                storage.redirects,
                storage.progress(at: storage.endTime ?? MonotonicClock.now())
            )
        }
        // A task checking a stored answer with the server says so (its request carries the validators).
        let validating = cache?.validating != nil && phase != .queued ? ", validating a stored answer" : ""
        return TaskSnapshot(
            id: id, service: service, method: method, url: redactedURL,
            phase: phase.description + validating, attempt: attempts, redirects: redirects, elapsed: elapsed,
            bytesReceived: bytes,
            progress: progress, startDate: startDate)
    }

    /// Seconds from the task's start to a monotonic time.
    func offset(_ time: UInt64) -> TimeInterval { MonotonicClock.seconds(from: startTime, to: time) }

    /// Where the body of `request`, an attempt of this task, comes from: its bytes, or the task's upload.
    func body(for request: URLRequest) -> RequestBody {
        if let bytes = request.httpBody { return .data(bytes) }
        return upload.body
    }

    /// Whether `other` is the same call as this task's, so that one answer may serve both: the same on
    /// the wire (method, URL, every header, credentials included, and body), and neither adapted by
    /// interceptors of its own endpoint, which could make the requests differ when sent (the pool's
    /// interceptors adapt both alike). `hasInterceptors`: whether `other`'s endpoint has its own.
    func isSameCall(as other: URLRequest, hasInterceptors: Bool) -> Bool {
        !hasInterceptors && endpoint.interceptors.isEmpty && delivery.isMemory && request.httpMethod == other.httpMethod
            && request.url == other.url && request.httpBody == other.httpBody
            && request.allHTTPHeaderFields == other.allHTTPHeaderFields
    }
}

extension DataTask: TimerHeapOwner {
    // Called by the pool's timer heap, which the pool's lock guards, as it does `storage`.
    func timerSlot(_ kind: TimerKind) -> Int? {
        let slot = kind == .deadline ? storage.timerSlots.deadline : storage.timerSlots.stall
        return slot < 0 ? nil : Int(slot)
    }

    func setTimerSlot(_ kind: TimerKind, _ slot: Int?) {
        let value = slot.map { Int32(truncatingIfNeeded: $0) } ?? -1
        switch kind {
        case .deadline: storage.timerSlots.deadline = value
        case .stall: storage.timerSlots.stall = value
        }
    }
}

extension DataTask: Hashable {
    /// Tasks are equal when their ids are.
    public static func == (lhs: DataTask, rhs: DataTask) -> Bool { lhs.id == rhs.id }

    /// Hashes the id.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

extension DataTask: CustomReflectable {
    /// What `dump` and debuggers show: the task's row (``snapshot``), credentials redacted.
    public var customMirror: Mirror { Mirror(self, children: ["snapshot": snapshot], displayStyle: .class) }
}

extension DataTask: CustomStringConvertible {
    /// `"movies.nowPlaying.page=1 GET https://…?api_key=<redacted>&page=1 running 12 ms"`, credentials redacted.
    public var description: String {
        "\(id) \(method) \(redactedURL) \(state.rawValue) \(Int((elapsed * 1000).rounded())) ms"
    }
}
