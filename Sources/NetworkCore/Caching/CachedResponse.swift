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
        var headers: [[String]]
        var requested: Double
        var received: Double
        var variance: [String: String]
    }

    private static let magic = Array("NetworkCore cache 1\n".utf8)

    /// The entry as bytes for a file: a magic line, the metadata's and the body's lengths and bytes, and a
    /// SHA-256 of everything before it, so that a torn or altered file is recognised as such.
    func encoded(key: String) -> Data {
        let metadata = Metadata(
            key: key, url: url, status: statusCode,
            headers: headers.keys.sorted().map { [$0, headers[$0]!] },
            requested: requestDate.timeIntervalSince1970, received: responseDate.timeIntervalSince1970,
            variance: variance)
        let json = (try? JSONEncoder().encode(metadata)) ?? Data()
        var data = Data(Self.magic)
        data.append(contentsOf: Self.bytes(of: UInt64(json.count)))
        data.append(json)
        data.append(contentsOf: Self.bytes(of: UInt64(body.count)))
        data.append(body)
        var digest = SHA256()
        digest.update(data)
        data.append(contentsOf: digest.finalize())
        return data
    }

    /// The entry stored as `data` under `key`; `nil` when the bytes are not a whole entry for that key
    /// (torn, truncated, altered, another version's, another key's).
    init?(decoding data: Data, key: String) {
        let bytes = [UInt8](data)
        let headerEnd = Self.magic.count + 8
        guard bytes.count >= headerEnd + 8 + 32, bytes.starts(with: Self.magic) else { return nil }
        var digest = SHA256()
        digest.update(data.prefix(bytes.count - 32))
        guard digest.finalize() == Array(bytes[(bytes.count - 32)...]) else { return nil }
        guard let jsonLength = Self.integer(bytes, at: Self.magic.count), jsonLength <= bytes.count - headerEnd
        else { return nil }
        let jsonEnd = headerEnd + jsonLength
        guard let bodyLength = Self.integer(bytes, at: jsonEnd), jsonEnd + 8 + bodyLength == bytes.count - 32,
            let metadata = try? JSONDecoder().decode(Metadata.self, from: Data(bytes[headerEnd..<jsonEnd])),
            metadata.key == key, metadata.headers.allSatisfy({ $0.count == 2 })
        else { return nil }
        self.init(
            url: metadata.url, statusCode: metadata.status,
            headers: Dictionary(metadata.headers.map { ($0[0], $0[1]) }) { _, last in last },
            body: Data(bytes[(jsonEnd + 8)..<(jsonEnd + 8 + bodyLength)]),
            requestDate: Date(timeIntervalSince1970: metadata.requested),
            responseDate: Date(timeIntervalSince1970: metadata.received), variance: metadata.variance)
    }

    private static func bytes(of value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    /// The little-endian integer at `offset`, if it fits in an `Int` and in the file.
    private static func integer(_ bytes: [UInt8], at offset: Int) -> Int? {
        guard offset + 8 <= bytes.count else { return nil }
        let value = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << ($1 * 8) }
        return value <= UInt64(bytes.count) ? Int(value) : nil
    }
}
