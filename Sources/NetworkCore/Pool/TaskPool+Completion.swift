import Foundation

extension TaskPool {
    /// Sends the endpoint's request and calls `completion` exactly once with the outcome, on an
    /// arbitrary thread; for callers that are not `async`. Cancel it with ``cancel(id:)``.
    ///
    /// The transfer starts within this call, on the calling thread, as an awaited send does; the
    /// answer is handed to `completion` on another thread, never on the transport's own (a session's
    /// queue), so a slow handler holds up no other transfer. An endpoint that cannot be sent (a bad
    /// URL, a duplicate id the policy rejects) calls `completion` with the error before this returns.
    ///
    /// ```swift
    /// pool.send(Movies.nowPlaying(page: 1), id: "now-playing") { result in
    ///     DispatchQueue.main.async { show(result) }
    /// }
    /// ```
    public func send(
        _ endpoint: some Endpoint, id: String? = nil,
        completion: @escaping @Sendable (Result<Response, NetworkError>) -> Void
    ) {
        do {
            // The handler waits from the start, so that an answer that comes at once finds it there.
            let sent = try submit(endpoint, id: id, waiter: .handler(completion))
            if sent.begins { beginAttempt(1, of: sent.task) }
        } catch {
            completion(.failure(error))
        }
    }

    /// Sends the endpoint's request, parses the response with `parser`, and calls `completion`
    /// exactly once with the model or the error, on an arbitrary thread.
    public func send<Parser: JSONParser>(
        _ endpoint: some Endpoint, parser: Parser, id: String? = nil,
        completion: @escaping @Sendable (Result<Parser.Model, NetworkError>) -> Void
    ) {
        send(endpoint, id: id) { result in
            completion(
                result.flatMap { response in
                    Result { () throws(NetworkError) -> Parser.Model in try Self.parse(response, with: parser) }
                })
        }
    }
}
