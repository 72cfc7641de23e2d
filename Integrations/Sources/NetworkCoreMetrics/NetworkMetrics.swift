import CoreMetrics
import Foundation
import NetworkCore

/// Records a pool's tasks as swift-metrics counters, timers and meters, by service, method and status
/// class, through whatever metrics backend the process bootstrapped (Prometheus, StatsD, OpenTelemetry…).
///
/// ```swift
/// let pool = TaskPool(configuration: .init(logger: NetworkMetrics()))
/// ```
///
/// It is a ``NetworkLogger``: give it to the pool as its logger, or beside another in a
/// ``CombinedLogger``. With the default `prefix` of `networkcore`, it records:
///
/// | metric | kind | dimensions |
/// | --- | --- | --- |
/// | `networkcore_requests_total` | counter, a task ended | service, method, status_class, outcome |
/// | `networkcore_request_duration` | timer, from start to end | service, method, status_class, outcome |
/// | `networkcore_response_bytes_total` | counter, body bytes received | service, method |
/// | `networkcore_failures_total` | counter, a task failed | service, method, error |
/// | `networkcore_retries_total` | counter, an attempt is retried | service, method |
/// | `networkcore_credential_refreshes_total` | counter, a task waited for a renewed credential | service |
/// | `networkcore_stalls_total` | counter, a task received nothing for the stall threshold | service, method |
/// | `networkcore_reconnections_total` | counter, a WebSocket opened again after losing its connection | service |
/// | `networkcore_tasks_in_flight` | meter, tasks started and not ended | service |
/// | `networkcore_tasks_queued` | meter, tasks waiting for a slot (the pool's limits, or paused) | service |
///
/// `status_class` is `1xx` to `5xx`, or `none` when no answer came; `outcome` is `finished`, `failed`
/// or `cancelled`; `error` names the ``NetworkError`` case (`http_status`, `timed_out`, `transport`…).
/// No dimension carries a URL or an id, so the number of series stays bounded.
public struct NetworkMetrics: NetworkLogger {
    /// What each metric's label starts with.
    public let prefix: String
    private let factory: (any MetricsFactory)?
    /// The ids of the tasks waiting in a pool's queue, so that one that ends there leaves the queued
    /// meter rather than the in-flight one.
    private let waiting = WaitingTasks()

    /// Creates a recorder whose metrics are named `prefix_…`, made by `factory` (the process's
    /// bootstrapped factory unless given).
    public init(prefix: String = "networkcore", factory: (any MetricsFactory)? = nil) {
        self.prefix = prefix
        self.factory = factory
    }

    /// Records what `event` says.
    public func log(_ event: TaskEvent) {
        let service = ("service", event.service.isEmpty ? "unknown" : event.service)
        let method = ("method", event.method)
        switch event.kind {
        case .queued, .waitingForNetwork:
            waiting.insert(event.taskID)
            meter("tasks_queued", [service]).increment()
        case .started:
            if waiting.remove(event.taskID) { meter("tasks_queued", [service]).decrement() }
            meter("tasks_in_flight", [service]).increment()
        case .redirected:
            break
        case .retrying:
            counter("retries_total", [service, method]).increment()
        case .credentialRefreshed:
            counter("credential_refreshes_total", [service]).increment()
        case .reconnected:
            counter("reconnections_total", [service]).increment()
        case .stalled:
            counter("stalls_total", [service, method]).increment()
        case .finished, .failed, .cancelled:
            if waiting.remove(event.taskID) {
                meter("tasks_queued", [service]).decrement()
            } else {
                meter("tasks_in_flight", [service]).decrement()
            }
            let ended = [
                service, method, ("status_class", Self.statusClass(event.statusCode)), ("outcome", event.kind.rawValue),
            ]
            counter("requests_total", ended).increment()
            if let duration = event.duration {
                timer("request_duration", ended).recordNanoseconds(Int64((duration * 1e9).rounded()))
            }
            if event.bytesReceived > 0 {
                counter("response_bytes_total", [service, method]).increment(by: event.bytesReceived)
            }
            if event.kind == .failed, let error = event.error {
                counter("failures_total", [service, method, ("error", Self.name(of: error))]).increment()
            }
        }
    }

    /// `2xx`, `4xx`…, or `none`.
    static func statusClass(_ status: Int?) -> String {
        guard let status, (100..<600).contains(status) else { return "none" }
        return "\(status / 100)xx"
    }

    /// The case of `error`, in snake case: a bounded set of values for a dimension.
    static func name(of error: NetworkError) -> String {
        switch error {
        case .invalidEndpoint: "invalid_endpoint"
        case .encodingFailed: "encoding_failed"
        case .transport: "transport"
        case .timedOut: "timed_out"
        case .deadlineExceeded: "deadline_exceeded"
        case .authenticationFailed: "authentication_failed"
        case .cancelled: "cancelled"
        case .httpStatus: "http_status"
        case .serverRefused: "server_refused"
        case .decodingFailed: "decoding_failed"
        case .duplicateTask: "duplicate_task"
        case .responseTooLarge: "response_too_large"
        case .fileAccessFailed: "file_access_failed"
        case .notCached: "not_cached"
        }
    }

    private func counter(_ name: String, _ dimensions: [(String, String)]) -> Counter {
        let label = "\(prefix)_\(name)"
        return factory.map { Counter(label: label, dimensions: dimensions, factory: $0) }
            ?? Counter(label: label, dimensions: dimensions)
    }

    private func timer(_ name: String, _ dimensions: [(String, String)]) -> CoreMetrics.Timer {
        let label = "\(prefix)_\(name)"
        return factory.map { CoreMetrics.Timer(label: label, dimensions: dimensions, factory: $0) }
            ?? CoreMetrics.Timer(label: label, dimensions: dimensions)
    }

    private func meter(_ name: String, _ dimensions: [(String, String)]) -> Meter {
        let label = "\(prefix)_\(name)"
        return factory.map { Meter(label: label, dimensions: dimensions, factory: $0) }
            ?? Meter(label: label, dimensions: dimensions)
    }
}

/// Task ids, behind a lock.
private final class WaitingTasks: @unchecked Sendable {
    // @unchecked Sendable: `ids` is only touched under `lock`.
    private let lock = NSLock()
    private var ids: Set<String> = []

    func insert(_ id: String) {
        lock.lock()
        ids.insert(id)
        lock.unlock()
    }

    /// Removes `id`; returns whether it was there.
    func remove(_ id: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return ids.remove(id) != nil
    }
}
