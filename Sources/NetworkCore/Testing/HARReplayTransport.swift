import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that answers requests from a recording (HAR 1.2) instead of the network.
///
/// A request matches an entry with the same method, URL path and query (items in any order;
/// credentials, which a redacted recording hides, are ignored), and, with `matchingBody`, the
/// same body. The host is not compared, so a recording made against one server replays for
/// another. Entries that match the same request are served in recorded order; the last one
/// repeats. A request that matches no entry fails with ``HARReplayError/noMatchingEntry(method:url:entries:)``.
/// ```swift
/// let pool = TaskPool(configuration: .init(transport: try HARReplayTransport(contentsOf: recording)))
/// ```
public final class HARReplayTransport: Transport, @unchecked Sendable {
    // @unchecked Sendable: `served` is guarded by `lock`; the rest is immutable.
    let entries: [HAR.Entry]
    private let matchingBody: Bool
    private let redactor: Redactor
    private let lock = Lock()
    private var served: [Int: Int] = [:]

    /// Replays the entries of `har`.
    public init(har: HAR, matchingBody: Bool = false, redactor: Redactor = .default) {
        entries = har.log.entries
        self.matchingBody = matchingBody
        self.redactor = redactor
    }

    /// A replay makes no connection, so a pool's pins have nothing to refuse: `nil`.
    public var pinningRefusal: String? { nil }

    /// Replays a HAR file.
    public convenience init(contentsOf url: URL, matchingBody: Bool = false) throws {
        try self.init(data: Data(contentsOf: url), matchingBody: matchingBody)
    }

    /// Replays the HAR file in `data`; JSON that Foundation's decoder would trap on is refused first.
    convenience init(data: Data, matchingBody: Bool = false) throws {
        if let reason = JSONGuard.rejection(of: data) {
            throw DecodingFailure(type: "HAR", path: "", reason: reason)
        }
        self.init(har: try JSONDecoder().decode(HAR.self, from: data), matchingBody: matchingBody)
    }

    /// The recorded response for `request`, or ``HARReplayError/noMatchingEntry(method:url:entries:)``.
    public func send(_ request: URLRequest, context: TransportContext) async throws -> (Data, HTTPURLResponse) {
        try Task.checkCancellation()
        let (data, response) = try answer(to: request)
        context.didReceiveResponse()
        if !data.isEmpty { context.didReceive(bytes: data.count) }
        return (data, response)
    }

    /// The recorded answer to `request`: its body and head, or the error the recording stands for
    /// (``HARReplayError/noMatchingEntry(method:url:entries:)``, or `URLError(.networkConnectionLost)` for an
    /// entry recorded without a response). For a server that serves the recording, such as
    /// `NetworkCoreTesting`'s `MockServer`.
    public func answer(to request: URLRequest) throws -> (Data, HTTPURLResponse) {
        let method = request.httpMethod ?? "GET"
        let key = self.key(method: method, url: request.url?.absoluteString ?? "")
        let body = request.httpBody.map { String(decoding: $0, as: UTF8.self) }
        let candidates = entries.indices.filter { index in
            let entry = entries[index]
            guard self.key(method: entry.request.method, url: entry.request.url) == key else { return false }
            return !matchingBody || entry.request.postData?.text == body
        }
        guard let last = candidates.last, let url = request.url else {
            throw HARReplayError.noMatchingEntry(
                method: method, url: redactor.redact(request.url), entries: entries.count)
        }
        let index = lock.withLock { () -> Int in
            let next = served[last, default: 0]
            served[last] = next + 1
            return candidates[min(next, candidates.count - 1)]
        }
        let recorded = entries[index].response
        guard recorded.status > 0 else { throw URLError(.networkConnectionLost) }
        var headers: [String: String] = [:]
        for header in recorded.headers where !["content-length", "content-encoding"].contains(header.name.lowercased())
        {
            headers[header.name] = header.value
        }
        guard
            let response = HTTPURLResponse(
                url: url, statusCode: recorded.status, httpVersion: "HTTP/1.1", headerFields: headers)
        else { throw URLError(.badServerResponse) }
        return (recorded.content.data, response)
    }

    /// Method, path and sorted non-credential query pairs.
    private func key(method: String, url: String) -> String {
        var parts = URLParts(url)
        let head = URLParts.split(head: parts.head)
        if !head.prefix.isEmpty { parts.head = head.path.isEmpty ? "/" : String(head.path) }
        let pairs = parts.pairs.filter { !redactor.isSensitive($0.name) }.map(\.rawPair).sorted()
        return method.uppercased() + " " + URLParts.join(head: parts.head, pairs: pairs)
    }
}

/// Why a ``HARReplayTransport`` could not answer.
public enum HARReplayError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No recorded entry matches the request.
    case noMatchingEntry(method: String, url: String, entries: Int)

    /// `"no recorded entry for GET https://… (the recording has 12 entries)"`.
    public var description: String {
        switch self {
        case .noMatchingEntry(let method, let url, let entries):
            "no recorded entry for \(method) \(url) (the recording has \(entries) entries)"
        }
    }
}
