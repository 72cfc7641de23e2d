import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Keeps what a live view of running pools needs: their running and waiting tasks, the tasks that
/// ended most recently with their timings, heads and body previews, and a stream of their events.
/// Credentials are redacted in everything it gives out.
///
/// Give it to the pools to watch; nothing is inspected unless it is given one. The
/// `NetworkCoreInspector` product serves it to a browser.
/// ```swift
/// let inspector = PoolInspector(historyLimit: 200)
/// let pool = TaskPool(configuration: .init(inspector: inspector))
/// // … send through the pool …
/// for task in inspector.inspection.active { print(task.id, task.phase ?? "", task.elapsed) }
/// if let failed = inspector.inspection.recent.first(where: { $0.state == .failed }) {
///     print(inspector.task(id: failed.id)?.details?.cURL ?? "")
/// }
/// ```
/// What it costs a pool: as it is told of a task's end, it keeps the task's timings, its request, its
/// response's head and the first ``bodyPreviewLimit`` bytes of its body (no copy when the body is
/// smaller); redaction and the rest happen only when someone looks.
public final class PoolInspector: NetworkLogger, @unchecked Sendable {
    // @unchecked Sendable: every `var` below is read and written under `lock` only; the rest is immutable.

    /// The most ended tasks kept; older ones are forgotten.
    public let historyLimit: Int
    /// The most bytes of a body kept for its preview.
    public let bodyPreviewLimit: Int
    /// What is hidden in URLs, headers and bodies.
    public let redactor: Redactor

    private let lock = Lock()
    private var pools: [WeakPool] = []
    /// The ended tasks, oldest first, as a ring of at most `historyLimit`: `next` is where the next goes.
    private var history: [Record] = []
    private var next = 0
    private var endedCount = 0
    /// Retries, renewals, redirects and stalls of running tasks, by task id, until they end.
    private var marks: [String: [InspectedTask.Mark]] = [:]
    private var subscribers: [Int: AsyncStream<TaskEvent>.Continuation] = [:]
    private var nextSubscriber = 0
    private var changes: UInt64 = 0

    /// The most marks kept for one task: a task retried for ever keeps its first ones.
    static let marksPerTask = 64

    /// Creates an inspector that keeps the last `historyLimit` ended tasks (100 unless told; at least 1),
    /// with the first `bodyPreviewLimit` bytes of each body (64 KiB unless told).
    public init(historyLimit: Int = 100, bodyPreviewLimit: Int = 64 << 10, redactor: Redactor = .default) {
        self.historyLimit = max(1, historyLimit)
        self.bodyPreviewLimit = max(0, bodyPreviewLimit)
        self.redactor = redactor
    }

    /// Watches `pool` too; a pool given this inspector in its configuration calls it itself.
    func attach(_ pool: TaskPool) {
        lock.withLock {
            pools.removeAll { $0.pool == nil }
            pools.append(WeakPool(pool: pool))
        }
    }

    private var livePools: [TaskPool] { lock.withLock { pools.compactMap(\.pool) } }

    // MARK: Events

    /// Takes one event of a watched pool: marks it on its task, keeps the task once it has ended, and
    /// passes it to every stream from ``events(bufferingNewest:)``.
    public func log(_ event: TaskEvent) {
        let mark = Self.mark(for: event)
        let record = Self.ends(event.kind) ? Record(event, previewLimit: bodyPreviewLimit) : nil
        let listeners = lock.withLock { () -> [AsyncStream<TaskEvent>.Continuation] in
            changes &+= 1
            if let mark {
                if marks[event.taskID, default: []].count < Self.marksPerTask {
                    marks[event.taskID, default: []].append(mark)
                }
            }
            if let record {
                record.marks = marks.removeValue(forKey: event.taskID) ?? []
                if history.count < historyLimit {
                    history.append(record)
                } else {
                    history[next] = record
                }
                next = (next + 1) % historyLimit
                endedCount += 1
            }
            return subscribers.isEmpty ? [] : Array(subscribers.values)
        }
        for listener in listeners { listener.yield(event) }
    }

