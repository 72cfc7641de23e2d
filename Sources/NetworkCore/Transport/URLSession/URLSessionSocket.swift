import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A WebSocket of ``URLSessionTransport`` on Apple platforms: a `URLSessionWebSocketTask` of the transport's
/// session. What the session, the app and the timers report goes through ``State``, which decides each
/// step and the one end; this class does what it says, outside its lock, and reports to the pool.
///
/// The platform's task checks the server's frames and answers its pings. The opening request carries the
/// offered subprotocols; its `timeoutInterval` bounds the wait for the `101`. A close code
/// `URLSessionWebSocketTask` does not name is sent as it is on Apple platforms (its `CloseCode` is an
/// open enumeration there). Compiled on every platform, so that Linux builds check it; on Linux,
/// ``URLSessionTransport`` refuses sockets instead (FoundationNetworking's task does not work with the
/// toolchain's libcurl).
final class URLSessionSocket: WebSocketConnection, @unchecked Sendable {
    // @unchecked Sendable: `locked` holds every mutable field; the rest is immutable.
    private struct Fields {
        var state: State
        var task: URLSessionWebSocketTask?
        var keepAlive: (any DispatchSourceTimer)?
        /// The sends the platform has not completed, by number: when each times out, and its sender.
        var sending: [Int: (deadline: DispatchTime, sender: CheckedContinuation<Void, any Error>)] = [:]
        var nextSend = 0
        /// A watchdog for the sends is scheduled (one at a time, for the earliest deadline).
        var watchdogArmed = false
    }
    private let locked: Locked<Fields>
    let options: WebSocketOptions
    let events: TransportEvents
    /// The transport's control queue: the task's calls and the timers run there.
    private let control: DispatchQueue

    init(options: WebSocketOptions, events: TransportEvents, control: DispatchQueue) {
        self.options = options
        self.events = events
        self.control = control
        locked = Locked(
            Fields(
                state: State(
                    offered: options.subprotocols, limit: options.maximumMessageBytes ?? .max,
                    pongTimeout: options.pongTimeout)))
    }

