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
/// …
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

    /// What a body too large to record is recorded as.
    private func summary(of body: Data) -> String? {
        body.count > bodyLimit
            ? "\(body.count) bytes, not recorded: over the recorder's bodyLimit of \(bodyLimit)" : nil
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
        let secrets = redactor?.secrets(in: request) ?? []
        let entry = HAR.Entry(
            startedDateTime: Self.timestamp(startedAt), time: (wait + receive) * 1000,
            request: harRequest(request), response: harResponse(response, body: body, scrubbing: secrets),
            cache: HAR.Cache(),
            timings: HAR.Timings(send: 0, wait: wait * 1000, receive: receive * 1000),
            comment: error.map { error in
                let text = "no response: \(error)"
                // An error's description may carry the full URL (a URLError's failing URL, with its key).
                return redactor.map { $0.scrub(text, secrets: secrets) } ?? text
            })
        lock.withLock { entries.append(entry) }
    }

    private func harRequest(_ request: URLRequest) -> HAR.Request {
        let url = request.url?.absoluteString ?? ""
        let items = request.url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.queryItems } ?? []
        let body = request.httpBody ?? Data()
        let contentType = request.value(forHTTPHeaderField: "Content-Type")
        return HAR.Request(
            method: request.httpMethod ?? "GET", url: redactor?.redact(url) ?? url, httpVersion: "HTTP/1.1",
            cookies: [],
            headers: headers(request.allHTTPHeaderFields ?? [:]),
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
        if let summary = summary(of: body) { return HAR.PostData(mimeType: mimeType, text: "", comment: summary) }
        let text = redactor?.redact(body: body, contentType: contentType) ?? String(decoding: body, as: UTF8.self)
        return HAR.PostData(mimeType: mimeType, text: text)
    }

    /// The response, with sensitive fields redacted and the request's secret values scrubbed
    /// wherever a server echoed them (inside URLs, strings, other JSON).
    private func harResponse(_ response: HTTPURLResponse?, body: Data?, scrubbing secrets: Set<String>) -> HAR.Response
    {
        let body = body ?? Data()
        let headerFields =
            response.map { response in
                response.allHeaderFields.reduce(into: [String: String]()) { $0["\($1.key)"] = "\($1.value)" }
            } ?? [:]
        let mimeType = response?.value(forHTTPHeaderField: "Content-Type") ?? "application/octet-stream"
        var content = HAR.Content(size: body.count, mimeType: mimeType, text: nil, encoding: nil)
        if let summary = summary(of: body) {
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
            httpVersion: "HTTP/1.1", cookies: [], headers: headers(headerFields), content: content,
            redirectURL: response?.value(forHTTPHeaderField: "Location") ?? "", headersSize: -1, bodySize: body.count)
    }

    private func headers(_ fields: [String: String]) -> [HAR.NameValue] {
        fields.keys.sorted().map { HAR.NameValue(name: $0, value: hidden($0, fields[$0]!)) }
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

    /// Sends through the base transport with its body (a file, a form, a stream included), and records
    /// the exchange once the whole answer has arrived.
    public func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
        AsyncTransfer(reportingTo: events) { [base] events in
            let (data, response) = try await record(request, context: events.context.reporting(redirectsTo: events)) {
                context in
                try await TransportEvents.collect(from: base, request: request, body: body, context: context).get()
            }
            guard events.receive(head: response), !data.isEmpty else { return }
            events.receive(body: data)
        }
    }

    /// Sends through the base transport, timing the wait for the first byte, and records the exchange.
    public func send(_ request: URLRequest, context: TransportContext) async throws -> (Data, HTTPURLResponse) {
        try await record(request, context: context) { context in try await base.send(request, context: context) }
    }

    private func record(
        _ request: URLRequest, context: TransportContext,
        sending: (TransportContext) async throws -> (Data, HTTPURLResponse)
    ) async throws -> (Data, HTTPURLResponse) {
        let startedAt = Date()
        let start = MonotonicClock.now()
        let firstByte = Locked<UInt64?>(nil)
        let timed = context.observing { progress in
            if case .response = progress { firstByte.withLock { $0 = $0 ?? MonotonicClock.now() } }
        }
        do {
            let (body, response) = try await sending(timed)
            let end = MonotonicClock.now()
            let first = firstByte.withLock { $0 } ?? end
            recorder.record(
                request, response: response, body: body, error: nil, startedAt: startedAt,
                wait: MonotonicClock.seconds(from: start, to: first),
                receive: MonotonicClock.seconds(from: first, to: end))
            return (body, response)
        } catch {
            recorder.record(
                request, response: nil, body: nil, error: error, startedAt: startedAt,
                wait: MonotonicClock.seconds(from: start, to: MonotonicClock.now()), receive: 0)
            throw error
        }
    }
}