    /// Every event of the watched pools from now on, as they happen. Each call makes a stream of its
    /// own; a consumer that falls behind loses the oldest events beyond `limit`. The stream ends when
    /// the consumer stops iterating it.
    public func events(bufferingNewest limit: Int = 1024) -> AsyncStream<TaskEvent> {
        let (stream, continuation) = AsyncStream<TaskEvent>.makeStream(bufferingPolicy: .bufferingNewest(max(1, limit)))
        let key = lock.withLock { () -> Int in
            nextSubscriber += 1
            subscribers[nextSubscriber] = continuation
            return nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            self?.lock.withLock { _ = self?.subscribers.removeValue(forKey: key) }
        }
        return stream
    }

    /// How many events have arrived so far: a view that polls redraws only when it has changed.
    public var changeCount: UInt64 { lock.withLock { changes } }

    // MARK: Looking

    /// The watched pools' running and waiting tasks, oldest first, and the ended ones, newest first.
    public var inspection: PoolInspection {
        let pools = livePools
        var active: [InspectedTask] = []
        var paused = false
        var offline = false
        for pool in pools {
            paused = paused || pool.isPaused
            offline = offline || pool.isWaitingForNetwork
            for (task, place) in pool.tasksInOrder() { active.append(inspect(task, queuePosition: place)) }
        }
        let (records, ended) = lock.withLock { (orderedHistory(), endedCount) }
        return PoolInspection(
            takenAt: Date(), isPaused: paused, isWaitingForNetwork: offline, active: active,
            recent: records.reversed().map(summary),
            endedCount: ended)
    }

    /// One task with its ``InspectedTask/details``: a running or waiting one, else the most recent
    /// ended one with this id still kept; `nil` when there is none. An id can come back once its task has
    /// ended: `queuedAt` (a task's ``TaskTimings/queuedAt``, to the millisecond) picks one of them.
    public func task(id: String, queuedAt: Date? = nil) -> InspectedTask? {
        let matches = { (date: Date) in queuedAt.map { abs($0.timeIntervalSince(date)) < 0.001 } ?? true }
        for pool in livePools {
            if let task = pool.task(id: id), matches(task.startDate) {
                var inspected = inspect(task, queuePosition: nil)
                inspected.details = details(request: task.request, response: nil, body: nil, bodySize: 0)
                if inspected.socket != nil {
                    inspected.details?.recentMessages = messages(task.recentFrames, request: task.request)
                }
                return inspected
            }
        }
        let kept = lock.withLock { orderedHistory().last { $0.id == id && matches($0.startedAt) } }
        guard let record = kept else { return nil }
        var inspected = summary(of: record)
        inspected.details = details(
            request: record.request, response: record.head, body: record.preview, bodySize: record.bodySize)
        return inspected
    }

    /// Cancels the running or waiting task with this id in whichever watched pool has it.
    /// - Returns: whether a task was cancelled.
    @discardableResult
    public func cancel(id: String) -> Bool {
        livePools.contains { $0.cancel(id: id) }
    }

    /// The ended tasks still kept, oldest first, as an HTTP Archive, redacted as everywhere else; bodies
    /// over ``bodyPreviewLimit`` are recorded by their size.
    public var har: HAR {
        let recorder = HARRecorder(redactor: redactor, bodyLimit: bodyPreviewLimit)
        for record in lock.withLock({ orderedHistory() }) {
            let attempt = record.timings?.attempts.last
            let wait = attempt.flatMap(\.timeToFirstByte) ?? 0
            let receive = attempt.map { $0.end - ($0.firstByte ?? $0.end) } ?? 0
            recorder.record(
                record.request, response: record.head, body: record.preview, bodySize: record.bodySize,
                error: record.error,
                startedAt: record.startedAt.addingTimeInterval(attempt?.start ?? 0), wait: wait, receive: receive)
        }
        return recorder.har
    }

    // MARK: Building the views

    private func orderedHistory() -> [Record] {
        history.count < historyLimit ? history : Array(history[next...] + history[..<next])
    }

    /// The phases of a task in the pool's queue.
    private static let waitingPhases: Set = [
        DataTask.Phase.queued.description, DataTask.Phase.waitingForNetwork.description,
    ]

