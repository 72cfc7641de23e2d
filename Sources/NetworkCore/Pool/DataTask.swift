import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One call tracked by a ``TaskPool``: its id, request, state, timing and outcome.
///
/// Two tasks are equal when their ids are. Read its properties at any time from any thread;
/// they change as the call goes on, and stop changing once ``state`` leaves ``State/running``.
/// A task is a handle: what it reports is read from its pool's state each time.
public final class DataTask: @unchecked Sendable {
    // @unchecked Sendable: immutable; what changes about the task is in its pool's state, behind its lock.
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
        /// Waiting for the network: the pool's ``TaskPool/Configuration/connectivity`` monitor says it is
        /// gone. The task starts (or, after a lost connection, makes its next attempt) when it is back; its
        /// deadline runs meanwhile.
        case waitingForNetwork
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
            case .waitingForNetwork: "waiting for network"
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

    /// The task's id, unique among the pool's running tasks.
    public let id: String
    /// The request as built from the endpoint, with the pool's headers.
    public let request: URLRequest
    /// When the task started.
    public let startDate: Date
    /// The service that started it (the endpoint's ``Endpoint/service``), asked for only when shown.
    public var service: String { plan.endpoint.service }

    /// The task's key in its pool's state, and that state, where everything that changes about the task
    /// is kept (see ``PoolState``): every property below reads it there.
    let key: TaskKey
    let poolState: Locked<TaskPool.State>
    /// What the route needs to run the task: its endpoint, delivery, upload, cache, interceptors and limits.
    let plan: TaskPool.Plan

    init(
        id: String, key: TaskKey, poolState: Locked<TaskPool.State>, request: URLRequest, plan: TaskPool.Plan
    ) {
        self.id = id
        self.key = key
        self.poolState = poolState
        self.request = request
        self.plan = plan
        startDate = Date()
        LiveObjects.created(.dataTask)
    }

    deinit {
        // Its record goes with it (a running task's record holds it, so it has ended).
        poolState.withLock { [key] in $0.forget(key) }
        LiveObjects.destroyed(.dataTask)
    }

    /// The task as its pool's state holds it now.
    private var view: TaskPool.State.View {
        // A handle's record lives as long as the handle (see `PoolState.forget`).
        poolState.withLock { [key] in $0.view(key) }!
    }

    /// The request's URL with credentials redacted, as events and rows show it.
    var redactedURL: String { plan.redactedURL ?? Redactor.default.redact(request.url) }

    /// Where a redirect of the task goes, as events show it: redacted as a URL, and the request's own
    /// secret values scrubbed where the server put them into it.
    func redacted(redirectTo url: URL?) -> String {
        Redactor.default.scrub(Redactor.default.redact(url), secrets: Redactor.default.secrets(in: request))
    }

    /// Where the task is in its life.
    public var state: State {
        switch view.outcome {
        case nil: .running
        case .success: .completed
        case .failure(.cancelled): .cancelled
        case .failure: .failed
        }
    }

    /// How many times the request has been sent, from 1.
    public var attempts: Int { view.attempts }

    /// What the task is doing now: preparing, waiting for a credential, sending, receiving, backing off.
    public var phase: Phase { view.phase }

    /// How soon it starts when tasks wait (see ``TaskPool/reprioritize(id:to:)``).
    public var priority: RequestPriority { view.priority }

    /// Body bytes received so far.
    public var bytesReceived: Int { view.meter.bytesReceived }

    /// Redirects followed so far, in every attempt.
    public var redirects: Int { view.meter.redirects }

    /// How far the transfer has come now: bytes sent and received, what they should come to, the rate.
    public var progress: TransferProgress { view.meter.progress(at: MonotonicClock.now()) }

