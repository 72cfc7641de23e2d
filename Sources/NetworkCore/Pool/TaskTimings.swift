import Foundation

/// When each step of a task happened, measured by the pool itself on every platform
/// (FoundationNetworking never delivers `URLSessionTaskMetrics`).
///
/// Times are seconds since the task was queued, from a monotonic clock, so they never go
/// backwards: `started ≤ firstByte ≤ finished`, and each attempt's `start ≤ firstByte ≤ end`.
public struct TaskTimings: Hashable, Sendable, Codable {
    /// One attempt: one request sent and answered (or failed).
    public struct Attempt: Hashable, Sendable, Codable {
        /// The attempt, from 1.
        public let number: Int
        /// When it was sent.
        public let start: TimeInterval
        /// When the response's status and headers arrived; `nil` if they never did.
        public let firstByte: TimeInterval?
        /// When it ended.
        public let end: TimeInterval
        /// Body bytes sent.
        public let bytesSent: Int
        /// Body bytes received.
        public let bytesReceived: Int
        /// The HTTP status, if the server answered.
        public let statusCode: Int?

        /// Seconds from sending to the end.
        public var duration: TimeInterval { end - start }
        /// Seconds from sending to the first byte (the server's "wait").
        public var timeToFirstByte: TimeInterval? { firstByte.map { $0 - start } }
    }

    /// When the task was queued (``TaskPool/send(_:id:)`` was called), by the wall clock.
    public let queuedAt: Date
    /// When the first attempt was sent.
    public let started: TimeInterval?
    /// When the first response arrived, in any attempt.
    public let firstByte: TimeInterval?
    /// When the task ended; `nil` while it runs.
    public let finished: TimeInterval?
    /// Every attempt so far, in order.
    public let attempts: [Attempt]

    /// Seconds from queued to finished; `nil` while the task runs.
    public var total: TimeInterval? { finished }
    /// Body bytes sent, over all attempts.
    public var bytesSent: Int { attempts.reduce(0) { $0 + $1.bytesSent } }
    /// Body bytes received, over all attempts.
    public var bytesReceived: Int { attempts.reduce(0) { $0 + $1.bytesReceived } }
}
