import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The cache stage of the route, in one place: where it acts at each step of a task (see
/// `TaskPool+Route.swift`). Its rules (what is served, validated, stored) are ``CacheTransaction``'s, in
/// `Caching/`; a task's transaction is made at its admission and kept in its ``TaskPool/Plan``.
///
/// - Admit: answer from the store (fresh, or stale and validated in the background), or make the
///   transaction for the answer to come; refuse a cache-only request that no cache can answer.
/// - Attempt: the validators of a stored answer being checked go on the request (``DataTask/wireRequest``).
/// - Answer: a 304 becomes the stored answer; a storable answer is stored (``cacheResolved(_:of:request:)``).
/// - End: a failure the stored answer may cover is answered with it (``cacheFallback(for:of:)``).
extension TaskPool {
    /// What the cache stage makes of a new task: its transaction for the answer to come, or the answer
    /// itself, and whether a stale answer given is to be validated in the background.
    struct CacheAdmission {
        var transaction: CacheTransaction?
        var answer: Outcome?
        var revalidates = false
    }

    /// Admits `request` through the cache: only an answer read into memory comes from, or goes to, the
    /// cache. Throws ``NetworkError/notCached(url:)`` for a cache-only request no cache can answer.
    func cacheAdmission(
        of request: URLRequest, for endpoint: some Endpoint, deliveredInMemory: Bool, revalidating: Bool
    ) throws(NetworkError) -> CacheAdmission {
        let policy = endpoint.cachePolicy ?? configuration.cachePolicy
        guard let store = configuration.cache, deliveredInMemory else {
            // Cache only, where no cache can answer (the pool has none, or the body goes to a file or a
            // stream): never the network.
            if policy == .cacheOnly { throw .notCached(url: Redactor.default.redact(request.url)) }
            return CacheAdmission()
        }
        switch CacheTransaction.lookup(request, in: store, policy: policy, revalidating: revalidating) {
        case .send(let transaction):
            return CacheAdmission(transaction: transaction)
        case .answer(let stored, let source, let age, let again):
            let response = CacheTransaction.response(
                stored, for: request, source: source, age: age,
                statusReader: endpoint.statusReader ?? configuration.statusReader)
            return CacheAdmission(answer: validate(response), revalidates: again)
        case .notCached:
            throw .notCached(url: Redactor.default.redact(request.url))
        }
    }

    /// Validates a stale answer the cache gave, as a task of its own named after the one answered
    /// (`"<id> (revalidation)"`), whose answer updates the store; nobody waits for it.
    func revalidate(_ endpoint: some Endpoint, id: String) {
        guard let sent = try? submit(endpoint, id: id + " (revalidation)", revalidating: true), sent.begins else {
            return
        }
        beginAttempt(1, of: sent.task)
    }

    /// The attempt's answer as the cache makes it: a 304 becomes the stored answer it validated, and an
    /// answer that may be stored is.
    func cacheResolved(_ response: Response, of task: DataTask, request: URLRequest) -> Response {
        guard let cache = task.plan.cache else { return response }
        return cache.resolve(response, request: request)
    }

    /// The outcome, or, when it is a failure the cache may cover (see ``CacheTransaction/fallback(for:request:now:)``),
    /// the stored answer standing in for it.
    func cacheFallback(for outcome: Outcome, of task: DataTask) -> Outcome {
        guard case .failure(let error) = outcome, let cache = task.plan.cache,
            let stale = cache.fallback(for: error, request: task.request)
        else { return outcome }
        return validate(stale)
    }
}

extension DataTask {
    /// The request as it goes on the wire before interceptors: with the validators of a stored answer
    /// that the cache is checking (the cache stage's part of the attempt).
    var wireRequest: URLRequest {
        guard let cache = plan.cache, cache.validating != nil else { return request }
        return cache.conditional(request)
    }
}
