import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One event of a Server-Sent Events stream (`text/event-stream`), as the WHATWG HTML standard
/// parses it.
public struct ServerSentEvent: Sendable, Hashable {
    /// The event's type: its `event:` field, `"message"` when it has none.
    public var event: String
    /// Its `data:` lines, joined with `\n`.
    public var data: String
    /// The last event id at this event: its own `id:`, or the last one before it in the stream.
    public var id: String?
    /// The reconnection time the server asked for with `retry:` up to this event, in seconds.
    public var retry: TimeInterval?

    /// Creates an event.
    public init(event: String = "message", data: String, id: String? = nil, retry: TimeInterval? = nil) {
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry
    }
}

/// Parses `text/event-stream` bytes into events: fields `event`, `data`, `id` and `retry`, comments
/// (lines that start with `:`), `\n`, `\r\n` and `\r` line breaks, multi-line data, a leading BOM.
/// An event is dispatched at a blank line; one left unfinished when the connection ends is dropped.
struct ServerSentEventParser: ChunkDecoder {
    private var lines: LineSplitter
    private var event = ""
    /// The event's `data:` lines so far, joined with `\n`.
    private var data = ""
    private var hasData = false
    private var sawFirstLine = false
    /// The last event id; it outlives connections (it is sent again as `Last-Event-ID`).
    private(set) var lastEventID: String?
    /// The reconnection time the server asked for, in seconds.
    private(set) var retry: TimeInterval?

    /// A parser whose lines and events may each hold up to `limit` bytes.
    init(limit: Int = .max) {
        lines = LineSplitter(limit: limit)
    }

    /// The events these bytes complete; throws ``NetworkError/responseTooLarge(limit:)`` when a line or an
    /// event's data grows past the limit.
    mutating func decode(_ bytes: Data) throws(NetworkError) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for line in try lines.lines(in: bytes) {
            if let event = try take(line) { events.append(event) }
        }
        return events
    }

    /// Whether an event was begun and not dispatched: the connection ended in the middle of it.
    var isMidEvent: Bool { lines.hasPending || hasData || !event.isEmpty }

    var isMidElement: Bool { isMidEvent }

    static var reconnects: Bool { true }

    /// An answer whose media type is not `text/event-stream` (parameters aside, in any case), or that names
    /// none, is not an event stream: the standard fails the connection then, so it is not parsed, and a
    /// retry policy does not connect again. A 204 carries no body and ends the stream, whatever it names.
    static func accept(_ head: HTTPURLResponse) throws(NetworkError) {
        guard head.statusCode != 204 else { return }
        let contentType = head.value(forHTTPHeaderField: "Content-Type")
        if let contentType, isEventStream(contentType) { return }
        let named = contentType.map { "its Content-Type is \"\($0.prefix(100))\"" } ?? "it has no Content-Type"
        throw .decodingFailed(
            DecodingFailure(
                type: "ServerSentEvent", path: "",
                reason: "the answer is not an event stream: \(named), not text/event-stream"))
    }

    /// Whether a `Content-Type` value's media type is `text/event-stream`.
    static func isEventStream(_ contentType: String) -> Bool {
        let essence = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
        return essence.trimmingCharacters(in: CharacterSet(charactersIn: " \t")).lowercased() == "text/event-stream"
    }

    /// `Accept: text/event-stream`, `Cache-Control: no-store`, and `Last-Event-ID` once an id was received.
    func prepare(_ request: inout URLRequest) {
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.setValue("no-store", forHTTPHeaderField: "Cache-Control")
        if let lastEventID, !lastEventID.isEmpty {
            request.setValue(lastEventID, forHTTPHeaderField: "Last-Event-ID")
        }
    }

    var reconnectionDelay: TimeInterval? { retry }

    mutating func reset() {
        lines.reset()
        event = ""
        data = ""
        hasData = false
        sawFirstLine = false
    }

    /// Takes one line; returns the event a blank line dispatches.
    private mutating func take(_ rawLine: String) throws(NetworkError) -> ServerSentEvent? {
        var line = Substring(rawLine)
        if !sawFirstLine {
            sawFirstLine = true
            if line.first == "\u{FEFF}" { line = line.dropFirst() }
        }
        if line.isEmpty { return dispatch() }
        if line.first == ":" { return nil }  // a comment
        let name: Substring
        var value: Substring
        if let colon = line.firstIndex(of: ":") {
            name = line[..<colon]
            value = line[line.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            name = line
            value = ""
        }
        switch name {
        case "event": event = String(value)
        case "data":
            if hasData {
                guard value.utf8.count < lines.limit - data.utf8.count else {
                    throw .responseTooLarge(limit: lines.limit)
                }
                data += "\n"
                data += value
            } else {
                data = String(value)
                hasData = true
            }
        case "id" where !value.contains("\u{0}"): lastEventID = String(value)
        case "retry" where !value.isEmpty && value.allSatisfy(\.isASCII) && value.allSatisfy(\.isNumber):
            retry = Int(value).map { Double($0) / 1000 }
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            event = ""
            data = ""
            hasData = false
        }
        guard hasData else { return nil }
        return ServerSentEvent(event: event.isEmpty ? "message" : event, data: data, id: lastEventID, retry: retry)
    }
}
