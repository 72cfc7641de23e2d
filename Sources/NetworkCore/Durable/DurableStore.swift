import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where a pool keeps its durable writes (``Endpoint/durable(for:)``) until the server has them: a
/// directory, one file a write, written before the write is first attempted and deleted once it has ended
/// for good. A pool opened on the directory later (after a crash, a kill or a restart) sends what is there
/// again, each under the idempotency key it was first sent with.
///
/// Each file is written whole to a temporary file renamed into place, with a checksum: a file torn by a
/// crash, truncated or altered is dropped (and counted in ``droppedEntries``), never sent. No credential is
/// written: headers and query items that ``Redactor/default`` calls sensitive (`Authorization`, cookies,
/// `api_key`…) are left out, and the pool's interceptors add them again when the write is sent. Give one pool
/// at a time a directory.
public final class DurableStore: Sendable {
    /// The directory that holds the writes.
    public let directory: URL
    /// The files found when the store was opened that were not whole writes (a write a crash cut short, a
    /// file changed by hand): deleted, never sent. A write cut short was never stored: its send had not
    /// returned.
    public let droppedEntries: Int
    /// The keys of the writes a task of this process is sending now (or is about to): not to be sent again.
    private let sending = Locked<Set<String>>([])

    /// Opens the store in `directory`, creating it if needed; drops what a crash left half written.
    /// - Throws: ``NetworkError/fileAccessFailed(path:reason:)`` when the directory cannot be made or is a file.
    public init(directory: URL) throws(NetworkError) {
        self.directory = directory
        let (names, unfinished) = try RecordFile.openDirectory(directory)
        droppedEntries = unfinished + Self.read(names, in: directory).dropped
    }

    /// The writes on disk that no task of this process is sending, oldest first, now claimed for sending (each
    /// until ``finish(_:keep:)``); a file that is not a whole write is deleted.
    /// Read under the lock that `finish` takes: a write whose task ends meanwhile is either gone from the disk
    /// or still claimed, never read back and sent a second time.
    func claimPending() -> [DurableEntry] {
        sending.withLock { sending in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return Self.read(names, in: directory).entries.filter { sending.insert($0.key).inserted }
        }
    }

    /// The whole writes among `names`, oldest first, and how many files were not (deleted).
    private static func read(_ names: [String], in directory: URL) -> (entries: [DurableEntry], dropped: Int) {
        var entries: [DurableEntry] = []
        var dropped = 0
        for name in names where name.hasSuffix(".write") {
            let url = directory.appendingPathComponent(name)
            guard let data = try? Data(contentsOf: url),
                let entry = DurableEntry(decoding: data, key: String(name.dropLast(".write".count)))
            else {
                try? FileManager.default.removeItem(at: url)
                dropped += 1
                continue
            }
            entries.append(entry)
        }
        return (entries.sorted { $0.created < $1.created }, dropped)
    }

    /// The idempotency keys of the writes on disk now.
    public var pendingKeys: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".write") }.map { String($0.dropLast(".write".count)) }.sorted()
    }

    /// Writes `entry`, claimed for its task; throws when it could not be written whole (a full disk): the
    /// write is then not sent.
    func save(_ entry: DurableEntry) throws(NetworkError) {
        sending.withLock { _ = $0.insert(entry.key) }
        guard RecordFile.write(entry.encoded(), to: url(entry.key)) else {
            finish(entry.key, keep: false)
            throw .fileAccessFailed(path: url(entry.key).path, reason: "the durable write could not be stored")
        }
    }

    /// The task of the write under `key` has ended: the write is deleted unless `keep`, and may be claimed again.
    func finish(_ key: String, keep: Bool) {
        sending.withLock { sending in
            if !keep { try? FileManager.default.removeItem(at: url(key)) }
            sending.remove(key)
        }
    }

    private func url(_ key: String) -> URL { directory.appendingPathComponent(key + ".write") }
}

/// A durable write as stored: its task id, idempotency key, request (without credentials) and expiry.
struct DurableEntry: Sendable, Equatable {
    let id: String
    let key: String
    let method: String
    let url: String
    let headers: [String: String]
    let body: Data
    /// Seconds since 1970 when it was first sent, and after which it is given up.
    let created: Double
    let expires: Double

    /// `request`'s method, URL and headers, each credential left out, and `body`.
    init(id: String, key: String, request: URLRequest, body: Data, created: Date, expiry: TimeInterval) {
        self.id = id
        self.key = key
        method = request.httpMethod ?? "GET"
        url = Self.withoutSecrets(request.url)
        headers = (request.allHTTPHeaderFields ?? [:]).filter { !Redactor.default.isSensitive($0.key) }
        self.body = body
        self.created = created.timeIntervalSince1970
        expires = created.timeIntervalSince1970 + max(0, expiry)
    }

    private init(header: Header, body: Data) {
        id = header.id
        key = header.key
        method = header.method
        url = header.url
        headers = header.headers.fields
        self.body = body
        created = header.created
        expires = header.expires
    }

    /// What the file's JSON header holds.
    private struct Header: Codable {
        var key: String
        var id: String
        var method: String
        var url: String
        var headers: RecordHeaders
        var created: Double
        var expires: Double
    }

    private static let magic = Array("NetworkCore durable write 1\n".utf8)

    func encoded() -> Data {
        let header = Header(
            key: key, id: id, method: method, url: url, headers: RecordHeaders(headers), created: created,
            expires: expires)
        return RecordFile.encode(magic: Self.magic, header: (try? JSONEncoder().encode(header)) ?? Data(), body: body)
    }

    /// The write stored as `data` under `key`; `nil` when the bytes are not a whole write for that key.
    init?(decoding data: Data, key: String) {
        guard let (header, body) = RecordFile.decode(data, magic: Self.magic),
            let decoded = try? JSONDecoder().decode(Header.self, from: header), decoded.key == key,
            URL(string: decoded.url) != nil
        else { return nil }
        self.init(header: decoded, body: body)
    }

    /// The URL without the query items ``Redactor/default`` calls sensitive.
    private static func withoutSecrets(_ url: URL?) -> String {
        guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url?.absoluteString ?? ""
        }
        if let items = components.queryItems {
            let kept = items.filter { !Redactor.default.isSensitive($0.name) }
            components.queryItems = kept.isEmpty ? nil : kept
        }
        return components.url?.absoluteString ?? url.absoluteString
    }
}
