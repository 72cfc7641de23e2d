import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a durable send is kept (``Endpoint/durable(for:)``): written to the pool's ``DurableStore`` before it is
/// first attempted, and sent again by the next pool opened on the store until the server has answered it or
/// `expiry` has passed.
public struct Durability: Sendable, Hashable {
    /// Seconds from the first send after which a write the server has not answered is given up.
    public var expiry: TimeInterval

    /// Kept for `expiry` seconds (a day unless told).
    public init(expiry: TimeInterval = 86_400) {
        self.expiry = expiry
    }
}

/// What became of a durable write, told to ``TaskPool/Configuration/durableOutcomes`` by the pool that sent
/// it: the one that made it, or a later one that sent it again after a restart.
public struct DurableOutcome: Sendable {
    /// The write's task id.
    public let id: String
    /// The idempotency key it was sent with, the same at every attempt and after every restart.
    public let idempotencyKey: String
    /// The write's URL, redacted.
    public let url: String
    /// The server's accepted answer, or the error it ended with.
    public let result: Result<Response, NetworkError>
    /// Whether it was sent again from the store (its first caller is gone): by a pool opened later, or by
    /// ``TaskPool/sendKeptWrites()`` after it had been kept.
    public let restored: Bool
    /// Whether it stays in the store, to be sent again (``TaskPool/sendKeptWrites()``, which a pool does when it
    /// is made and when its connectivity monitor says the network is back): it ended without an answer from
    /// the server (the network, a timeout) before its expiry.
    public let kept: Bool
}

/// The durable stage of one task: its entry in the store, deleted (or kept) when the task ends, and the
/// outcome told.
final class DurableWrite: Sendable {
    let store: DurableStore
    let entry: DurableEntry
    let restored: Bool
    let report: (@Sendable (DurableOutcome) -> Void)?

    init(store: DurableStore, entry: DurableEntry, restored: Bool, report: (@Sendable (DurableOutcome) -> Void)?) {
        self.store = store
        self.entry = entry
        self.restored = restored
        self.report = report
    }

    /// The task ended: the entry goes unless no answer came (or its pool went away before it was sent) and
    /// it has not expired.
    func ended(with outcome: Result<Response, NetworkError>, poolClosing: Bool) {
        let unanswered: Bool
        switch outcome {
        case .success: unanswered = false
        case .failure(let error):
            unanswered = error.lostTheNetwork || error.isTimeout || (poolClosing && error.isCancelled)
        }
        let kept = unanswered && Date().timeIntervalSince1970 < entry.expires
        store.finish(entry.key, keep: kept)
        report?(
            DurableOutcome(
                id: entry.id, idempotencyKey: entry.key, url: Redactor.default.redact(entry.url), result: outcome,
                restored: restored, kept: kept))
    }
}

/// A write read back from the store, sent again as it was (credentials are added by the pool's interceptors).
struct StoredWrite: Endpoint {
    let entry: DurableEntry

    /// The stored URL's scheme, host and port.
    var baseURL: String {
        guard var components = URLComponents(string: entry.url) else { return entry.url }
        (components.percentEncodedPath, components.percentEncodedQuery, components.fragment) = ("", nil, nil)
        return components.string ?? entry.url
    }
    /// The stored URL's path and query, as they were encoded.
    var path: String {
        guard let components = URLComponents(string: entry.url) else { return "" }
        let path = String(components.percentEncodedPath.drop { $0 == "/" })
        return components.percentEncodedQuery.map { path + "?" + $0 } ?? path
    }
    var method: HTTPMethod { HTTPMethod(rawValue: entry.method) }
    var headers: [String: String] { entry.headers }
    var task: HTTPTask {
        entry.body.isEmpty
            ? .plain
            : .data(
                entry.body,
                contentType: entry.headers.first { $0.key.lowercased() == "content-type" }?.value
                    ?? "application/octet-stream")
    }
    var durability: Durability? { Durability(expiry: entry.expires - entry.created) }
    var service: String { "durable write" }
}
