import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The data delegate of a ``URLSessionTransport``'s session: collects each task's body, reports
/// its first byte, body bytes and redirects to the task's context, and completes it exactly once.
/// It counts bytes itself because FoundationNetworking never updates a data task's progress.
///
/// On FoundationNetworking its methods run on the session's own queue (see ``URLSessionTransport``),
/// so none of them may wait for the session: what would (answering an authentication challenge,
/// which suspends and resumes the task) is handed to another queue.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: all mutable state is in `tasks`, a `Locked`.
    typealias Completion = @Sendable (Result<(Data, HTTPURLResponse), any Error>) -> Void

    /// A running task's answer so far. A class, so that each event finds it with one lookup and
    /// changes it in place: a struct in the dictionary was copied out and back for every field set.
    private final class Entry: @unchecked Sendable {
        // @unchecked Sendable: `body` and `response` are read and written only under `tasks`' lock.
        var body = Data()
        var response: HTTPURLResponse?
        /// The body's length as the response announced it, or 0.
        var expectedLength = 0
        let context: TransportContext
        let completion: Completion

        init(context: TransportContext, completion: @escaping Completion) {
            self.context = context
            self.completion = completion
        }
    }

    private let tasks = Locked<[Int: Entry]>([:])

    func register(_ task: URLSessionTask, context: TransportContext, completion: @escaping Completion) {
        let entry = Entry(context: context, completion: completion)
        tasks.withLock { $0[task.taskIdentifier] = entry }
    }

    private func context(of task: URLSessionTask) -> TransportContext? {
        tasks.withLock { $0[task.taskIdentifier]?.context }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let length = response.expectedContentLength
        let entry = tasks.withLock { tasks -> Entry? in
            guard let entry = tasks[dataTask.taskIdentifier] else { return nil }
            entry.response = response as? HTTPURLResponse
            entry.body = Data()
            entry.expectedLength = length > 0 && length < 64 << 20 ? Int(length) : 0
            return entry
        }
        entry?.context.didReceiveResponse()
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let entry = tasks.withLock { tasks -> Entry? in
            guard let entry = tasks[dataTask.taskIdentifier] else { return nil }
            if entry.body.isEmpty {
                entry.body = data  // kept as it came: a body that arrives in one piece is not copied
            } else {
                // The first append copies the first piece into a buffer of the announced length.
                if entry.expectedLength > entry.body.count { entry.body.reserveCapacity(entry.expectedLength) }
                entry.body.append(data)
            }
            return entry
        }
        entry?.context.didReceive(bytes: data.count)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        context(of: task)?.didRedirect(statusCode: response.statusCode, to: request.url)
        completionHandler(request)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(FoundationNetworking)
            // FoundationNetworking asks this for a 401 that names a realm (`WWW-Authenticate: Basic realm=…`,
            // `Bearer realm=…`) once the whole answer has arrived, and, with no credential to offer, leaves
            // the task unfinished for ever. Deliver the 401 as it came, for validation and interceptors to
            // judge; then end the URLSessionTask, whose own completion finds nothing left to report.
            let answered = tasks.withLock { tasks -> Entry? in
                guard challenge.proposedCredential == nil, tasks[task.taskIdentifier]?.response != nil else {
                    return nil
                }
                return tasks.removeValue(forKey: task.taskIdentifier)
            }
            if let answered, let response = answered.response {
                answered.completion(.success((answered.body, response)))
                DispatchQueue.global().async { completionHandler(.cancelAuthenticationChallenge, nil) }
            } else {
                DispatchQueue.global().async { completionHandler(.performDefaultHandling, nil) }
            }
        #else
            completionHandler(.performDefaultHandling, nil)
        #endif
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let error {
            // FoundationNetworking reports a connection closed mid-body as an unknown error (-1): once the
            // head has arrived, that is a lost connection, as transient as a reset.
            if let urlError = error as? URLError, urlError.code == .unknown, entry.response != nil {
                return entry.completion(.failure(URLError(.networkConnectionLost, userInfo: urlError.userInfo)))
            }
            entry.completion(.failure(error))
        } else if let response = entry.response ?? task.response as? HTTPURLResponse {
            entry.completion(.success((entry.body, response)))
        } else {
            entry.completion(.failure(URLError(.badServerResponse)))
        }
    }
}
