import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A server's answer: status, headers, the raw bytes, the request that asked, and how long it took.
///
/// The body is kept as received. It is parsed only when something asks: a ``JSONParser`` for a
/// model, or ``serverStatus`` (at most once, then cached) for the server's own code and message.
public final class Response: @unchecked Sendable {  // immutable but for `statusCache`, which `Locked` guards.
    /// The request as sent, after the pool added its headers.
    public let request: URLRequest
    /// The HTTP response the transport received. A transport that reports a ``ResponseHead`` has it made
    /// here, the first time it is asked for.
    public var httpResponse: HTTPURLResponse { head.httpResponse }
    /// The response's status and fields, as the transport reported them.
    public let head: ResponseHead
    /// The body bytes, decompressed by the transport where the server compressed them; empty for a
    /// download (see ``fileURL``) or a stream.
    public let body: Data
    /// The file the body was written to, for a download (``TaskPool/download(_:to:id:)``); else `nil`.
    public let fileURL: URL?
    /// Seconds from sending the request to receiving the whole body.
    public let duration: TimeInterval
    /// The attempt that produced this response: when it was sent, its first byte, its end, bytes each way;
    /// `nil` for an answer from the cache.
    public let timing: TaskTimings.Attempt?
    /// Where the answer came from: the network, the cache, the cache after the server confirmed it, or
    /// the cache past its freshness (see ``CachePolicy``).
    public let source: Source
    /// Seconds since the server made the answer, for an answer from the cache; `nil` from the network.
    public let age: TimeInterval?

    /// Where a ``Response`` came from.
    public enum Source: String, Sendable, Hashable, Codable, CustomStringConvertible {
        /// The server sent it for this request.
        case network
        /// A stored answer, fresh, used without asking the server.
        case cache
        /// A stored answer the server confirmed unchanged (a `304 Not Modified` to its validators).
        case revalidated
        /// A stored answer past its freshness: while it is being revalidated, when the server could not
        /// answer, or because the policy allowed it.
        case stale

        /// `"network"`, `"cache"`, `"revalidated"` or `"stale"`.
        public var description: String { rawValue }
    }

    let statusReader: any ServerStatusReader
    private let statusCache = Locked<ServerStatus??>(nil)

    /// Creates a response; the pool does this for you.
    public convenience init(
        request: URLRequest, httpResponse: HTTPURLResponse, body: Data, duration: TimeInterval,
        statusReader: any ServerStatusReader = JSONStatusReader(), timing: TaskTimings.Attempt? = nil,
        fileURL: URL? = nil, source: Source = .network, age: TimeInterval? = nil
    ) {
        self.init(
            request: request, head: ResponseHead(httpResponse), body: body, duration: duration,
            statusReader: statusReader, timing: timing, fileURL: fileURL, source: source, age: age)
    }

    /// Creates a response with the head a transport reported; the pool does this for you.
    public init(
        request: URLRequest, head: ResponseHead, body: Data, duration: TimeInterval,
        statusReader: any ServerStatusReader = JSONStatusReader(), timing: TaskTimings.Attempt? = nil,
        fileURL: URL? = nil, source: Source = .network, age: TimeInterval? = nil
    ) {
        self.timing = timing
        self.source = source
        self.age = age
        self.fileURL = fileURL
        self.request = request
        self.head = head
        self.body = body
        self.duration = duration
        self.statusReader = statusReader
        LiveObjects.created(.response)
    }

    deinit { LiveObjects.destroyed(.response) }

    /// The HTTP status code, e.g. `200`.
    public var statusCode: Int { head.statusCode }

    /// The URL that answered, after redirects.
    public var url: URL? { head.url }

    /// All headers, as the transport reports them.
    public var headers: [String: String] { httpResponse.headerFields }

    /// The value of one header; the name is compared case-insensitively.
    public func header(_ name: String) -> String? {
        head.value(forHTTPHeaderField: name)
    }

    /// The server's own status read from the body, or `nil`; read at most once.
    public var serverStatus: ServerStatus? {
        statusCache.withLock { cache in
            if let cached = cache { return cached }
            let status = statusReader.status(in: body)
            cache = .some(status)
            return status
        }
    }

    /// The server's own code, such as TMDB's `status_code`, when the body carries one.
    public var serverCode: Int? { serverStatus?.code }

    /// The server's own message, such as TMDB's `status_message`, when the body carries one.
    public var serverMessage: String? { serverStatus?.message }

    /// Whether the body of an accepted response says the call failed (`"success": false`).
    public var isServerRefusal: Bool {
        statusReader.mayDescribeFailure(body) && serverStatus?.success == false
    }

    /// The server's error for this response: its status with the server's code and message. A secret
    /// of the request that the server echoes in its message (`"Invalid token: <token>"`) is redacted
    /// there, as it is in every error description and log line made from it; ``serverMessage`` and
    /// ``body`` are as the server sent them.
    public var serverError: ResponseError {
        let status = serverStatus
        let message = status?.message.map { message in
            Redactor.default.scrub(message, secrets: Redactor.default.secrets(in: request))
        }
        return ResponseError(statusCode: statusCode, code: status?.code, message: message, body: body)
    }
}

extension Response: CustomReflectable {
    /// What `dump` and debuggers show: status, method, URL and headers with credentials redacted, body
    /// size and duration; never the request's credentials.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "statusCode": statusCode, "method": request.httpMethod ?? "GET",
                "url": Redactor.default.redact(request.url),
                "requestHeaders": Redactor.default.redact(headers: request.allHTTPHeaderFields ?? [:]),
                "headers": Redactor.default.redact(headers: headers, secrets: Redactor.default.secrets(in: request)),
                "bodyBytes": body.count, "duration": duration,
                "source": source,
            ], displayStyle: .class)
    }
}

extension Response: CustomStringConvertible {
    /// `"200 GET https://example.com/get?api_key=<redacted> (512 bytes, 12 ms)"`; an answer from the
    /// cache says so: `"… (512 bytes, from cache, 40 s old)"`.
    public var description: String {
        let method = request.httpMethod ?? "GET"
        let url = Redactor.default.redact(request.url)
        guard source == .network else {
            let age = age.map { ", \(Int($0.rounded())) s old" } ?? ""
            let from = source == .cache ? "from cache" : "\(source) from cache"
            return "\(statusCode) \(method) \(url) (\(body.count) bytes, \(from)\(age))"
        }
        return "\(statusCode) \(method) \(url) (\(body.count) bytes, \(Int((duration * 1000).rounded())) ms)"
    }
}
