import Foundation
import Logging
import NetworkCore

/// Writes every task event of a pool to a swift-log `Logger`, with structured metadata.
///
/// ```swift
/// let logger = SwiftLogNetworkLogger(logger: Logger(label: "com.example.catalog"))
/// let pool = TaskPool(configuration: .init(logger: logger))
/// ```
///
/// Each event is one log record at the event's level (started and redirected at `debug`; finished,
/// cancelled and credential renewals at `info`; retries and stalls at `warning`; failures at `error`),
/// its message the event's kind, method and URL, and its metadata (see ``metadata(of:)``) the task's id,
/// service, method, URL, status, attempt, duration and bytes. URLs and errors are redacted as in every
/// NetworkCore event: an API key in a query, a token in a header, never reach the log. Records below the
/// logger's `logLevel` cost a comparison.
public struct SwiftLogNetworkLogger: NetworkLogger {
    /// The logger records go to.
    public let logger: Logger

    /// Creates a logger that writes to `logger`.
    public init(logger: Logger = Logger(label: "NetworkCore")) {
        self.logger = logger
    }

    /// Writes `event` as one record, if the logger's level lets it through.
    public func log(_ event: TaskEvent) {
        let level = Self.level(of: event)
        guard logger.logLevel <= level else { return }
        logger.log(
            level: level, "\(event.kind.rawValue) \(event.method) \(event.url)", metadata: Self.metadata(of: event),
            source: "NetworkCore")
    }

    /// The swift-log level of an event's level.
    public static func level(of event: TaskEvent) -> Logger.Level {
        switch event.level {
        case .debug: .debug
        case .info: .info
        case .warning: .warning
        case .error: .error
        }
    }

    /// The metadata of a record: always `task.id`, `task.event`, `http.method`, `http.url` (redacted) and
    /// `task.attempt`; `task.service` when known; then, where the event has them, `http.status`,
    /// `task.duration_ms`, `http.response.bytes`, `task.retry_in_ms`, `http.redirect_url` (redacted) and
    /// `error` (the `NetworkError`'s description, which redacts what it quotes).
    public static func metadata(of event: TaskEvent) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "task.id": "\(event.taskID)",
            "task.event": "\(event.kind.rawValue)",
            "http.method": "\(event.method)",
            "http.url": "\(event.url)",
            "task.attempt": "\(event.attempt)",
        ]
        if !event.service.isEmpty { metadata["task.service"] = "\(event.service)" }
        if let status = event.statusCode { metadata["http.status"] = "\(status)" }
        if let duration = event.duration { metadata["task.duration_ms"] = "\(milliseconds(duration))" }
        if event.kind != .started { metadata["http.response.bytes"] = "\(event.bytesReceived)" }
        if let delay = event.delay { metadata["task.retry_in_ms"] = "\(milliseconds(delay))" }
        if let redirect = event.redirectURL { metadata["http.redirect_url"] = "\(redirect)" }
        if let error = event.error { metadata["error"] = "\(error)" }
        if let snapshot = event.snapshot { metadata["task.phase"] = "\(snapshot.phase)" }
        if let silence = event.silence { metadata["task.silence_ms"] = "\(milliseconds(silence))" }
        return metadata
    }

    private static func milliseconds(_ seconds: TimeInterval) -> Int { Int((seconds * 1000).rounded()) }
}
