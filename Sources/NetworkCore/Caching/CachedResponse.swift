import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An answer as a ``CacheStore`` keeps it: status, headers and body, when it was asked for and received,
/// and what the request's headers named by its `Vary` were.
///
/// It holds no credential: `Set-Cookie` is not stored, the URL is kept redacted (for display only), and
/// the request headers a `Vary` names are kept as digests.
public struct CachedResponse: Sendable, Hashable {
    /// The head made from it the first time it answered, kept with it (a memory store hands the same
    /// value out again): building an `HTTPURLResponse` costs more than the rest of a hit.
    let head = HeadBox()

    /// The URL it answered, credentials redacted; for display, never used to send.
    public var url: String
    /// The HTTP status code.
    public var statusCode: Int
    /// The response's headers, without those a cache never stores: `Set-Cookie`, `Connection` and the
    /// fields it names, and the other fields meant for one hop or one proxy (`Keep-Alive`,
    /// `Transfer-Encoding`, `Upgrade`, `Proxy-Authenticate`…).
    public var headers: [String: String]
    /// The body as the transport delivered it: decoded where the transport decoded the server's
    /// `Content-Encoding`, as sent otherwise.
    public var body: Data
    /// When the request that got it was sent.
    public var requestDate: Date
    /// When it was received (or last validated).
    public var responseDate: Date
    /// For each request header its `Vary` names (lowercased), a digest of the value the request had
    /// ("" when it had none); a later request is answered only if its own values match.
    public var variance: [String: String]

    /// Creates an entry; the pool does this for you.
    public init(
        url: String, statusCode: Int, headers: [String: String], body: Data, requestDate: Date, responseDate: Date,
        variance: [String: String] = [:]
    ) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.requestDate = requestDate
        self.responseDate = responseDate
        self.variance = variance
    }

    /// The value of the header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        if let value = headers[name] { return value }
        return headers.first { HeaderName.same($0.key, name) }?.value
    }

    /// Its `Cache-Control` directives.
    var cacheControl: CacheControl { CacheControl(header("Cache-Control")) }

    /// How long it stays fresh; `control`: its `Cache-Control` directives, when already read.
    func freshness(control: CacheControl? = nil) -> Freshness {
        Freshness(status: statusCode, control: control ?? cacheControl, receivedAt: responseDate, field: header)
    }

    /// Its age in seconds at `now` (RFC 9111 §4.2.3).
    func age(at now: Date) -> TimeInterval {
        Freshness.age(
            ageField: header("Age"), dateField: header("Date"), requestedAt: requestDate, receivedAt: responseDate,
            now: now)
    }

    /// Whether it can be validated: it has an `ETag` or a `Last-Modified`.
    var hasValidators: Bool { header("ETag") != nil || header("Last-Modified") != nil }

    /// Equal when every stored field is; the kept head is not compared.
    public static func == (lhs: CachedResponse, rhs: CachedResponse) -> Bool {
        lhs.url == rhs.url && lhs.statusCode == rhs.statusCode && lhs.headers == rhs.headers && lhs.body == rhs.body
            && lhs.requestDate == rhs.requestDate && lhs.responseDate == rhs.responseDate
            && lhs.variance == rhs.variance
    }

    /// Hashes the stored fields.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(statusCode)
        hasher.combine(headers)
        hasher.combine(body)
        hasher.combine(requestDate)
        hasher.combine(responseDate)
        hasher.combine(variance)
    }

    /// The head made from a stored answer: made again when the URL, status, headers or `Age` field differ
    /// from what it was made of (a copy of the value whose fields were changed shares the box).
    final class HeadBox: @unchecked Sendable {
        // @unchecked Sendable: `kept` is only touched under `lock`.
        private let lock = Lock()
        private var kept: (head: HTTPURLResponse, status: Int, headers: [String: String], age: String?)?

        /// The head kept for `url`, `status`, `headers` and `age` (the `Age` field it is served with, if
        /// any), or the one `make` makes (kept for next time).
        func head(
            for url: URL, status: Int, headers: [String: String], age: String?, make: () -> HTTPURLResponse
        ) -> HTTPURLResponse {
            if let kept = lock.withLock({ kept }), kept.age == age, kept.head.url == url, kept.status == status,
                kept.headers == headers
            {
                return kept.head
            }
            let made = make()
            lock.withLock { kept = (made, status, headers, age) }
            return made
        }
    }
}

// MARK: Stored form

extension CachedResponse {
    /// What the stored form holds besides the body.
    private struct Metadata: Codable {
        var key: String
        var url: String
        var status: Int
        var headers: RecordHeaders
        var requested: Double
        var received: Double
        var variance: [String: String]
    }

    private static let magic = Array("NetworkCore cache 1\n".utf8)

    /// The entry as bytes for a file (a ``RecordFile``: the metadata as its header, then the body).
    func encoded(key: String) -> Data {
        let metadata = Metadata(
            key: key, url: url, status: statusCode,
            headers: RecordHeaders(headers),
            requested: requestDate.timeIntervalSince1970, received: responseDate.timeIntervalSince1970,
            variance: variance)
        return RecordFile.encode(magic: Self.magic, header: (try? JSONEncoder().encode(metadata)) ?? Data(), body: body)
    }

    /// The entry stored as `data` under `key`; `nil` when the bytes are not a whole entry for that key
    /// (torn, truncated, altered, another version's, another key's).
    init?(decoding data: Data, key: String) {
        guard let (header, body) = RecordFile.decode(data, magic: Self.magic),
            let metadata = try? JSONDecoder().decode(Metadata.self, from: header),
            metadata.key == key
        else { return nil }
        self.init(
            url: metadata.url, statusCode: metadata.status,
            headers: metadata.headers.fields, body: body,
            requestDate: Date(timeIntervalSince1970: metadata.requested),
            responseDate: Date(timeIntervalSince1970: metadata.received), variance: metadata.variance)
    }
}