    /// The opening request as the task sends it: the subprotocols offered.
    static func opening(_ request: URLRequest, options: WebSocketOptions) -> URLRequest {
        var request = request
        if !options.subprotocols.isEmpty {
            request.setValue(options.subprotocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol")
        }
        return request
    }

    /// Whether the app cancelled the socket before its task was made: then none is made, and this reports
    /// the end.
    func cancelledBeforeStart() -> Bool {
        let end = locked.withLock { fields -> State.End? in
            fields.state.isCancelled ? fields.state.completed(error: URLError(.cancelled), status: nil) : nil
        }
        guard let end else { return false }
        report(end)
        return true
    }

    /// The task is made: it starts (or, cancelled meanwhile, is cancelled: its completion reports the end),
    /// the opening bounded by `timeout`.
    func start(_ task: URLSessionWebSocketTask, timeout: TimeInterval) {
        task.maximumMessageSize = options.maximumMessageBytes ?? .max
        let cancelled = locked.withLock { fields -> Bool in
            fields.task = task
            return fields.state.isCancelled
        }
        guard !cancelled else { return task.cancel() }
        task.resume()
        guard timeout > 0, timeout.isFinite else { return }
        control.asyncAfter(deadline: .now() + timeout) { [weak self] in
            guard let self, locked.withLock({ $0.state.openingTimedOut() }) else { return }
            task.cancel()
        }
    }

    /// The server answered `101`.
    func opened(choosing chosen: String?, response: URLResponse?) {
        let (opening, task) = locked.withLock { ($0.state.opened(choosing: chosen), $0.task) }
        guard let task else { return }
        switch opening {
        case .ignore:
            return
        case .refuse(let error):
            // From the session's delegate: the cancel goes to the control queue, as every other here does.
            control.async { task.cancel() }
            events.fail(error)
        case .report:
            let head =
                response as? HTTPURLResponse
                ?? HTTPURLResponse(
                    url: task.originalRequest?.url ?? URL(fileURLWithPath: "/"), statusCode: 101,
                    httpVersion: "HTTP/1.1",
                    headerFields: chosen.map { ["Sec-WebSocket-Protocol": $0] } ?? [:])
            guard let head, events.receive(head: head) else { return cancel() }
            startKeepAlive()
            if locked.withLock({ $0.state.receiving }) { receive(on: task) }
        }
    }

    /// Reads the next message; each read asks for the next, unless the pool paused the socket.
    private func receive(on task: URLSessionWebSocketTask) {
        task.receive { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let message):
                let (deliver, readNext) = locked.withLock { $0.state.received() }
                guard deliver else { return }
                let passed: WebSocketMessage
                switch message {
                case .string(let text): passed = .text(text)
                case .data(let data): passed = .binary(data)
                @unknown default: return
                }
                guard events.receive(message: passed) else { return cancel() }
                if readNext { receive(on: task) }
            case .failure(let error):
                let nsError = error as NSError
                let tooLarge = nsError.domain == NSPOSIXErrorDomain && nsError.code == Int(EMSGSIZE)
                if locked.withLock({ $0.state.receiveFailed(tooLarge: tooLarge) }) { control.async { task.cancel() } }
            }
        }
    }

    /// The server's close frame.
    func closed(code: Int, reason: Data?) {
        let closeCode = WebSocketCloseCode(rawValue: UInt16(clamping: max(0, code)))
        let text = reason.map { String(decoding: $0, as: UTF8.self) } ?? ""
        if locked.withLock({ $0.state.closeFrame(closeCode, reason: text) }) {
            events.receive(closeCode: closeCode, reason: text)
        }
    }

    /// The task completed: the socket's end, unless it was reported before.
    func completed(error: (any Error)?, response: URLResponse?) {
        let status = (response as? HTTPURLResponse)?.statusCode
        let end = locked.withLock { fields -> State.End? in
            fields.keepAlive?.cancel()
            fields.keepAlive = nil
            return fields.state.completed(error: error, status: status)
        }
        if case .answer = end, let head = response as? HTTPURLResponse {
            if events.receive(head: head) { events.finish() }
            return
        }
        report(end)
    }

    private func report(_ end: State.End?) {
        switch end {
        case nil: return
        case .finish, .answer: events.finish()
        case .fail(let error): events.fail(error)
        }
    }

    func send(_ message: WebSocketMessage) async throws {
        let task = locked.withLock { $0.state.isOpen ? $0.task : nil }
        guard let task else { throw WebSocketError.notOpen }
        let sent: URLSessionWebSocketTask.Message
        switch message {
        case .text(let text): sent = .string(text)
        case .binary(let data): sent = .data(data)
        }
        // The first of the completion and the send timeout (the watchdog's) resumes the sender.
        let timeout = max(0, options.sendTimeout)
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (number, arm) = locked.withLock { fields -> (Int, Bool) in
                    let number = fields.nextSend
                    fields.nextSend += 1
                    fields.sending[number] = (.now() + timeout, continuation)
                    defer { fields.watchdogArmed = true }
                    return (number, !fields.watchdogArmed)
                }
                if arm { control.asyncAfter(deadline: .now() + timeout) { [weak self] in self?.watchSends() } }
                task.send(sent) { error in
                    guard let sender = self.locked.withLock({ $0.sending.removeValue(forKey: number)?.sender }) else {
                        return
                    }
                    if let error { sender.resume(throwing: error) } else { sender.resume() }
                }
            }
        } catch let error as WebSocketError {
            throw error
        } catch {
            throw locked.withLock({ $0.state.isOpen }) ? error : WebSocketError.notOpen
        }
    }

    /// The sends past their timeout fail, and the socket with them (the platform cannot withdraw a message);
    /// the watchdog is scheduled again for the earliest deadline left.
    private func watchSends() {
        let now = DispatchTime.now()
        let timeout = max(0, options.sendTimeout)
        let (late, next, failed, task) = locked.withLock { fields in
            let late = fields.sending.filter { $0.value.deadline <= now }
            for number in late.keys { fields.sending.removeValue(forKey: number) }
            let next = fields.sending.values.map(\.deadline).min()
            fields.watchdogArmed = next != nil
            let failed = !late.isEmpty && fields.state.sendTimedOut(seconds: timeout)
            return (late.values.map(\.sender), next, failed, fields.task)
        }
        for sender in late { sender.resume(throwing: WebSocketError.sendTimedOut(seconds: timeout)) }
        if failed { task?.cancel() }
        if let next { control.asyncAfter(deadline: next) { [weak self] in self?.watchSends() } }
    }

    func close(_ code: WebSocketCloseCode, reason: String) {
        let task = locked.withLock { $0.state.close() ? $0.task : nil }
        guard let task else { return }
        let sent = URLSessionWebSocketTask.CloseCode(rawValue: Int(code.rawValue)) ?? .normalClosure
        control.async { task.cancel(with: sent, reason: reason.isEmpty ? nil : Data(reason.utf8)) }
        let wait = max(0, options.closeTimeout)
        control.asyncAfter(deadline: .now() + wait) { [weak self] in
            guard let self else { return }
            let end = locked.withLock { $0.state.closeTimedOut() }
            guard end != nil else { return }
            task.cancel()
            report(end)
        }
    }

    func cancel() {
        let (action, task) = locked.withLock { ($0.state.cancel(), $0.task) }
        guard let task else { return }
        switch action {
        case .none: return
        case .stopTask: control.async { task.cancel() }
        case .closeGoingAway: control.async { task.cancel(with: .goingAway, reason: nil) }
        }
    }

    func pauseReceiving() { locked.withLock { $0.state.pause() } }

    func resumeReceiving() {
        let task = locked.withLock { $0.state.resume() ? $0.task : nil }
        if let task { receive(on: task) }
    }

    /// Every ping interval: a silent socket gets a ping, and must have its pong within the pong timeout.
    private func startKeepAlive() {
        guard let interval = options.pingInterval, interval > 0 else { return }
        let timer = DispatchSource.makeTimerSource(queue: control)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.keepAliveTick() }
        locked.withLock { $0.keepAlive = timer }
        timer.resume()
    }

    private func keepAliveTick() {
        let (number, task) = locked.withLock { ($0.state.keepAliveTick(), $0.task) }
        guard let number, let task else { return }
        task.sendPing { [weak self] error in
            if error == nil { self?.locked.withLock { $0.state.pong(number) } }
        }
        control.asyncAfter(deadline: .now() + max(0, options.pongTimeout)) { [weak self] in
            guard let self, locked.withLock({ $0.state.pongTimedOut(number) }) else { return }
            task.cancel()
        }
    }
}
