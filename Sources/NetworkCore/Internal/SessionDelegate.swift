import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The data delegate of a ``URLSessionTransport``'s session: collects each task's body,
/// counts its bytes, and completes its continuation exactly once.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: all mutable state is in `tasks`, a `Locked`.
    typealias Completion = @Sendable (Result<(Data, HTTPURLResponse), any Error>) -> Void

    private struct Entry {
        var body = Data()
        var response: HTTPURLResponse?
        let onBytes: @Sendable (Int) -> Void
        let completion: Completion
    }

    private let tasks = Locked<[Int: Entry]>([:])

    func register(_ task: URLSessionTask, onBytes: @escaping @Sendable (Int) -> Void, completion: @escaping Completion)
    {
        tasks.withLock { $0[task.taskIdentifier] = Entry(onBytes: onBytes, completion: completion) }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        tasks.withLock { tasks in
            tasks[dataTask.taskIdentifier]?.response = response as? HTTPURLResponse
            tasks[dataTask.taskIdentifier]?.body = Data()
            if response.expectedContentLength > 0, response.expectedContentLength < 64 << 20 {
                tasks[dataTask.taskIdentifier]?.body.reserveCapacity(Int(response.expectedContentLength))
            }
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let onBytes = tasks.withLock { tasks -> (@Sendable (Int) -> Void)? in
            tasks[dataTask.taskIdentifier]?.body.append(data)
            return tasks[dataTask.taskIdentifier]?.onBytes
        }
        onBytes?(data.count)
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
