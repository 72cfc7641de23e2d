import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How far a task's transfer has come: the request body sent, the answer's body received, what each
/// should come to, and the rate. Read it from ``DataTask/progress`` or follow it with
/// ``DataTask/progressUpdates``.
///
/// The figures are those of the current attempt: a retry starts them again, but a download that resumes
/// with `Range` goes on from the bytes it kept (they never go back unless the server sends the whole file
/// again), so `bytesReceived` and `bytesExpected` are of the whole file.
///
/// ```swift
/// try await pool.download(endpoint, to: file, id: "poster") { progress in
///     print(progress.fractionCompleted.map { "\(Int($0 * 100)) %" } ?? "\(progress.bytesReceived) bytes")
/// }
/// // Elsewhere, while it runs: `for await progress in pool.task(id: "poster")?.progressUpdates …`
/// ```
public struct TransferProgress: Hashable, Sendable, Codable {
    /// Request body bytes sent.
    public var bytesSent: Int
    /// The request body's length, when it is known (a stream of unknown length has none); `0` without a body.
    public var bytesToSend: Int?
    /// Body bytes of the answer received, those a resumed download kept included.
    public var bytesReceived: Int
    /// The answer's body length (`Content-Length`, or the whole file of a `206`), once its head has
    /// arrived and when the server named it.
    public var bytesExpected: Int?
    /// Bytes per second in the direction the transfer moves now: received since the answer's first byte,
    /// or, before it, sent since the attempt began. `0` until a byte has moved.
    public var bytesPerSecond: Double

    /// Creates a progress value.
    public init(
        bytesSent: Int = 0, bytesToSend: Int? = nil, bytesReceived: Int = 0, bytesExpected: Int? = nil,
        bytesPerSecond: Double = 0
    ) {
        self.bytesSent = bytesSent
        self.bytesToSend = bytesToSend
        self.bytesReceived = bytesReceived
        self.bytesExpected = bytesExpected
        self.bytesPerSecond = bytesPerSecond
    }

    /// The share of the answer received, from 0 to 1, once its length is known; while the request body
    /// is still being sent, the share of it sent. `nil` when neither length is known.
    public var fractionCompleted: Double? {
        if let expected = bytesExpected {
            return expected == 0 ? 1 : min(1, Double(bytesReceived) / Double(expected))
        }
        if bytesReceived == 0, let total = bytesToSend, total > 0 {
            return min(1, Double(bytesSent) / Double(total))
        }
        return nil
    }

    /// `"1.2 MB of 4.0 MB"` for the answer, or for the body while it is sent; `"-"` before a byte has moved.
    var summary: String {
        if bytesReceived > 0 || bytesExpected != nil {
            return Self.bytes(bytesReceived) + (bytesExpected.map { " of " + Self.bytes($0) } ?? "")
        }
        if bytesSent > 0 || (bytesToSend ?? 0) > 0 {
            return "sent " + Self.bytes(bytesSent) + (bytesToSend.map { " of " + Self.bytes($0) } ?? "")
        }
        return "-"
    }

    /// `"812 B"`, `"1.2 KB"`, `"3.4 MB"`, `"1.0 GB"`: powers of 1000, as file sizes are shown.
    package static func bytes(_ count: Int) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f", value) + " " + units[unit]
    }

    /// The extent of the answer with `head`: the bytes of the whole body that come before this answer's
    /// (the start of a `206`'s range) and the whole body's length, when the server named it.
    /// `length` is the head's `expectedContentLength`, which its receiver has read.
    static func extent(of head: ResponseHead, length: Int64) -> (offset: Int, total: Int?) {
        if head.statusCode == 206, let range = ContentRange(head.value(forHTTPHeaderField: "Content-Range")) {
            return (range.first, range.complete ?? range.last + 1)
        }
        return (0, length >= 0 ? Int(length) : nil)
    }
}
