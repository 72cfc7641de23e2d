import Foundation
import NetworkCore
import Tracing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Traces a pool's tasks with swift-distributed-tracing: a span for each task, a child client span for
/// each attempt, with OpenTelemetry's HTTP attributes, and the attempt's context injected into the
/// request it sends (a W3C `traceparent` with an OpenTelemetry tracer), so that the server's spans join
/// the caller's trace.
///
/// It is both a ``RequestInterceptor`` (it starts spans and injects the context as each attempt is
/// adapted) and a ``NetworkLogger`` (it ends them as the task's events say); add it to a configuration
/// with ``NetworkCore/TaskPool/Configuration/traced(by:)``, which puts it in both places:
/// ```swift
/// let pool = TaskPool(configuration: TaskPool.Configuration(interceptors: [RetryPolicy()]).traced())
/// ```
///
/// The task span is a child of the `ServiceContext` of the code that sends (a task-local value, so a
/// server handler's span becomes the parent of the calls it makes), named after the method
/// (`GET`), of kind `internal`. Each attempt's span is a `client` span named the same, with
/// `http.request.method`, `url.full` (redacted), `server.address`, `server.port`,
/// `http.request.resend_count` (from the second attempt), and, once it ends,
/// `http.response.status_code` and `error.type` (the status from 400 on, else the kind of failure). The
/// task span carries `networkcore.task.id`, `networkcore.service` and the number of attempts.
public final class RequestTracing: RequestInterceptor, NetworkLogger, @unchecked Sendable {
    // @unchecked Sendable: `open` is touched only under `lock`; spans are Sendable.
    private struct Open {
        let task: any Span
        /// The attempts' spans not ended yet, by attempt number. An attempt's span ends on the
        /// ``NetworkCore/TaskEvent/Kind/retrying`` event, which names the attempt to come, or when the task
        /// ends. They are kept by number because the next attempt can be adapted (after a short back-off)
        /// before the event of the retry reaches the logger.
        var attempts: [Int: any Span]
        /// The latest attempt adapted.
        var latest: Int
        /// The latest attempt's span, if it is open.
        var latestAttempt: (any Span)? { attempts[latest] }
    }

    private let chosenTracer: (any Tracer)?
    private let lock = NSLock()
    private var open: [String: Open] = [:]

    /// Creates a tracing that starts spans with `tracer`, or with the process's bootstrapped tracer
    /// (`InstrumentationSystem.tracer`) when none is given.
    public init(tracer: (any Tracer)? = nil) {
        chosenTracer = tracer
    }

    private var tracer: any Tracer { chosenTracer ?? InstrumentationSystem.tracer }

    /// Runs `body` under the lock (`NSLock.withLock` is newer than the package's Apple floor).
    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// How many tasks have spans open now: for tests and debugging.
    public var openTasks: Int { locked { open.count } }

    // MARK: RequestInterceptor

    /// Starts the task's span on its first attempt, and an attempt span on each; returns the request with
    /// the attempt's context injected into its headers.
    public func adapt(_ request: URLRequest, context: AttemptContext) async throws -> URLRequest {
        let tracer = tracer
        let method = context.method.rawValue
        let parent = ServiceContext.current ?? .topLevel
        let (task, replaced) = locked { () -> (any Span, Open?) in
            if context.attempt > 1 || context.adaptation > 1, let existing = open[context.taskID] {
                return (existing.task, nil)
            }
            // A task's first adaptation: a task of this id still open was replaced (`DuplicatePolicy.replace`).
            let replaced = open.removeValue(forKey: context.taskID)
            let span = tracer.startSpan(method, context: parent, ofKind: .internal)
            span.attributes["networkcore.task.id"] = context.taskID
            span.attributes["http.request.method"] = method
            if let url = request.url { span.attributes["url.full"] = Redactor.default.redact(url) }
            open[context.taskID] = Open(task: span, attempts: [:], latest: 0)
            return (span, replaced)
        }
        if let replaced { Self.end(replaced, status: nil, error: "replaced") }
        let attempt = tracer.startSpan(method, context: task.context, ofKind: .client)
        attempt.attributes["http.request.method"] = method
        if let url = request.url {
            attempt.attributes["url.full"] = Redactor.default.redact(url)
            if let host = url.host { attempt.attributes["server.address"] = host }
            if let port = url.port ?? (url.scheme == "https" ? 443 : url.scheme == "http" ? 80 : nil) {
                attempt.attributes["server.port"] = port
            }
        }
        if context.attempt > 1 { attempt.attributes["http.request.resend_count"] = context.attempt - 1 }
        let readapted = locked { () -> (any Span)? in
            guard var task = open[context.taskID] else { return nil }
            defer { open[context.taskID] = task }
            task.latest = max(task.latest, context.attempt)
            return task.attempts.updateValue(attempt, forKey: context.attempt)
        }
        // The same attempt adapted again (`context.adaptation`, a credential renewed meanwhile): that request
        // never went out.
        readapted?.end()
        var traced = request
        tracer.inject(attempt.context, into: &traced, using: HeaderInjector())
        return traced
    }