    /// The task's progress as it changes: the current value at once, then each change (a reader that
    /// falls behind gets the newest), ending after the last value once the task has ended.
    ///
    /// ```swift
    /// for await progress in task.progressUpdates { bar.show(progress.fractionCompleted ?? 0) }
    /// ```
    public var progressUpdates: AsyncStream<TransferProgress> {
        AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            // Told under the lock, so that no change the pool tells after it can come before it.
            poolState.withLock { [key] state in
                let (progress, ended) = state.observe(key, with: continuation, at: MonotonicClock.now())
                continuation.yield(progress)
                if ended { continuation.finish() }
            }
        }
    }

    /// When the task ended, or `nil` while it runs: ``startDate`` plus the task's monotonic duration
    /// (``elapsed``), so a change of the system clock while it ran does not show.
    public var endDate: Date? {
        let meter = view.meter
        return meter.endTime.map { startDate.addingTimeInterval(meter.offset($0)) }
    }

    /// Seconds since the task started, or its whole duration once it has ended.
    public var elapsed: TimeInterval { view.meter.elapsed(at: MonotonicClock.now()) }

    /// The accepted response, once the task has completed.
    public var response: Response? {
        if case .success(let response) = view.outcome { return response }
        return nil
    }

    /// The error, once the task has failed or been cancelled.
    public var error: NetworkError? {
        if case .failure(let error) = view.outcome { return error }
        return nil
    }

    /// The request method.
    public var method: String { request.httpMethod ?? "GET" }

    /// When each step happened, measured by the pool: queued, started, first byte, finished, each attempt.
    public var timings: TaskTimings { view.meter.timings(queuedAt: startDate) }

    /// The task as a row of data: id, service, method, redacted URL, phase, attempt, elapsed, bytes.
    public var snapshot: TaskSnapshot {
        let view = self.view
        let now = MonotonicClock.now()
        // A task checking a stored answer with the server says so (its request carries the validators).
        let waits = view.phase == .queued || view.phase == .waitingForNetwork
        let validating = plan.cache?.validating != nil && !waits ? ", validating a stored answer" : ""
        // A socket is "open" while its connection is, whatever bytes it has seen.
        let socket = plan.delivery?.activity
        let phase = socket?.isOpen == true && view.phase != .ended ? "open" : view.phase.description + validating
        var snapshot = TaskSnapshot(
            id: id, service: service, method: method, url: redactedURL, phase: phase, attempt: view.attempts,
            redirects: view.meter.redirects, elapsed: view.meter.elapsed(at: now),
            bytesReceived: view.meter.bytesReceived, progress: view.meter.progress(at: now), startDate: startDate)
        snapshot.socket = socket
        snapshot.protocolVersion = view.meter.protocolVersion
        return snapshot
    }

    /// A socket's last messages, for the live inspector.
    var recentFrames: [RecentFrames.Frame] { plan.delivery?.recentFrames ?? [] }

    /// Where the body of `request`, the first request of an attempt or a redirect's next one, comes from:
    /// its bytes, or the task's upload when its method has a body and `keepsUpload` (the method did not
    /// change to `GET` on the way).
    func body(for request: URLRequest, keepsUpload: Bool = true) -> RequestBody {
        if let bytes = request.httpBody { return .data(bytes) }
        guard keepsUpload, request.httpMethod != "GET", request.httpMethod != "HEAD" else { return .none }
        return plan.upload.body
    }

    /// Whether `other` is the same call as this task's, so that one answer may serve both: the same on
    /// the wire (method, URL, every header, credentials included, and body), and neither adapted by
    /// interceptors of its own endpoint, which could make the requests differ when sent (the pool's
    /// interceptors adapt both alike). `hasInterceptors`: whether `other`'s endpoint has its own.
    func isSameCall(as other: URLRequest, hasInterceptors: Bool) -> Bool {
        !hasInterceptors && plan.endpoint.interceptors.isEmpty && plan.delivery == nil
            && request.httpMethod == other.httpMethod
            && request.url == other.url && request.httpBody == other.httpBody
            && request.allHTTPHeaderFields == other.allHTTPHeaderFields
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
