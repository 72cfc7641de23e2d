import Foundation

/// A WebSocket's traffic as its task's row shows it (``TaskSnapshot/socket``, the live inspector): messages
/// and their payload bytes each way since it first opened, across reconnections, and when the last one
/// went either way.
///
/// ```swift
/// for row in pool.activeTaskSnapshots { if let socket = row.socket { print(row.id, socket.summary) } }
/// ```
public struct SocketActivity: Hashable, Sendable, Codable {
    /// Whether the socket is open now (not while it opens, or waits to open again).
    public var isOpen: Bool
    /// Messages sent.
    public var messagesSent: Int
    /// The payload bytes of the messages sent (before compression).
    public var bytesSent: Int
    /// Messages received.
    public var messagesReceived: Int
    /// The payload bytes of the messages received (after inflating).
    public var bytesReceived: Int
    /// When a message last went either way; `nil` before the first.
    public var lastActivity: Date?

    /// A socket that has sent and received nothing.
    public init(
        isOpen: Bool = false, messagesSent: Int = 0, bytesSent: Int = 0, messagesReceived: Int = 0,
        bytesReceived: Int = 0, lastActivity: Date? = nil
    ) {
        self.isOpen = isOpen
        self.messagesSent = messagesSent
        self.bytesSent = bytesSent
        self.messagesReceived = messagesReceived
        self.bytesReceived = bytesReceived
        self.lastActivity = lastActivity
    }

    /// "sent 3 (120 B), received 5 (2.0 KB)", as the table shows it.
    public var summary: String {
        "sent \(messagesSent) (\(TransferProgress.bytes(bytesSent))), "
            + "received \(messagesReceived) (\(TransferProgress.bytes(bytesReceived)))"
    }
}