    private func inspect(_ task: DataTask, queuePosition: Int?) -> InspectedTask {
        let snapshot = task.snapshot
        let marks = lock.withLock { self.marks[task.id] } ?? []
        var inspected = InspectedTask(
            id: task.id, service: task.service, method: task.method, url: snapshot.url,
            state: Self.waitingPhases.contains(snapshot.phase) ? .queued : .running, phase: snapshot.phase,
            queuePosition: queuePosition, statusCode: nil, source: nil, error: nil, attempts: snapshot.attempt,
            elapsed: snapshot.elapsed, timings: task.timings, progress: snapshot.progress, marks: marks, details: nil)
        inspected.socket = snapshot.socket
        inspected.protocolVersion = snapshot.protocolVersion
        return inspected
    }

    /// The record's row, made once, when first asked for.
    private func summary(of record: Record) -> InspectedTask {
        if let made = lock.withLock({ record.summary }) { return made }
        let error = record.error.map { error in
            redactor.scrub(String(describing: error), secrets: redactor.secrets(in: record.request))
        }
        let state: InspectedTask.State =
            switch record.kind {
            case .finished: .finished
            case .cancelled: .cancelled
            default: .failed
            }
        var made = InspectedTask(
            id: record.id, service: record.service, method: record.method, url: record.url, state: state,
            phase: nil, queuePosition: nil, statusCode: record.statusCode, source: record.source, error: error,
            attempts: record.attempts, elapsed: record.duration,
            timings: record.timings
                ?? TaskTimings(queuedAt: record.startedAt, started: nil, firstByte: nil, finished: nil, attempts: []),
            progress: nil, marks: lock.withLock { record.marks }, details: nil)
        made.protocolVersion = record.protocolVersion
        lock.withLock { record.summary = made }
        return made
    }

    private func details(
        request: URLRequest, response: HTTPURLResponse?, body: Data?, bodySize: Int
    )
        -> InspectedTask.Details
    {
        let secrets = redactor.secrets(in: request)
        let requestHeaders = redactor.redact(headers: request.allHTTPHeaderFields ?? [:], secrets: secrets)
        let responseHeaders = redactor.redact(headers: response?.headerFields ?? [:], secrets: secrets)
        let requestBody = request.httpBody.map { body in
            redactor.scrub(
                redactor.redact(body: body, contentType: request.value(forHTTPHeaderField: "Content-Type")),
                secrets: secrets)
        }
        return InspectedTask.Details(
            requestHeaders: Self.sorted(requestHeaders),
            requestBody: requestBody,
            responseHeaders: Self.sorted(responseHeaders),
            responseBody: body.flatMap { body in
                preview(
                    body, of: bodySize, limit: bodyPreviewLimit,
                    contentType: response?.value(forHTTPHeaderField: "Content-Type"), secrets: secrets)
            },
            responseBodySize: bodySize,
            cURL: request.cURLDescription(redactor: redactor))
    }

    /// A socket's last messages, each payload previewed as a body is; a binary one by its size alone.
    private func messages(_ frames: [RecentFrames.Frame], request: URLRequest) -> [InspectedTask.SocketMessage] {
        let secrets = redactor.secrets(in: request)
        return frames.map { frame in
            let payload =
                frame.isText
                ? preview(frame.prefix, of: frame.size, limit: frame.prefix.count, contentType: nil, secrets: secrets)
                    ?? ""
                : "<\(frame.size) bytes, binary>"
            return InspectedTask.SocketMessage(
                direction: frame.sent ? .sent : .received, isText: frame.isText, size: frame.size, at: frame.at,
                payload: payload)
        }
    }

