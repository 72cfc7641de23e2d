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

    /// A running transfer's answer so far. A class, so that each event finds it with one lookup and
    /// changes it in place: a struct in the dictionary was copied out and back for every field set.
    final class Entry: @unchecked Sendable {
        // @unchecked Sendable: every `var` is read and written only under `tasks`' lock.
        /// The `URLSessionTask` carrying the transfer now, once ``start(_:in:context:completion:)`` has made it:
        /// a redirect the delegate follows itself replaces it.
        var task: URLSessionTask?
        /// Cancelled by ``Transfer/cancel()``: no further task is started for it.
        var cancelled = false
        /// The request to send once the current task has delivered its redirect response (see
        /// ``urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)``).
        var followUp: URLRequest?
        var body = Data()
        var response: HTTPURLResponse?
        /// The body's length as the response announced it, or 0.
        var expectedLength = 0
        /// Redirects so far.
        var hops = 0
        let context: TransportContext
        let completion: Completion

        init(context: TransportContext, completion: @escaping Completion) {
            self.context = context
            self.completion = completion
        }
    }

    private let tasks = Locked<[Int: Entry]>([:])
    /// Where transfers are cancelled, follow-up tasks started, and tasks started while the session is
    /// busy: `URLSessionTask.cancel()`, `URLSession.dataTask(with:)` and `resume()` wait for the session's
    /// queue, so they run on a queue of the transport's own, never on the session's queue, a busy
    /// caller's thread or a shared global queue, where the wait would hold up the pool's deadline timers
    /// and everything else queued there (see ``start(_:in:context:completion:)`` for the one exception).
    let control = DispatchQueue(label: "NetworkCore.URLSessionTransport.control")

    /// Starts a transfer of `request` in `session`, reporting to `context`, and returns without waiting
    /// for a busy session: making and resuming a task both wait for the session's queue, which a busy
    /// session (a large answer, thousands of headers) can hold for seconds, and the caller, and with it
    /// the pool's deadline for the task, must not wait with it. So while other transfers of the session
    /// run, the task is made and resumed on ``control``; when none does, the queue is idle and the caller
    /// makes it itself, sparing a request sent alone the hop to another thread.
    func start(
        _ request: URLRequest, in session: URLSession, context: TransportContext, completion: @escaping Completion
    ) -> Entry {
        let entry = Entry(context: context, completion: completion)
        if tasks.withLock({ $0.isEmpty }) {
            send(request, for: entry, in: session)
        } else {
            control.async { [self] in send(request, for: entry, in: session) }
        }
        return entry
    }

    /// Sends `request` as the entry's task, unless the entry was cancelled first; on ``control``, or on
    /// the caller's thread while the session has no other transfer.
    private func send(_ request: URLRequest, for entry: Entry, in session: URLSession) {
        // Cancelled while waiting here: no task is made. A session keeps every task it made until that
        // task completes, and one never resumed never does.
        if tasks.withLock({ _ in entry.cancelled }) { return entry.completion(.failure(URLError(.cancelled))) }
        let task = session.dataTask(with: request)
        let cancelled = tasks.withLock { tasks in
            guard !entry.cancelled else { return true }
            entry.task = task
            entry.followUp = nil
            entry.response = nil
            entry.body = Data()
            tasks[task.taskIdentifier] = entry
            return false
        }
        if cancelled {
            task.cancel()  // made, never resumed: cancelling completes it, and the session lets it go
            return entry.completion(.failure(URLError(.cancelled)))
        }
        task.resume()
    }

    /// Cancels the entry's current task, and any task it would start, on ``control``.
    func cancel(_ entry: Entry) {
        let task = tasks.withLock { _ in
            entry.cancelled = true
            return entry.task
        }
        // A task not made yet is not made: `send` sees the entry cancelled, on the same serial queue.
        if let task { control.async { task.cancel() } }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let length = response.expectedContentLength
        let found = tasks.withLock { tasks -> (entry: Entry, tooLarge: Bool)? in
            guard let entry = tasks[dataTask.taskIdentifier] else { return nil }
            // Announced too large: not read at all; the entry leaves now and completes below.
            if length > entry.context.maximumResponseBytes {
                tasks.removeValue(forKey: dataTask.taskIdentifier)
                return (entry, true)
            }
            entry.response = response as? HTTPURLResponse
            entry.body = Data()
            entry.expectedLength = length > 0 && length < 64 << 20 ? Int(length) : 0
            return (entry, false)
        }
        guard let (entry, tooLarge) = found else { return completionHandler(.allow) }
        if tooLarge {
            completionHandler(.cancel)
            return self.tooLarge(entry, task: dataTask)
        }
        entry.context.didReceiveResponse()
        completionHandler(.allow)
    }

    /// Ends the transfer with ``NetworkError/responseTooLarge(limit:)``: its task is cancelled and its
    /// entry, already removed, completes now.
    private func tooLarge(_ entry: Entry, task: URLSessionTask) {
        control.async { task.cancel() }
        entry.completion(.failure(NetworkError.responseTooLarge(limit: entry.context.maximumResponseBytes)))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        var overflowed: Entry?
        let entry = tasks.withLock { tasks -> Entry? in
            guard let entry = tasks[dataTask.taskIdentifier] else { return nil }
            guard entry.body.count + data.count <= entry.context.maximumResponseBytes else {
                overflowed = tasks.removeValue(forKey: dataTask.taskIdentifier)
                return nil
            }
            if entry.body.isEmpty {
                entry.body = data  // kept as it came: a body that arrives in one piece is not copied
            } else {
                // The first append copies the first piece into a buffer of the announced length.
                if entry.expectedLength > entry.body.count { entry.body.reserveCapacity(entry.expectedLength) }
                entry.body.append(data)
            }
            return entry
        }
        if let overflowed { return tooLarge(overflowed, task: dataTask) }
        entry?.context.didReceive(bytes: data.count)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let entry = tasks.withLock { tasks -> (Entry, Int)? in
            guard let entry = tasks[task.taskIdentifier] else { return nil }
            entry.hops += 1
            return (entry, entry.hops)
        }
        // The request that was redirected: the platform's proposed next request is not trusted with method,
        // body or headers (FoundationNetworking drops a 307's body and keeps credentials on another host).
        guard let (entry, hop) = entry, let previous = task.currentRequest ?? task.originalRequest else {
            return completionHandler(nil)
        }
        let policy = entry.context.redirectPolicy
        guard policy.allows(hop: hop, from: previous.url, to: request.url) else { return completionHandler(nil) }
        entry.context.didRedirect(statusCode: response.statusCode, to: request.url)
        let next = RedirectPolicy.nextRequest(after: previous, statusCode: response.statusCode, proposed: request)
        #if canImport(FoundationNetworking)
            // FoundationNetworking sends a followed redirect without a body: a 307 or 308 that keeps one is
            // not followed by it, but sent again as a task of its own once this one has ended.
            if let body = next.httpBody, !body.isEmpty {
                tasks.withLock { _ in entry.followUp = next }
                return completionHandler(nil)
            }
        #endif
        completionHandler(next)
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
                control.async { completionHandler(.cancelAuthenticationChallenge, nil) }
            } else {
                control.async { completionHandler(.performDefaultHandling, nil) }
            }
        #else
            completionHandler(.performDefaultHandling, nil)
        #endif
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // The entry and a follow-up it may have, in one critical section: every transfer ends here.
        let ended = tasks.withLock { tasks -> (entry: Entry, followUp: URLRequest?)? in
            tasks.removeValue(forKey: task.taskIdentifier).map { ($0, $0.followUp) }
        }
        guard let (entry, followUp) = ended else { return }
        if error == nil, let followUp {
            return control.async { [self] in send(followUp, for: entry, in: session) }
        }
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
