import Foundation

extension TaskPool {
    /// Sends the endpoint's request and calls `completion` exactly once with the outcome, on an
    /// arbitrary thread; for callers that are not `async`. Cancel it with ``cancel(id:)``.
    ///
    /// ```swift
    /// pool.send(Movies.details(id: 550), id: "details") { result in
    ///     DispatchQueue.main.async { show(result) }
    /// }
    /// ```
    public func send(
        _ endpoint: some Endpoint, id: String? = nil,
        completion: @escaping @Sendable (Result<Response, NetworkError>) -> Void
    ) {
        do {
            let (task, _) = try start(endpoint, id: id, immediately: false)
            addWaiter(to: task, token: 0, resumer: .handler(completion))
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