    /// A body's first bytes (`limit` of them at most) as text, or a note saying why it is not shown: JSON
    /// and form bodies cut short cannot be redacted field by field, so they are not shown at all.
    private func preview(
        _ body: Data, of size: Int, limit: Int, contentType: String?, secrets: Set<String>
    ) -> String? {
        guard size > 0 else { return nil }
        let type = contentType?.lowercased() ?? ""
        if body.count < size {
            let structured =
                type.contains("json") || type.contains("x-www-form-urlencoded")
                || body.first.map { $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "[") } == true
            if structured || String(data: body, encoding: .utf8) == nil {
                return "<\(size) bytes, not shown: over the inspector's preview limit of \(limit) bytes>"
            }
        }
        let text = redactor.scrub(redactor.redact(body: body, contentType: contentType), secrets: secrets)
        return body.count < size ? text + "… <\(size - body.count) more bytes>" : text
    }

    private static func sorted(_ headers: [String: String]) -> [InspectedTask.Header] {
        headers.keys.sorted { $0.lowercased() < $1.lowercased() }.map {
            InspectedTask.Header(name: $0, value: headers[$0]!)
        }
    }

    private static func ends(_ kind: TaskEvent.Kind) -> Bool {
        kind == .finished || kind == .failed || kind == .cancelled
    }

    private static func mark(for event: TaskEvent) -> InspectedTask.Mark? {
        let kind: InspectedTask.Mark.Kind
        var detail = ""
        switch event.kind {
        case .retrying:
            kind = .retry
            let wait = event.delay.map { "retry in \(Int(($0 * 1000).rounded())) ms" } ?? "retry"
            detail = [event.statusCode.map(String.init), wait].compactMap { $0 }.joined(separator: ", ")
        case .credentialRefreshed: kind = .credentialRefreshed
        case .redirected:
            kind = .redirect
            detail = [event.statusCode.map(String.init), event.redirectURL.map { "to \($0)" }].compactMap { $0 }
                .joined(separator: " ")
        case .stalled: kind = .stalled
        case .reconnected: kind = .reconnected
        default: return nil
        }
        // A retry's event already counts the attempt to come; the mark belongs to the one that failed.
        let attempt = kind == .retry ? max(1, event.attempt - 1) : event.attempt
        return InspectedTask.Mark(kind: kind, at: event.duration ?? 0, attempt: attempt, detail: detail)
    }
}

extension PoolInspector {
    /// A pool the inspector watches, not kept alive by it.
    private struct WeakPool {
        weak var pool: TaskPool?
    }

    /// An ended task, as it was told of: what its row needs, and what its details need, bounded.
    private final class Record {
        // Read and written under the inspector's lock once it is in the history.
        let id: String
        let service: String
        let method: String
        let url: String
        let kind: TaskEvent.Kind
        let statusCode: Int?
        let source: Response.Source?
        let error: NetworkError?
        let attempts: Int
        let duration: TimeInterval
        let timings: TaskTimings?
        let startedAt: Date
        /// The request of the last attempt (with what interceptors added) when an answer arrived, else the
        /// task's; a body over the preview limit is left out.
        let request: URLRequest
        let head: HTTPURLResponse?
        /// The HTTP version of the answer, as the transport read it.
        let protocolVersion: String?
        let preview: Data?
        let bodySize: Int
        var marks: [InspectedTask.Mark] = []
        var summary: InspectedTask?

        init(_ event: TaskEvent, previewLimit: Int) {
            id = event.taskID
            service = event.service
            method = event.method
            url = event.url
            kind = event.kind
            statusCode = event.statusCode
            source = event.source
            error = event.kind == .finished ? nil : (event.error ?? (event.kind == .cancelled ? .cancelled : nil))
            attempts = event.attempt
            duration = event.duration ?? 0
            timings = event.timings
            startedAt = event.task?.startDate ?? event.date
            var request = event.response?.request ?? event.task?.request ?? URLRequest(url: URL(fileURLWithPath: "/"))
            if let body = request.httpBody, body.count > previewLimit { request.httpBody = nil }
            self.request = request
            head = event.response?.httpResponse
            protocolVersion = event.response?.head.httpVersion
            if let response = event.response, response.fileURL == nil {
                let body = response.body
                bodySize = body.count
                preview = body.count <= previewLimit ? body : Data(body.prefix(previewLimit))
            } else {
                bodySize = event.response?.fileURL.flatMap { RequestBody.file($0).length } ?? 0
                preview = nil
            }
        }
    }
}
