import Foundation

/// One running task at one moment, as data: what the pool's table shows, row by row.
///
/// ```swift
/// for row in pool.activeTaskSnapshots where row.elapsed > 5 { print("slow:", row.id, row.phase) }
/// ```
public struct TaskSnapshot: Hashable, Sendable, Codable {
    /// The task's id.
    public let id: String
    /// The service that started it (``Endpoint/service``), e.g. `"MovieService"`.
    public let service: String
    /// The request method.
    public let method: String
    /// The request URL, credentials redacted.
    public let url: String
    /// What it is doing: `"sending"`, `"waiting for credential"`, `"backing off before attempt 2"`…
    public let phase: String
    /// The attempt, from 1.
    public let attempt: Int
    /// Redirects followed so far, in every attempt.
    public let redirects: Int
    /// Seconds since it was queued.
    public let elapsed: TimeInterval
    /// Body bytes received so far, in this attempt and earlier ones.
    public let bytesReceived: Int
    /// The transfer's progress in this attempt: bytes sent and received, what they come to, the rate.
    public let progress: TransferProgress
    /// When it was queued.
    public let startDate: Date
    /// Its place in the pool's queue, from 1, while it waits (phase `"queued"`, or `"waiting for network"`);
    /// `nil` when it runs, or in a snapshot taken of the task alone (``DataTask/snapshot``).
    public var queuePosition: Int?
    /// For a WebSocket, its messages each way and whether it is open (its ``phase`` is then `"open"`);
    /// `nil` for any other task.
    public var socket: SocketActivity?
    /// The protocol its answer came in, as the transport read it: `HTTP/1.1`, `HTTP/2.0`; `nil` until an
    /// answer's head arrived, or when the transport does not say (`URLSessionTransport`).
    public var protocolVersion: String?

    /// The row as table cells: id, service, method, url, protocol, state, attempt, redirects, elapsed ms,
    /// bytes, progress (a socket's messages each way), rate.
    var cells: [String] {
        let share = progress.fractionCompleted.map { " (\(Int(($0 * 100).rounded(.down))) %)" } ?? ""
        return [
            id, service, method, url, protocolVersion ?? "-", phase + (queuePosition.map { " #\($0)" } ?? ""),
            String(attempt),
            String(redirects),
            String(Int((elapsed * 1000).rounded())), String(bytesReceived), socket?.summary ?? progress.summary + share,
            progress.bytesPerSecond > 0 ? TransferProgress.bytes(Int(progress.bytesPerSecond)) + "/s" : "-",
        ]
    }

    static let header = [
        "id", "service", "method", "url", "protocol", "state", "attempt", "redirects", "elapsed ms", "bytes",
        "progress", "rate",
    ]
}
