import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The data delegate of a ``URLSessionTransport``'s session: passes each task's head, body chunks,
/// bytes sent and end to the transfer's ``TransportEvents``, exactly once to its end. It counts bytes as
/// they arrive because FoundationNetworking never updates a data task's progress.
///
/// On FoundationNetworking its methods run on the session's own queue (see ``URLSessionTransport``),
/// so none of them may wait for the session: what would (answering an authentication challenge,
/// which suspends and resumes the task) is handed to another queue.
final class SessionDelegate: NSObject, URLSessionDataDelegate, URLSessionWebSocketDelegate, @unchecked Sendable {
    // @unchecked Sendable: all mutable state is in `tasks` and `sockets`, each a `Locked`.

    /// A running transfer: the control the pool cancels it with. A class, so that each event finds it
    /// with one lookup and changes it in place.
    final class Entry: TransportControl, @unchecked Sendable {
        // @unchecked Sendable: every `var` is read and written only under the delegate's `tasks` lock.
        /// The `URLSessionTask` carrying the transfer, once ``start(_:body:in:events:)`` has made it.
        var task: URLSessionTask?
        /// Cancelled by ``cancel()``: no further task is started for it.
        var cancelled = false
        /// Paused by the pool: the current task is suspended.
        var paused = false
        /// The response's head has arrived in the current task.
        var answered = false
        #if canImport(FoundationNetworking)
            /// The current task's body, when it is read from a file: why it stopped, if it did.
            var bodyStream: FileBodyStream?
        #endif
        let body: RequestBody
        let events: TransportEvents
        let delegate: SessionDelegate

        init(body: RequestBody, events: TransportEvents, delegate: SessionDelegate) {
            self.body = body
            self.events = events
            self.delegate = delegate
        }

        /// Cancels the transfer; its events get `URLError(.cancelled)` unless it has had its answer.
        ///
        /// Not on the calling thread: this may run where a Swift task's status is locked (a cancellation
        /// handler) or on the session's own queue, and `URLSessionTask.cancel()` waits for that queue, where
        /// a delegate call may be resuming this very task. It runs on the transport's own control queue (see
        /// ``SessionDelegate/control``), so that the wait holds up nothing else.
        func cancel() { delegate.cancel(self) }

        func pauseReceiving() { delegate.setPaused(true, self) }

        func resumeReceiving() { delegate.setPaused(false, self) }
    }

    private let tasks = Locked<[Int: Entry]>([:])
    /// The open WebSockets (Apple platforms), by their task's identifier.
    private let sockets = Locked<[Int: URLSessionSocket]>([:])
    /// How file bodies are sent (see ``URLSessionTransport/FileUploads``).
    let fileUploads: URLSessionTransport.FileUploads

    init(fileUploads: URLSessionTransport.FileUploads) {
        self.fileUploads = fileUploads
    }
    /// Where transfers are cancelled, follow-up tasks started, and tasks started while the session is
    /// busy: `URLSessionTask.cancel()`, `URLSession.dataTask(with:)` and `resume()` wait for the session's
    /// queue, so they run on a queue of the transport's own, never on the session's queue, a busy
    /// caller's thread or a shared global queue, where the wait would hold up the pool's deadline timers
    /// and everything else queued there (see ``start(_:body:in:events:)`` for the one exception).
    let control = DispatchQueue(label: "NetworkCore.URLSessionTransport.control")

    /// Starts a transfer of `request` in `session`, reporting to `events`, and returns without waiting
    /// for a busy session: making and resuming a task both wait for the session's queue, which a busy
    /// session (a large answer, thousands of headers) can hold for seconds, and the caller, and with it
    /// the pool's deadline for the task, must not wait with it. So while other transfers of the session
    /// run, the task is made and resumed on ``control``; when none does, the queue is idle and the caller
    /// makes it itself, sparing a request sent alone the hop to another thread.
    /// A start from one of the session's own callbacks (a transfer's end that lets a queued task run) also
    /// goes through ``control``: on Linux those run on the session's queue, and making a task there would
    /// wait for that queue, which libdispatch traps on ("dispatch_sync called on queue already owned").
    func start(_ request: URLRequest, body: RequestBody, in session: URLSession, events: TransportEvents) -> Entry {
        let entry = Entry(body: body, events: events, delegate: self)
        if !SessionCallbackThread.isCurrent, tasks.withLock({ $0.isEmpty }) {
            send(request, for: entry, in: session)
        } else {
            control.async { [self] in send(request, for: entry, in: session) }
        }
        return entry
    }

