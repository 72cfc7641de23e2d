import Foundation

/// A socket's last messages each way, with the first bytes of each, for the live inspector (which redacts
/// and cuts them as it does bodies). Kept only by a pool with a ``PoolInspector``: the last
/// ``capacity`` messages, at most ``kept`` bytes of each.
struct RecentFrames: Sendable {
    /// One message as the inspector shows it.
    struct Frame: Sendable {
        /// Sent by the app (else received from the server).
        let sent: Bool
        let isText: Bool
        /// The payload's size.
        let size: Int
        let at: Date
        /// The payload's first bytes, at most `prefixLimit`.
        let prefix: Data
    }

    /// How many messages are kept, both ways together.
    static let capacity = 20
    /// How many bytes of each are kept, at most.
    static let kept = 1024

    /// The bytes kept of each message: 0 keeps nothing.
    let prefixLimit: Int
    private var ring: [Frame] = []
    private var next = 0

    init(prefixLimit: Int) {
        self.prefixLimit = min(max(0, prefixLimit), Self.kept)
    }

    /// Keeps `message`, letting the oldest go past ``capacity``; does nothing when no inspector watches.
    mutating func record(_ message: WebSocketMessage, sent: Bool, at date: Date) {
        guard prefixLimit > 0 else { return }
        let prefix: Data
        switch message {
        case .text(let text): prefix = Data(text.utf8.prefix(prefixLimit))
        // A copy, so that the kept bytes do not hold the whole message's storage.
        case .binary(let data): prefix = data.prefix(prefixLimit).withUnsafeBytes { Data($0) }
        }
        let frame = Frame(sent: sent, isText: message.isText, size: message.byteCount, at: date, prefix: prefix)
        if ring.count < Self.capacity {
            ring.append(frame)
        } else {
            ring[next] = frame
            next = (next + 1) % Self.capacity
        }
    }

    /// The messages kept, oldest first.
    var inOrder: [Frame] { Array(ring[next...] + ring[..<next]) }
}

extension WebSocketMessage {
    var isText: Bool {
        if case .text = self { return true }
        return false
    }
}
