import Foundation

/// One task as a live view shows it: running, waiting or recently ended, credentials redacted.
///
/// A ``PoolInspector`` makes these: ``PoolInspector/inspection`` lists them without ``details``,
/// ``PoolInspector/task(id:)`` gives one with them.
/// ```swift
/// for task in inspector.inspection.recent where task.state == .failed {
///     print(task.id, task.error ?? "", task.timings.total ?? 0)
/// }
/// ```
public struct InspectedTask: Hashable, Sendable, Codable {
    /// Where the task is in its life.
    public enum State: String, Hashable, Sendable, Codable {
        /// Waiting in the pool's queue: for a slot, or for the network (its phase says which).
        case queued
        /// Sending, waiting for or receiving its answer, or waiting between attempts.
        case running
        /// Ended with an accepted answer.
        case finished
        /// Ended with an error other than cancellation.
        case failed
        /// Cancelled.
        case cancelled
    }

    /// Something that happened during the task, marked on its timeline.
    public struct Mark: Hashable, Sendable, Codable {
        /// What happened.
        public enum Kind: String, Hashable, Sendable, Codable {
            /// An attempt failed and another follows after a wait.
            case retry
            /// The credential was renewed while the task waited for it.
            case credentialRefreshed
            /// The server redirected.
            case redirect
            /// Nothing arrived for the pool's stall threshold.
            case stalled
            /// A WebSocket whose connection was lost opened again.
            case reconnected
        }

        /// What happened.
        public let kind: Kind
        /// When, in seconds since the task was queued (the clock of ``TaskTimings``).
        public let at: TimeInterval
        /// The attempt it happened in, from 1.
        public let attempt: Int
        /// What the event said: the error and the wait of a retry, where a redirect went; redacted.
        public let detail: String
    }

    /// A header, as a name and a value (``Redactor/placeholder`` for a credential).
    public struct Header: Hashable, Sendable, Codable {
        /// The header's name.
        public let name: String
        /// Its value, or ``Redactor/placeholder``.
        public let value: String
    }

    /// What a detail pane shows of one task: heads, bodies and a `curl` command, all redacted.
    public struct Details: Hashable, Sendable, Codable {
        /// The request's headers, as sent in the last attempt (with what interceptors added), sorted by name.
        public let requestHeaders: [Header]
        /// The request's body as text, its sensitive fields redacted; `nil` when it had none in memory
        /// (a file or stream upload, or one over the inspector's preview limit).
        public let requestBody: String?
        /// The response's headers, sorted by name; empty when no answer arrived.
        public let responseHeaders: [Header]
        /// The response body's first bytes as text, sensitive fields and the request's secrets
        /// redacted; `nil` when there was no body, or a note when it could not be shown safely.
        public let responseBody: String?
        /// The response body's size in bytes.
        public let responseBodySize: Int
        /// The request as a `curl` command, secrets redacted.
        public let cURL: String
        /// For a running WebSocket, its last messages each way, oldest first, their payloads redacted and
        /// cut as bodies are (the last 20, at most 1 KiB of each); `nil` for other tasks.
        public var recentMessages: [SocketMessage]?
    }

    /// A message of a WebSocket, as the detail pane shows it.
    public struct SocketMessage: Hashable, Sendable, Codable {
        /// Sent by the app, or received from the server.
        public let direction: Direction
        /// Whether it is a text message (else binary).
        public let isText: Bool
        /// Its payload's size in bytes.
        public let size: Int
        /// When it went.
        public let at: Date
        /// Its payload's first bytes as text, sensitive fields and the request's secrets redacted; a note
        /// for a binary message, or for a structured one cut short (which cannot be redacted field by field).
        public let payload: String

        /// Which way a message went.
        public enum Direction: String, Hashable, Sendable, Codable {
            /// From the app to the server.
            case sent
            /// From the server to the app.
            case received
        }
    }

    /// The task's id.
    public let id: String
    /// The service that started it.
    public let service: String
    /// The request method.
    public let method: String
    /// The request URL, credentials redacted.
    public let url: String
    /// Where it is in its life.
    public let state: State
    /// For a running task, what it is doing (``TaskSnapshot/phase``); `nil` once it has ended.
    public let phase: String?
    /// Its place in the queue, from 1, while it waits.
    public let queuePosition: Int?
    /// The HTTP status of its answer, when one arrived.
    public let statusCode: Int?
    /// Where the answer came from: the network or the cache.
    public let source: Response.Source?
    /// The error it ended with, redacted.
    public let error: String?
    /// Attempts made, from 1.
    public let attempts: Int
    /// Seconds since it was queued, or its whole duration once ended.
    public let elapsed: TimeInterval
    /// When each step happened: queue, each attempt's start, first byte and end.
    public let timings: TaskTimings
    /// Bytes sent and received in a running task's current attempt, what they come to, and the rate;
    /// `nil` once it has ended (each attempt's bytes are in ``timings``).
    public let progress: TransferProgress?
    /// Retries, credential renewals, redirects, stalls and reconnections, in order.
    public let marks: [Mark]
    /// For a running WebSocket, its messages each way and whether it is open; `nil` otherwise.
    public var socket: SocketActivity?
    /// The HTTP version its answer came in, as the transport read it (`HTTP/1.1`, `HTTP/2.0`); `nil` before
    /// an answer's head, or when the transport does not say (``TaskSnapshot/protocolVersion``).
    public var protocolVersion: String?
    /// Heads, bodies and `curl`, in ``PoolInspector/task(id:)`` only.
    public var details: Details?
}
