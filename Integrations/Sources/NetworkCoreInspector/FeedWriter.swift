import Foundation
import NIOConcurrencyHelpers
import NetworkCore

/// Writes the page's view as JSON: the document `JSONEncoder` makes of ``InspectorFeed`` (dates in
/// milliseconds since 1970), with every number to the microsecond (of a second, or of a millisecond for
/// dates), written byte by byte, at a fraction of the encoder's cost; and each ended task written once:
/// an ended task never changes, so its bytes are kept while the inspector keeps the task. A server sends
/// a view several times a second to each page.
final class FeedWriter: Sendable {
    /// The bytes of each ended task, by its id and when it was queued (an id can come back).
    private let ended = NIOLockedValueBox<[Key: [UInt8]]>([:])

    private struct Key: Hashable {
        let id: String
        let queuedAt: Date
    }

    /// The view as JSON.
    func feed(allowsCancel: Bool, inspection: PoolInspection) -> Data {
        let cached = ended.withLockedValue { $0 }
        var kept: [Key: [UInt8]] = [:]
        kept.reserveCapacity(inspection.recent.count)
        var out = Bytes(capacity: (inspection.active.count + inspection.recent.count) * 700 + 200)
        out.append(#"{"allowsCancel":"#)
        out.append(allowsCancel ? "true" : "false")
        out.append(#","inspection":{"takenAt":"#)
        out.number(inspection.takenAt.timeIntervalSince1970 * 1000)
        out.append(#","isPaused":"#)
        out.append(inspection.isPaused ? "true" : "false")
        out.append(#","isWaitingForNetwork":"#)
        out.append(inspection.isWaitingForNetwork ? "true" : "false")
        out.append(#","endedCount":"#)
        out.integer(inspection.endedCount)
        out.append(#","active":["#)
        for (index, task) in inspection.active.enumerated() {
            if index > 0 { out.append(",") }
            Self.task(task, to: &out)
        }
        out.append(#"],"recent":["#)
        for (index, task) in inspection.recent.enumerated() {
            if index > 0 { out.append(",") }
            let key = Key(id: task.id, queuedAt: task.timings.queuedAt)
            if let made = cached[key] ?? kept[key] {
                out.bytes.append(contentsOf: made)
                kept[key] = made
            } else {
                var made = Bytes(capacity: 700)
                Self.task(task, to: &made)
                out.bytes.append(contentsOf: made.bytes)
                kept[key] = made.bytes
            }
        }
        out.append("]}}")
        ended.withLockedValue { $0 = kept }
        return Data(out.bytes)
    }

    static func task(_ task: InspectedTask, to out: inout Bytes) {
        out.append(#"{"id":"#)
        out.string(task.id)
        out.append(#","service":"#)
        out.string(task.service)
        out.append(#","method":"#)
        out.string(task.method)
        out.append(#","url":"#)
        out.string(task.url)
        out.append(#","state":"#)
        out.string(task.state.rawValue)
        if let phase = task.phase {
            out.append(#","phase":"#)
            out.string(phase)
        }
        if let place = task.queuePosition {
            out.append(#","queuePosition":"#)
            out.integer(place)
        }
        if let status = task.statusCode {
            out.append(#","statusCode":"#)
            out.integer(status)
        }
        if let source = task.source {
            out.append(#","source":"#)
            out.string(source.rawValue)
        }
        if let error = task.error {
            out.append(#","error":"#)
            out.string(error)
        }
        out.append(#","attempts":"#)
        out.integer(task.attempts)
        out.append(#","elapsed":"#)
        out.number(task.elapsed)
        out.append(#","timings":"#)
        timings(task.timings, to: &out)
        if let progress = task.progress {
            out.append(#","progress":{"bytesSent":"#)
            out.integer(progress.bytesSent)
            if let toSend = progress.bytesToSend {
                out.append(#","bytesToSend":"#)
                out.integer(toSend)
            }
            out.append(#","bytesReceived":"#)
            out.integer(progress.bytesReceived)
            if let expected = progress.bytesExpected {
                out.append(#","bytesExpected":"#)
                out.integer(expected)
            }
            out.append(#","bytesPerSecond":"#)
            out.number(progress.bytesPerSecond)
            out.append("}")
        }
        if let socket = task.socket {
            out.append(#","socket":{"isOpen":"#)
            out.append(socket.isOpen ? "true" : "false")
            out.append(#","messagesSent":"#)
            out.integer(socket.messagesSent)
            out.append(#","bytesSent":"#)
            out.integer(socket.bytesSent)
            out.append(#","messagesReceived":"#)
            out.integer(socket.messagesReceived)
            out.append(#","bytesReceived":"#)
            out.integer(socket.bytesReceived)
            if let last = socket.lastActivity {
                out.append(#","lastActivity":"#)
                out.number(last.timeIntervalSince1970 * 1000)
            }
            out.append("}")
        }
        out.append(#","marks":["#)
        for (index, mark) in task.marks.enumerated() {
            if index > 0 { out.append(",") }
            out.append(#"{"kind":"#)
            out.string(mark.kind.rawValue)
            out.append(#","at":"#)
            out.number(mark.at)
            out.append(#","attempt":"#)
            out.integer(mark.attempt)
            out.append(#","detail":"#)
            out.string(mark.detail)
            out.append("}")
        }
        out.append("]}")
    }

    private static func timings(_ timings: TaskTimings, to out: inout Bytes) {
        out.append(#"{"queuedAt":"#)
        out.number(timings.queuedAt.timeIntervalSince1970 * 1000)
        if let started = timings.started {
            out.append(#","started":"#)
            out.number(started)
        }
        if let firstByte = timings.firstByte {
            out.append(#","firstByte":"#)
            out.number(firstByte)
        }
        if let finished = timings.finished {
            out.append(#","finished":"#)
            out.number(finished)
        }
        out.append(#","attempts":["#)
        for (index, attempt) in timings.attempts.enumerated() {
            if index > 0 { out.append(",") }
            out.append(#"{"number":"#)
            out.integer(attempt.number)
            out.append(#","start":"#)
            out.number(attempt.start)
            if let firstByte = attempt.firstByte {
                out.append(#","firstByte":"#)
                out.number(firstByte)
            }
            out.append(#","end":"#)
            out.number(attempt.end)
            out.append(#","bytesSent":"#)
            out.integer(attempt.bytesSent)
            out.append(#","bytesReceived":"#)
            out.integer(attempt.bytesReceived)
            if let status = attempt.statusCode {
                out.append(#","statusCode":"#)
                out.integer(status)
            }
            out.append("}")
        }
        out.append("]}")
    }
}

/// The bytes of a JSON document being written.
struct Bytes {
    var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// Appends a literal as it is.
    mutating func append(_ literal: StaticString) {
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func integer(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        digits(value.magnitude)
    }

    /// Writes `value`'s decimal digits, no sign.
    private mutating func digits(_ value: UInt) {
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: more than a UInt's 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &buffer) { raw in
            var rest = value
            repeat {
                raw[23 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            bytes.append(contentsOf: raw[(24 - count)...])
        }
    }

    /// Appends a number to the millionth, with no trailing zeros; one that is not finite (which no view
    /// holds) as 0.
    mutating func number(_ value: Double) {
        guard value.isFinite else { return bytes.append(UInt8(ascii: "0")) }
        guard abs(value) < 9e18 else { return integer(value < 0 ? .min : .max) }
        // The whole part and the fraction apart, so that a large number (a date in milliseconds) keeps
        // its fraction's digits.
        var whole = value.magnitude.rounded(.towardZero)
        var millionths = ((value.magnitude - whole) * 1_000_000).rounded()
        if millionths >= 1_000_000 {
            whole += 1
            millionths = 0
        }
        if value < 0 && (whole > 0 || millionths > 0) { bytes.append(UInt8(ascii: "-")) }
        digits(UInt(whole))
        var fraction = UInt(millionths)
        guard fraction > 0 else { return }
        bytes.append(UInt8(ascii: "."))
        var width = 6
        while fraction % 10 == 0 {
            fraction /= 10
            width -= 1
        }
        var scale: UInt = 1
        for _ in 1..<width { scale *= 10 }
        while scale > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(fraction / scale % 10))
            scale /= 10
        }
    }

    /// Appends a string, quoted, with quotes, backslashes, control characters and the two line separators
    /// JavaScript once refused escaped. Most strings need none of it and are copied whole.
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var plain = utf8.startIndex
            var index = utf8.startIndex
            while index < utf8.endIndex {
                let byte = utf8[index]
                var escaped: StaticString?
                var width = 1
                switch byte {
                case UInt8(ascii: "\""): escaped = "\\\""
                case UInt8(ascii: "\\"): escaped = "\\\\"
                case UInt8(ascii: "\n"): escaped = "\\n"
                case UInt8(ascii: "\r"): escaped = "\\r"
                case UInt8(ascii: "\t"): escaped = "\\t"
                case 0xE2 where index + 2 < utf8.endIndex && utf8[index + 1] == 0x80 && utf8[index + 2] == 0xA8:
                    escaped = "\\u2028"
                    width = 3
                case 0xE2 where index + 2 < utf8.endIndex && utf8[index + 1] == 0x80 && utf8[index + 2] == 0xA9:
                    escaped = "\\u2029"
                    width = 3
                default: break
                }
                if escaped == nil && byte >= 0x20 {
                    index += 1
                    continue
                }
                bytes.append(contentsOf: utf8[plain..<index])
                if let escaped {
                    append(escaped)
                } else {
                    append("\\u00")
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(hex[Int(byte >> 4)])
                    bytes.append(hex[Int(byte & 0xF)])
                }
                index += width
                plain = index
            }
            bytes.append(contentsOf: utf8[plain..<utf8.endIndex])
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
