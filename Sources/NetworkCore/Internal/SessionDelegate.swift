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

    private struct Entry {
        var body = Data()
        var response: HTTPURLResponse?
        let context: TransportContext
        let completion: Completion
    }

    private let tasks = Locked<[Int: Entry]>([:])

    func register(_ task: URLSessionTask, context: TransportContext, completion: @escaping Completion) {
        tasks.withLock { $0[task.taskIdentifier] = Entry(context: context, completion: completion) }
    }

    private func context(of task: URLSessionTask) -> TransportContext? {
        tasks.withLock { $0[task.taskIdentifier]?.context }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let context = tasks.withLock { tasks -> TransportContext? in
            let id = dataTask.taskIdentifier
            tasks[id]?.response = response as? HTTPURLResponse
            tasks[id]?.body = Data()
            if response.expectedContentLength > 0, response.expectedContentLength < 64 << 20 {
                tasks[id]?.body.reserveCapacity(Int(response.expectedContentLength))
            }
            return tasks[id]?.context
        }
        context?.didReceiveResponse()
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let context = tasks.withLock { tasks -> TransportContext? in
            tasks[dataTask.taskIdentifier]?.body.append(data)
            return tasks[dataTask.taskIdentifier]?.context
        }
        context?.didReceive(bytes: data.count)
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
            entry.completion(.failure(error))
        } else if let response = entry.response ?? task.response as? HTTPURLResponse {
            entry.completion(.success((entry.body, response)))
        } else {
            entry.completion(.failure(URLError(.badServerResponse)))
        }
    }
}
