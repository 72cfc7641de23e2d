import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a task has measured: when each step happened and how many bytes moved, in every attempt. A
/// value kept in the task's record (see ``PoolState``); times are `MonotonicClock` readings.
struct TaskMeter {
    // Kept in every record, so kept small: unset times and unknown counts are `PackedOptional`s, and an
    // attempt's timings live out of line (a record is as large as this and every other field; the pool keeps
    // one for each task it tracks).

    /// When the task was made.
    let startTime: UInt64
    /// When its first attempt was sent, its first response head arrived, and it ended.
    @PackedOptional private(set) var started: UInt64? = nil
    @PackedOptional private(set) var firstByte: UInt64? = nil
    @PackedOptional private(set) var endTime: UInt64? = nil
    /// When anything last moved (a head, body bytes each way, a redirect): what the stall check reads.
    private(set) var lastProgress: UInt64
    /// The attempt being sent, until its timing is closed (0: none): its number and the body bytes it sends.
    private var openNumber = 0
    private var openBytesSent = 0
    private var attemptStart: UInt64 = 0
    @PackedOptional private var attemptFirstByte: UInt64? = nil
    private var attemptBytes = 0
    private(set) var attempts: [TaskTimings.Attempt] = []
    /// Body bytes received, in every attempt; of the request's body sent in this one, and how many it has.
    private(set) var bytesReceived = 0
    private var bytesSent = 0
    @PackedOptional private var bytesToSend: Int? = nil
    /// Where the current answer's body starts in the whole (a resumed download's kept bytes), and the
    /// whole's length when the answer named it.
    private var receivedOffset = 0
    @PackedOptional private var bytesExpected: Int? = nil
    /// Redirects followed, in every attempt.
    private(set) var redirects = 0
    /// The protocol of the last response head, as the transport read it (`HTTP/2.0`), if it said.
    private(set) var protocolVersion: String?

    private var open: (number: Int, bytesSent: Int)? {
        get { openNumber == 0 ? nil : (openNumber, openBytesSent) }
        set { (openNumber, openBytesSent) = newValue.map { ($0.number, $0.bytesSent) } ?? (0, 0) }
    }

    init(at now: UInt64) {
        startTime = now
        lastProgress = now
    }

    /// Whether an attempt is open.
    var isAttemptOpen: Bool { open != nil }

    /// Attempt `number` is sent, with `bodyLength` bytes of body, continuing a body of which `kept`
    /// bytes were received before (a download that asks for the rest).
    mutating func openAttempt(_ number: Int, bodyLength: Int?, kept: Int, at now: UInt64) {
        started = started ?? now
        attemptStart = now
        attemptFirstByte = nil
        attemptBytes = 0
        bytesSent = 0
        bytesToSend = bodyLength
        receivedOffset = kept
        if kept == 0 { bytesExpected = nil }
        open = (number, bodyLength ?? 0)
        lastProgress = now
    }

    /// A response head arrived, in `version` of HTTP, whose body is `extent` of the whole. A new head in
    /// the attempt (a redirect followed) starts the body again.
    mutating func head(extent: (offset: Int, total: Int?), version: String? = nil, at now: UInt64) {
        protocolVersion = version ?? protocolVersion
        firstByte = firstByte ?? now
        attemptFirstByte = attemptFirstByte ?? now
        bytesReceived -= attemptBytes
        attemptBytes = 0
        receivedOffset = extent.offset
        bytesExpected = extent.total
        lastProgress = now
    }

    /// `count` body bytes arrived.
    mutating func received(_ count: Int, at now: UInt64) {
        firstByte = firstByte ?? now
        attemptFirstByte = attemptFirstByte ?? now
        bytesReceived += count
        attemptBytes += count
        lastProgress = now
    }

    /// `total` bytes of the request's body are sent, of `expected` when known.
    mutating func sent(_ total: Int, expected: Int?, at now: UInt64) {
        bytesSent = total
        if let expected { bytesToSend = expected }
        lastProgress = now
    }

    /// The server redirected, and the pool follows.
    mutating func redirected(at now: UInt64) {
        redirects += 1
        lastProgress = now
    }

    /// Closes the open attempt at `now`: `received` is the body's size when the transport returned it
    /// whole, `status` the answer's status. Returns its timing.
    @discardableResult
    mutating func closeAttempt(received: Int?, status: Int?, at now: UInt64) -> TaskTimings.Attempt {
        let number = open?.number ?? (attempts.last?.number ?? 0) + 1
        let bytes = max(attemptBytes, received ?? 0)
        // Transports that report no progress still count what they returned.
        bytesReceived += bytes - attemptBytes
        attemptBytes = bytes
        let timing = TaskTimings.Attempt(
            number: number, start: offset(attemptStart), firstByte: attemptFirstByte.map(offset), end: offset(now),
            bytesSent: open?.bytesSent ?? 0, bytesReceived: bytes, statusCode: status)
        attempts.append(timing)
        open = nil
        return timing
    }

    /// The task ends at `now`: an attempt still open ends with it.
    mutating func end(at now: UInt64) {
        if open != nil { closeAttempt(received: nil, status: nil, at: now) }
        endTime = now
    }

    /// Seconds from the task's start to `time`.
    func offset(_ time: UInt64) -> TimeInterval { MonotonicClock.seconds(from: startTime, to: time) }

    /// Seconds since the start at `now`, or the task's whole duration once it has ended.
    func elapsed(at now: UInt64) -> TimeInterval { offset(endTime ?? now) }

    /// The transfer's progress at `now`. The rate is measured to `now` while an attempt runs, is the last
    /// attempt's own once the task has ended, and is 0 between attempts.
    func progress(at now: UInt64) -> TransferProgress {
        let end: UInt64? = open != nil ? now : endTime != nil ? lastProgress : nil
        var rate = 0.0
        if let end, let first = attemptFirstByte, attemptBytes > 0 {
            rate = Double(attemptBytes) / max(MonotonicClock.seconds(from: first, to: end), 0.001)
        } else if let end, bytesSent > 0 {
            rate = Double(bytesSent) / max(MonotonicClock.seconds(from: attemptStart, to: end), 0.001)
        }
        return TransferProgress(
            bytesSent: bytesSent, bytesToSend: bytesToSend, bytesReceived: receivedOffset + attemptBytes,
            bytesExpected: bytesExpected, bytesPerSecond: rate)
    }

    /// When each step happened, as the public ``TaskTimings``.
    func timings(queuedAt: Date) -> TaskTimings {
        TaskTimings(
            queuedAt: queuedAt, started: started.map(offset), firstByte: firstByte.map(offset),
            finished: endTime.map(offset), attempts: attempts)
    }
}

/// An optional integer in the integer's own bytes (an optional one takes twice as many in a record, with its
/// padding): `nil` is `Value.max`, which no time or count the meter keeps reaches.
@propertyWrapper
struct PackedOptional<Value: FixedWidthInteger> {
    private var stored: Value

    init(wrappedValue: Value?) { stored = wrappedValue ?? .max }

    var wrappedValue: Value? {
        get { stored == .max ? nil : stored }
        set { stored = newValue ?? .max }
    }
}
