import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Collects traffic as an HTTP Archive (HAR 1.2), credentials redacted by default.
///
/// Wrap the pool's transport in a ``RecordingTransport`` to fill it:
/// ```swift
/// let recorder = HARRecorder()
/// let pool = TaskPool(configuration: .init(transport: RecordingTransport(URLSessionTransport(), recorder: recorder)))
/// // … send through the pool …
/// try recorder.write(to: URL(fileURLWithPath: "session.har"))
/// ```
/// Headers, query items and JSON or form fields that ``Redactor`` deems sensitive are written as
/// `<redacted>`, in requests and responses, unless the recorder was made with `revealingSecrets: true`.
public final class HARRecorder: @unchecked Sendable {
    // @unchecked Sendable: `entries` is guarded by `lock`; the rest is immutable.
    private let lock = Lock()
    private var entries: [HAR.Entry] = []
    private let redactor: Redactor?
    /// The largest body recorded whole, in bytes; a larger one is recorded by its size and a comment.
    public let bodyLimit: Int

    /// Creates an empty recorder; `revealingSecrets: true` records credentials as they were (explicit
    /// opt-in). Request and response bodies over `bodyLimit` bytes (1 MiB unless told) are summarised:
    /// their size is kept, their text is not, and a comment says so.
    public init(revealingSecrets: Bool = false, redactor: Redactor = .default, bodyLimit: Int = 1 << 20) {
        self.redactor = revealingSecrets ? nil : redactor
        self.bodyLimit = max(0, bodyLimit)
    }

    /// What a body of `size` bytes too large to record is recorded as.
    private func summary(ofSize size: Int) -> String? {
        size > bodyLimit ? "\(size) bytes, not recorded: over the recorder's bodyLimit of \(bodyLimit)" : nil
    }

    /// The archive so far.
    public var har: HAR { HAR(entries: lock.withLock { entries }) }

    /// How many requests have been recorded.
    public var count: Int { lock.withLock { entries.count } }

