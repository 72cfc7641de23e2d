import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The pool's receiver of one transfer, a request of a task's attempt: what the transport reports goes
/// through it to the pool's state (progress, the end), and the body to where the task delivers it.
///
/// - An answer the pool accepts goes to the task's delivery: into memory (up to the task's
///   `maximumResponseBytes`), to a file, or to a stream; any other answer is read into memory, so that
///   its error body can be read.
/// - A redirect the task's ``RedirectPolicy`` follows is read and dropped, and the pool sends the next
///   request: the redirect stage (`TaskPool+Redirects.swift`) decides, the same way whatever the transport.
/// The transport's control of the transfer is kept by the pool's state, which cancels it when the task ends.
final class TransferReceiver: TransportReceiver, SampleDataSource, @unchecked Sendable {
    // @unchecked Sendable: a transport reports one event at a time (its contract), so the `var`s, touched
    // only by those reports, are never touched at once.
    let pool: TaskPool
    let task: DataTask
    let attempt: Int
    let hop: Int
    /// The request this transfer sends, and the attempt's own as prepared (before redirects), which
    /// the interceptors deciding on a retry see.
    let request: URLRequest
    let attemptRequest: URLRequest
    private var ended = false
    private var head: ResponseHead?
    private var body = Data()
    private var expectedLength = 0
    /// Whether the answer goes to the task's delivery (a file, a stream) rather than into memory.
    private var delivering = false
    /// The request to send next, when the answer is a redirect the pool follows; its body is counted
    /// against the limit and dropped.
    private var redirect: (next: URLRequest, status: Int)?
    private var dropped = 0

    init(pool: TaskPool, task: DataTask, attempt: Int, hop: Int, request: URLRequest, attemptRequest: URLRequest) {
        self.pool = pool
        self.task = task
        self.attempt = attempt
        self.hop = hop
        self.request = request
        self.attemptRequest = attemptRequest
    }

    func carries(requestsAtOnce count: Int) { pool.capacity(count, for: self) }

    /// The task's endpoint's canned answer, for stand-ins that answer with it.
    var sampleData: Data? { task.plan.endpoint.sampleData }

    func receive(head response: HTTPURLResponse) -> Bool { receive(head: ResponseHead(response)) }

    /// Reads only the status and the fields it needs: the head's `HTTPURLResponse` is made when something
    /// asks for it (a file's or a stream's delivery does, a ``Response`` when its caller does).
    func receive(head response: ResponseHead) -> Bool {
        guard !ended else { return false }
        head = response
        body = Data()
        delivering = false
        redirect = nil
        dropped = 0
        let status = response.statusCode
        if let next = pool.nextHop(after: response, of: self) {
            redirect = (next, status)
            return true  // its body is read and dropped, so that the connection can serve the next request
        }
        let length = response.expectedContentLength
        if let delivery = task.plan.delivery, pool.accepts(status, for: task) {
            do throws(NetworkError) {
                try delivery.begin(response.httpResponse)
            } catch {
                end(.failure(error))
                return false
            }
            delivering = true
            if delivery.reopened { pool.reopened(self) }
        } else {
            if length > task.plan.maximumResponseBytes {
                end(.failure(NetworkError.responseTooLarge(limit: task.plan.maximumResponseBytes)))
                return false
            }
            expectedLength = length > 0 && length < 64 << 20 ? Int(length) : 0
        }
        return counts(pool.receivedHead(response, length: length, for: self))
    }

    func receive(body data: Data) -> Bool {
        guard !ended else { return false }
        guard head != nil else {
            end(.failure(URLError(.badServerResponse)))
            return false
        }
        if delivering {
            // Counted before it is passed on, so that a stream's reader sees the task count what it reads.
            guard count(data) else { return false }
            do throws(NetworkError) {
                try task.plan.delivery?.write(data)
            } catch {
                end(.failure(error))
                return false
            }
            return true
        }
        guard data.count <= task.plan.maximumResponseBytes - max(body.count, dropped) else {
            end(.failure(NetworkError.responseTooLarge(limit: task.plan.maximumResponseBytes)))
            return false
        }
        if redirect != nil {
            dropped += data.count
            return true
        }
        if body.isEmpty {
            body = data  // kept as it came: a body that arrives in one piece is not copied
        } else {
            // The first append copies the first piece into a buffer of the announced length.
            if expectedLength > body.count { body.reserveCapacity(expectedLength) }
            body.append(data)
        }
        return count(data)
    }

    /// A message arrived on the task's open socket: counted, then handed to its delivery.
    func receive(message: WebSocketMessage) -> Bool {
        guard !ended else { return false }
        guard delivering, let delivery = task.plan.delivery else {
            end(.failure(URLError(.badServerResponse)))
            return false
        }
        guard counts(pool.received(message.byteCount, for: self)) else { return false }
        do throws(NetworkError) {
            try delivery.receive(message: message)
        } catch {
            end(.failure(error))
            return false
        }
        return true
    }

    func receive(closeCode: WebSocketCloseCode, reason: String) {
        guard !ended, delivering else { return }
        task.plan.delivery?.receive(closeCode: closeCode, reason: reason)
    }

    /// Tells the pool that `data` arrived; whether the transfer still counts.
    private func count(_ data: Data) -> Bool {
        data.isEmpty || counts(pool.received(data.count, for: self))
    }

    func sent(totalBytes: Int, expected: Int?) {
        guard !ended else { return }
        pool.sent(totalBytes, expected: expected, for: self)
    }

    func redirected(statusCode: Int, to url: URL?) {
        guard !ended else { return }
        _ = counts(pool.transportRedirected(statusCode, to: url, for: self))
    }

    func finish() {
        guard !ended else { return }
        guard let head else { return end(.failure(URLError(.badServerResponse))) }
        if let redirect {
            ended = true
            body = Data()
            return pool.redirected(self, to: redirect.next, status: redirect.status)
        }
        end(.success((body, head)))
    }

    func fail(_ error: any Error) {
        guard !ended else { return }
        end(.failure(error))
    }

    /// Passes on whether the transfer still counts for the task; once it does not (the task has ended),
    /// the transfer ends here, as cancelled, and the transport is told to stop.
    private func counts(_ counts: Bool) -> Bool {
        if !counts { end(.failure(NetworkError.cancelled)) }
        return counts
    }

    private func end(_ result: Result<(Data, ResponseHead), any Error>) {
        ended = true
        var result = result
        if delivering, let delivery = task.plan.delivery {
            let complete: Bool
            if case .success = result { complete = true } else { complete = false }
            do throws(NetworkError) {
                try delivery.transferEnded(complete: complete)
            } catch {
                if complete { result = .failure(error) }
            }
        }
        body = Data()
        pool.transferEnded(self, with: result)
    }
}