    // MARK: NetworkLogger

    /// Ends the attempt's span when the attempt is retried, and both spans when the task ends.
    public func log(_ event: TaskEvent) {
        switch event.kind {
        case .queued, .waitingForNetwork, .started, .stalled, .credentialRefreshed, .reconnected:
            if event.kind == .stalled || event.kind == .reconnected {
                locked { open[event.taskID]?.latestAttempt }?.addEvent(SpanEvent(name: event.kind.rawValue))
            }
        case .redirected:
            let attempt = locked { open[event.taskID]?.latestAttempt }
            attempt?.addEvent(
                SpanEvent(
                    name: "redirect",
                    attributes: [
                        "http.response.status_code": .int64(Int64(event.statusCode ?? 0)),
                        "url.full": .string(event.redirectURL ?? ""),
                    ]))
        case .retrying:
            // The event names the attempt to come; the one that failed is the one before.
            let failed = locked { open[event.taskID]?.attempts.removeValue(forKey: event.attempt - 1) }
            if let failed { Self.end(failed, status: event.statusCode, error: event.error.map(Self.errorType)) }
        case .finished, .failed, .cancelled:
            guard let ended = locked({ open.removeValue(forKey: event.taskID) }) else { return }
            ended.task.attributes["networkcore.service"] = event.service
            ended.task.attributes["networkcore.attempts"] = ended.latest
            let error =
                event.kind == .finished ? nil : event.kind == .cancelled ? "cancelled" : event.error.map(Self.errorType)
            Self.end(ended, status: event.statusCode, error: error)
        }
    }

    // MARK: Ending spans

    /// Ends the task's span and its attempts' with the task's end: the latest attempt's with its status. An
    /// earlier attempt still open was retried, and the retry's event has not come yet; it ends with no
    /// status.
    private static func end(_ open: Open, status: Int?, error: String?) {
        for (number, attempt) in open.attempts.sorted(by: { $0.key < $1.key }) {
            if number == open.latest { end(attempt, status: status, error: error) } else { attempt.end() }
        }
        end(open.task, status: status, error: error)
    }

    private static func end(_ span: any Span, status: Int?, error: String?) {
        if let status { span.attributes["http.response.status_code"] = status }
        let type = status.flatMap { $0 >= 400 ? String($0) : nil } ?? error
        if let type {
            span.attributes["error.type"] = type
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }

    /// The kind of failure, for `error.type`: the status from 400 on, `URLError`'s code name for the
    /// network, else the `NetworkError` case.
    static func errorType(_ error: NetworkError) -> String {
        if let status = error.statusCode, status >= 400 { return String(status) }
        switch error {
        case .timedOut, .deadlineExceeded: return "timeout"
        case .cancelled: return "cancelled"
        case .transport(let underlying):
            if let urlError = underlying as? URLError { return "url_error_\(urlError.code.rawValue)" }
            return "transport"
        case .decodingFailed: return "decoding_failed"
        case .authenticationFailed: return "authentication_failed"
        case .responseTooLarge: return "response_too_large"
        default: return "\(error)".prefix { $0 != "(" }.description
        }
    }
}

/// Sets the tracer's context fields as request headers.
struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into request: inout URLRequest) {
        request.setValue(value, forHTTPHeaderField: key)
    }
}

extension TaskPool.Configuration {
    /// This configuration with `tracing` added where it works: first among the interceptors (so that the
    /// context is in the request every later interceptor adapts) and beside the logger.
    public func traced(by tracing: RequestTracing = RequestTracing()) -> TaskPool.Configuration {
        var configuration = self
        configuration.interceptors.insert(tracing, at: 0)
        configuration.logger = configuration.logger.map { CombinedLogger([tracing, $0]) } ?? tracing
        return configuration
    }
}