    /// The archive as JSON.
    public func data() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(har)
    }

    /// Writes the archive as JSON to a file.
    public func write(to url: URL) throws {
        try data().write(to: url, options: .atomic)
    }

    /// Records one request: its response and body, or the error it failed with; times in seconds.
    public func record(
        _ request: URLRequest, response: HTTPURLResponse?, body: Data?, error: (any Error)?, startedAt: Date,
        wait: TimeInterval, receive: TimeInterval
    ) {
        record(
            request, response: response, body: body, bodySize: body?.count ?? 0, error: error, startedAt: startedAt,
            wait: wait, receive: receive)
    }

    /// Records one request whose response body was `bodySize` bytes, of which `body` holds at least the
    /// first ``bodyLimit`` (all of them when they are not over it).
    func record(
        _ request: URLRequest, response: HTTPURLResponse?, body: Data?, bodySize: Int, error: (any Error)?,
        startedAt: Date, wait: TimeInterval, receive: TimeInterval
    ) {
        let secrets = redactor?.secrets(in: request) ?? []
        let entry = HAR.Entry(
            startedDateTime: Self.timestamp(startedAt), time: (wait + receive) * 1000,
            request: harRequest(request, scrubbing: secrets),
            response: harResponse(response, body: body, size: bodySize, scrubbing: secrets),
            cache: HAR.Cache(),
            timings: HAR.Timings(send: 0, wait: wait * 1000, receive: receive * 1000),
            comment: error.map { error in
                let text = "no response: \(error)"
                // An error's description may carry the full URL (a URLError's failing URL, with its key).
                return redactor.map { $0.scrub(text, secrets: secrets) } ?? text
            })
        lock.withLock { entries.append(entry) }
    }

    /// Records an answer the pool gave from its cache: its request and the stored response, no time on
    /// the wire, and `cache.comment` saying where it came from and how old it was.
    public func record(cached response: Response) {
        let secrets = redactor?.secrets(in: response.request) ?? []
        let age = response.age.map { ", \(Int($0.rounded())) s old" } ?? ""
        let state =
            switch response.source {
            case .revalidated: "revalidated (304)"
            case .stale: "stale"
            default: "fresh"
            }
        let note = "answered from the cache: \(state)\(age)"
        let entry = HAR.Entry(
            startedDateTime: Self.timestamp(Date()), time: 0, request: harRequest(response.request, scrubbing: secrets),
            response: harResponse(
                response.httpResponse, body: response.body, size: response.body.count, scrubbing: secrets),
            cache: HAR.Cache(comment: note), timings: HAR.Timings(send: 0, wait: 0, receive: 0), comment: note)
        lock.withLock { entries.append(entry) }
    }

    private func harRequest(_ request: URLRequest, scrubbing secrets: Set<String>) -> HAR.Request {
        let url = request.url?.absoluteString ?? ""
        let items = request.url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.queryItems } ?? []
        let body = request.httpBody ?? Data()
        let contentType = request.value(forHTTPHeaderField: "Content-Type")
        return HAR.Request(
            method: request.httpMethod ?? "GET", url: redactor?.redact(url) ?? url, httpVersion: "HTTP/1.1",
            cookies: [],
            headers: headers(request.allHTTPHeaderFields ?? [:], scrubbing: secrets),
            queryString: items.map { item in
                HAR.NameValue(name: item.name, value: hidden(item.name, item.value ?? ""))
            },
            postData: postData(body, contentType: contentType),
            headersSize: -1, bodySize: body.count)
    }

    /// The request's body, its sensitive fields redacted, or its size alone when over ``bodyLimit``.
    private func postData(_ body: Data, contentType: String?) -> HAR.PostData? {
        guard !body.isEmpty else { return nil }
        let mimeType = contentType ?? "application/octet-stream"
        if let summary = summary(ofSize: body.count) {
            return HAR.PostData(mimeType: mimeType, text: "", comment: summary)
        }
        let text = redactor?.redact(body: body, contentType: contentType) ?? String(decoding: body, as: UTF8.self)
        return HAR.PostData(mimeType: mimeType, text: text)
    }

    /// The response, with sensitive fields redacted and the request's secret values scrubbed
    /// wherever a server echoed them (inside URLs, strings, other JSON, headers); the URLs its headers
    /// carry (`Location`, and so `redirectURL`) redacted as the request's is.
    private func harResponse(
        _ response: HTTPURLResponse?, body: Data?, size: Int, scrubbing secrets: Set<String>
    ) -> HAR.Response {
        let body = body ?? Data()
        let headerFields = response?.headerFields ?? [:]
        let mimeType = response?.value(forHTTPHeaderField: "Content-Type") ?? "application/octet-stream"
        var content = HAR.Content(size: size, mimeType: mimeType, text: nil, encoding: nil)
        if let summary = summary(ofSize: size) {
            content.comment = summary
        } else if String(data: body, encoding: .utf8) != nil {
            if let redactor {
                content.text = redactor.scrub(redactor.redact(body: body, contentType: mimeType), secrets: secrets)
            } else {
                content.text = String(decoding: body, as: UTF8.self)
            }
        } else {
            content.text = body.base64EncodedString()
            content.encoding = "base64"
        }
        let status = response?.statusCode ?? 0
        return HAR.Response(
            status: status, statusText: status == 0 ? "" : HTTPURLResponse.localizedString(forStatusCode: status),
            httpVersion: "HTTP/1.1", cookies: [], headers: headers(headerFields, scrubbing: secrets), content: content,
            redirectURL: response?.value(forHTTPHeaderField: "Location").map {
                redactor?.redact(headerValue: $0, named: "Location", secrets: secrets) ?? $0
            } ?? "",
            headersSize: -1, bodySize: size)
    }

    private func headers(_ fields: [String: String], scrubbing secrets: Set<String>) -> [HAR.NameValue] {
        fields.keys.sorted().map { name in
            let value = fields[name]!
            return HAR.NameValue(
                name: name, value: redactor?.redact(headerValue: value, named: name, secrets: secrets) ?? value)
        }
    }

    private func hidden(_ name: String, _ value: String) -> String {
        guard let redactor, redactor.isSensitive(name) else { return value }
        return Redactor.placeholder
    }

    private static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}

/// A transport that passes every request to another and records it in a ``HARRecorder``.
///
/// The answer passes through as it arrives, chunk by chunk, so that downloads and streams keep their
/// memory and back-pressure; the recorder keeps at most its ``HARRecorder/bodyLimit`` of each body.
/// Each request is an entry, a redirect's included (the pool follows redirects as requests of their own).
public struct RecordingTransport: Transport {
    /// The transport that sends.
    public let base: any Transport
    /// Where traffic is recorded.
    public let recorder: HARRecorder

    /// Records what `base` sends and receives in `recorder`.
    public init(_ base: any Transport, recorder: HARRecorder) {
        self.base = base
        self.recorder = recorder
    }

    /// As many requests at once per host as the base transport.
    public var maximumRequestsPerHost: Int? { base.maximumRequestsPerHost }

    /// Pins as the base transport enforces them.
    public var pinningRefusal: String? { base.pinningRefusal }