    /// Sends `request` as the entry's task, unless the entry was cancelled first; on ``control``, or on
    /// the caller's thread while the session has no other transfer.
    private func send(_ request: URLRequest, for entry: Entry, in session: URLSession) {
        #if canImport(FoundationNetworking)
            // FoundationNetworking counts a request's timeout in whole seconds and drops the fraction: 0.5 s
            // timed out at once, 1.5 s after 1 s. Rounded up, it fires at most a second late, never early.
            // Only then is the request copied: the default (60 s) and most timeouts are whole already.
            var request = request
            let whole = request.timeoutInterval.rounded(.up)
            if whole != request.timeoutInterval { request.timeoutInterval = whole }
        #endif
        // Cancelled while waiting here: no task is made. A session keeps every task it made until that
        // task completes, and one never resumed never does.
        if tasks.withLock({ _ in entry.cancelled }) { return entry.events.fail(URLError(.cancelled)) }
        let task: URLSessionTask
        switch entry.body {
        case .file(let url) where Self.sendsBody(request):
            #if canImport(FoundationNetworking)
                // Always a stream of the file (see ``FileBodyStream``: FoundationNetworking's own file upload
                // can trap when the transfer ends early); with its length, exactly that many bytes.
                var streamed = request
                let length: Int?
                switch fileUploads {
                case .withLength:
                    guard
                        let announced = request.value(forHTTPHeaderField: "Content-Length").flatMap({ Int($0) })
                            ?? RequestBody.file(url).length
                    else {
                        return entry.events.fail(
                            NetworkError.fileAccessFailed(path: url.path, reason: "its size cannot be read"))
                    }
                    length = announced
                    streamed.setValue(String(announced), forHTTPHeaderField: "Content-Length")
                    // libcurl sends a body stream chunked unless the request names a Transfer-Encoding; one
                    // with a blank value turns that off and is itself not sent (CURLOPT_HTTPHEADER).
                    streamed.setValue(" ", forHTTPHeaderField: "Transfer-Encoding")
                case .chunked:
                    length = nil
                    streamed.setValue(nil, forHTTPHeaderField: "Content-Length")
                }
                let stream = FileBodyStream(url: url, length: length)
                streamed.httpBodyStream = stream
                tasks.withLock { _ in entry.bodyStream = stream }
                task = session.dataTask(with: streamed)
            #else
                switch fileUploads {
                case .withLength:
                    task = session.uploadTask(with: request, fromFile: url)
                case .chunked:
                    // A stream of the file, read as the connection takes bytes; with no length, it is sent chunked.
                    guard let stream = InputStream(url: url) else {
                        return entry.events.fail(
                            NetworkError.fileAccessFailed(path: url.path, reason: "it cannot be opened for reading"))
                    }
                    var streamed = request
                    streamed.httpBodyStream = stream
                    streamed.setValue(nil, forHTTPHeaderField: "Content-Length")
                    task = session.dataTask(with: streamed)
                }
            #endif
        default:
            task = session.dataTask(with: request)
        }
        let cancelled = tasks.withLock { tasks in
            guard !entry.cancelled else { return true }
            entry.task = task
            tasks[task.taskIdentifier] = entry
            return false
        }
        if cancelled {
            task.cancel()  // made, never resumed: cancelling completes it, and the session lets it go
            return entry.events.fail(URLError(.cancelled))
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

    /// Suspends or resumes the entry's current task, on ``control``; on FoundationNetworking, does nothing.
    ///
    /// FoundationNetworking suspends a running data task by taking its transfer off the session, and on
    /// resume starts the request over: the body comes again from its first byte, after the bytes already
    /// delivered. A suspend whose work runs after the transfer has ended traps ("Fatal error" in
    /// `_NativeProtocol.stopLoading`). Holding the body callback instead would hold every session of the
    /// process: FoundationNetworking runs all of them on one shared serial queue (`URLSession.sharedQueue`).
    /// So on Linux the transfer is never paused; ``BodyStream`` bounds what waits unread instead.
    func setPaused(_ paused: Bool, _ entry: Entry) {
        #if !canImport(FoundationNetworking)
            let task = tasks.withLock { _ -> URLSessionTask? in
                guard entry.paused != paused, !entry.cancelled else { return nil }
                entry.paused = paused
                return entry.task
            }
            guard let task else { return }
            control.async {
                if paused { task.suspend() } else { task.resume() }
            }
        #endif
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let entry = tasks.withLock { tasks -> Entry? in
            guard let entry = tasks[dataTask.taskIdentifier] else { return nil }
            entry.answered = true
            return entry
        }
        guard let entry else { return completionHandler(.allow) }
        guard let response = response as? HTTPURLResponse else {
            completionHandler(.cancel)
            return stop(entry, task: dataTask, reporting: URLError(.badServerResponse))
        }
        if entry.events.receive(head: response) { return completionHandler(.allow) }
        // Over: too large, or its task has ended. Nothing more is reported.
        completionHandler(.cancel)
        stop(entry, task: dataTask, reporting: nil)
    }

    /// Ends the entry: it leaves the table, its task is cancelled, and `error`, if any, is its end.
    private func stop(_ entry: Entry, task: URLSessionTask, reporting error: (any Error)?) {
        tasks.withLock { tasks in
            if tasks[task.taskIdentifier] === entry { tasks.removeValue(forKey: task.taskIdentifier) }
        }
        control.async { task.cancel() }
        if let error { entry.events.fail(error) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let entry = tasks.withLock({ $0[dataTask.taskIdentifier] }) else { return }
        if !entry.events.receive(body: data) { stop(entry, task: dataTask, reporting: nil) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        guard let entry = tasks.withLock({ $0[task.taskIdentifier] }) else { return }
        entry.events.sent(
            totalBytes: Int(totalBytesSent),
            expected: totalBytesExpectedToSend > 0 ? Int(totalBytesExpectedToSend) : nil)
    }

    /// A redirect is never followed here: its response is the transfer's answer, and the pool follows it
    /// as the task's policy says (with a transfer of its own, its body read anew).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// Whether a request with `request`'s method sends the transfer's file body: not a `GET` or `HEAD`.
    private static func sendsBody(_ request: URLRequest) -> Bool {
        request.httpMethod != "GET" && request.httpMethod != "HEAD"
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
                guard challenge.proposedCredential == nil, tasks[task.taskIdentifier]?.answered == true else {
                    return nil
                }
                return tasks.removeValue(forKey: task.taskIdentifier)
            }
            if let answered {
                answered.events.finish()
                control.async { completionHandler(.cancelAuthenticationChallenge, nil) }
            } else {
                control.async { completionHandler(.performDefaultHandling, nil) }
            }
        #else
            completionHandler(.performDefaultHandling, nil)
        #endif
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let socket = sockets.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) {
            return socket.completed(error: error, response: task.response)
        }
        // Every transfer ends here, once: its entry leaves the table.
        let ended = tasks.withLock { tasks -> (entry: Entry, answered: Bool)? in
            tasks.removeValue(forKey: task.taskIdentifier).map { ($0, $0.answered) }
        }
        guard let (entry, answered) = ended else { return }
        #if canImport(FoundationNetworking)
            // A file body that could not be sent whole: that is the end, not libcurl's "aborted by callback".
            if error != nil, let failure = tasks.withLock({ _ in entry.bodyStream?.failure }) {
                return entry.events.fail(failure)
            }
        #endif
        if let error {
            // FoundationNetworking reports two transient failures as an unknown error (-1): a connection
            // closed mid-body (once the head has arrived, a lost connection, as transient as a reset), and a
            // connection that could not be made for any reason but a refusal or a time-out (no route: the
            // network is down; libcurl's message then starts "Failed to connect to"), which Apple's
            // URLSession reports as `cannotConnectToHost` or `notConnectedToInternet`.
            if let urlError = error as? URLError, urlError.code == .unknown {
                if answered {
                    return entry.events.fail(
                        Self.unreadableBody(urlError, head: task.response as? HTTPURLResponse)
                            ?? URLError(.networkConnectionLost, userInfo: urlError.userInfo))
                }
                if (urlError.userInfo[NSLocalizedDescriptionKey] as? String)?.hasPrefix("Failed to connect to") == true
                {
                    return entry.events.fail(URLError(.cannotConnectToHost, userInfo: urlError.userInfo))
                }
            }
            entry.events.fail(error)
        } else if !answered, let response = task.response as? HTTPURLResponse {
            // A head the data delegate never saw (a redirect, not followed here): the answer, without a body.
            if entry.events.receive(head: response) { entry.events.finish() }
        } else {
            entry.events.finish()
        }
    }
}

extension SessionDelegate {
    /// Opens a WebSocket with `request` as a `URLSessionWebSocketTask` of `session` (made and resumed on
    /// ``control``), reporting to `events` (see ``URLSessionSocket``).
    func startWebSocket(
        _ request: URLRequest, options: WebSocketOptions, in session: URLSession, events: TransportEvents
    ) -> URLSessionSocket {
        let socket = URLSessionSocket(options: options, events: events, control: control)
        let request = URLSessionSocket.opening(request, options: options)
        control.async { [self] in
            guard !socket.cancelledBeforeStart() else { return }
            let task = session.webSocketTask(with: request)
            sockets.withLock { $0[task.taskIdentifier] = socket }
            socket.start(task, timeout: request.timeoutInterval)
        }
        return socket
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?
    ) {
        sockets.withLock { $0[webSocketTask.taskIdentifier] }?.opened(
            choosing: `protocol`, response: webSocketTask.response)
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask,
        didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?
    ) {
        sockets.withLock { $0[webSocketTask.taskIdentifier] }?.closed(code: closeCode.rawValue, reason: reason)
    }

    /// The content codings libcurl decodes (its message for another names them: "libcurl understands
    /// deflate, gzip, br, zstd content encodings"), and `identity`, which is none.
    static let decodedCodings: Set<String> = ["identity", "gzip", "x-gzip", "deflate", "br", "zstd"]

    /// What FoundationNetworking reports as an unknown error once the head has arrived, when the cause is
    /// the body's coding rather than the connection (libcurl's message then speaks of an encoding): a
    /// `Transfer-Encoding` other than `chunked` (`cannotParseResponse`), a `Content-Encoding` libcurl does
    /// not decode, or a body that its `Content-Encoding` does not describe (`cannotDecodeContentData`).
    /// `nil` for any other cause.
    static func unreadableBody(_ error: URLError, head: HTTPURLResponse?) -> URLError? {
        func codings(_ name: String) -> [String] {
            (head?.value(forHTTPHeaderField: name) ?? "").split(separator: ",")
                .map { String($0).trimmingWhitespace().lowercased() }.filter { !$0.isEmpty }
        }
        let message = error.userInfo[NSLocalizedDescriptionKey] as? String ?? ""
        // "Unrecognized content encoding type…" (for a transfer coding too), "Error while processing content
        // unencoding: …".
        guard message.localizedCaseInsensitiveContains("encoding") else { return nil }
        var info: [String: Any] = [NSUnderlyingErrorKey: error]
        info[NSURLErrorFailingURLErrorKey] = error.userInfo[NSURLErrorFailingURLErrorKey]
        if let unread = codings("Transfer-Encoding").first(where: { $0 != "chunked" }) {
            info[NSLocalizedDescriptionKey] =
                "the response's Transfer-Encoding \"\(unread)\" is not one FoundationNetworking reads (it reads "
                + "chunked), so its body could not be read"
            return URLError(.cannotParseResponse, userInfo: info)
        }
        let contentCodings = codings("Content-Encoding")
        if let unknown = contentCodings.first(where: { !decodedCodings.contains($0) }) {
            info[NSLocalizedDescriptionKey] =
                "the response's Content-Encoding \"\(unknown)\" is not one FoundationNetworking decodes (gzip, "
                + "deflate, br, zstd), so its body could not be read"
            return URLError(.cannotDecodeContentData, userInfo: info)
        }
        let declared = contentCodings.joined(separator: ", ")
        info[NSLocalizedDescriptionKey] =
            "the response's body is not what its Content-Encoding \"\(declared)\" says (libcurl: \(message))"
        return URLError(.cannotDecodeContentData, userInfo: info)
    }
}

/// Marks the threads that are running one of a session's delegate callbacks. With ``URLSessionTransport``'s
/// inline delegate queue (Linux), a callback runs on FoundationNetworking's own queue, where making or
/// resuming a task, which waits for that queue, would trap.
enum SessionCallbackThread {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Whether the current thread is inside ``run(_:)``.
    static var isCurrent: Bool { pthread_getspecific(key) != nil }

    /// Runs `body` marked as a callback of the session.
    static func run(_ body: () -> Void) {
        let outer = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(key, outer) }
        body()
    }
}