    /// Sends through the base transport with its body (a file, a form, a stream included), passes its
    /// answer on as it comes, and records the exchange when the transfer ends, however it ends.
    public func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
        let exchange = RecordedExchange(request, recorder: recorder, passingTo: events.receiver)
        return base.start(request, body: body, events: events.reporting(to: exchange))
    }

    /// Opens the socket through the base transport, its messages passed on as they come; the opening
    /// request and its answer are recorded when the socket ends (not its messages).
    public func startWebSocket(
        _ request: URLRequest, options: WebSocketOptions, events: TransportEvents
    ) -> any WebSocketConnection {
        let exchange = RecordedExchange(request, recorder: recorder, passingTo: events.receiver)
        return base.startWebSocket(request, options: options, events: events.reporting(to: exchange))
    }
}

/// One exchange recorded as it streams: a receiver that passes every report on to the next one, and
/// keeps the wait for the head, the head, and the first bytes of the body up to the recorder's limit
/// (its size counted whole), written to the recorder when the transfer ends, however it ends: once
/// the next receiver takes no more, that is the end, as cancelled.
final class RecordedExchange: TransportReceiver, @unchecked Sendable {
    // @unchecked Sendable: the `var`s are touched under `lock` only.
    private let request: URLRequest
    private let recorder: HARRecorder
    private let next: any TransportReceiver
    private let startedAt = Date()
    private let start = MonotonicClock.now()
    private let lock = Lock()
    private var firstByte: UInt64?
    private var head: HTTPURLResponse?
    private var kept = Data()
    private var size = 0
    private var recorded = false

    init(_ request: URLRequest, recorder: HARRecorder, passingTo next: any TransportReceiver) {
        self.request = request
        self.recorder = recorder
        self.next = next
    }

    func receive(head response: HTTPURLResponse) -> Bool {
        lock.withLock {
            firstByte = firstByte ?? MonotonicClock.now()
            // A new head starts the body again (a redirect the transport follows itself).
            head = response
            kept = Data()
            size = 0
        }
        return passedOn(next.receive(head: response))
    }

    func receive(body data: Data) -> Bool {
        lock.withLock {
            size += data.count
            let room = recorder.bodyLimit + 1 - kept.count
            if room > 0 { kept.append(data.prefix(room)) }
        }
        return passedOn(next.receive(body: data))
    }

    func receive(message: WebSocketMessage) -> Bool { passedOn(next.receive(message: message)) }

    func receive(closeCode: WebSocketCloseCode, reason: String) {
        next.receive(closeCode: closeCode, reason: reason)
    }

    func carries(requestsAtOnce count: Int) { next.carries(requestsAtOnce: count) }

    func sent(totalBytes: Int, expected: Int?) { next.sent(totalBytes: totalBytes, expected: expected) }

    func redirected(statusCode: Int, to url: URL?) { next.redirected(statusCode: statusCode, to: url) }

    func finish() {
        record(lock.withLock { head } == nil ? URLError(.badServerResponse) : nil)
        next.finish()
    }

    func fail(_ error: any Error) {
        record(error)
        next.fail(error)
    }

    /// The next receiver's answer: once it takes no more, the transfer is over, and recorded as cancelled.
    private func passedOn(_ accepted: Bool) -> Bool {
        if !accepted { record(NetworkError.cancelled) }
        return accepted
    }

    /// Writes the exchange to the recorder, the first time only.
    private func record(_ error: (any Error)?) {
        let seen = lock.withLock { () -> (firstByte: UInt64?, head: HTTPURLResponse?, kept: Data, size: Int)? in
            guard !recorded else { return nil }
            recorded = true
            return (firstByte, head, kept, size)
        }
        guard let seen else { return }
        let end = MonotonicClock.now()
        let first = seen.firstByte ?? end
        recorder.record(
            request, response: error == nil ? seen.head : nil, body: error == nil ? seen.kept : nil,
            bodySize: error == nil ? seen.size : 0, error: error, startedAt: startedAt,
            wait: MonotonicClock.seconds(from: start, to: first),
            receive: MonotonicClock.seconds(from: first, to: end))
    }
}

extension HARRecorder: NetworkLogger {
    /// Records the answers a pool gives from its cache, which never reach a ``RecordingTransport``: give the
    /// recorder to the pool as its logger too (beside others in a ``CombinedLogger``), and the archive has
    /// every answer, from the wire and from the cache.
    /// ```swift
    /// let recorder = HARRecorder()
    /// let pool = TaskPool(
    ///     configuration: .init(
    ///         transport: RecordingTransport(URLSessionTransport(), recorder: recorder), logger: recorder,
    ///         cache: MemoryCacheStore()))
    /// ```
    public func log(_ event: TaskEvent) {
        guard event.kind == .finished || event.kind == .failed, let response = event.response,
            response.source != .network
        else { return }
        record(cached: response)
    }
}
