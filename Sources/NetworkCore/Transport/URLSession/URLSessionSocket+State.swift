import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionSocket {
    /// The life of one socket on a `URLSessionWebSocketTask`, as a value: each event the session, the app
    /// or a timer reports changes it and says what to do, and ``URLSessionSocket`` does it outside its lock.
    /// Its end is decided once, here: by a close frame, a message too large, a missing pong, a deadline,
    /// the app's close or cancel, or the task's completion, whichever comes first.
    struct State: Sendable {
        enum Phase: Sendable, Equatable {
            /// The opening request is out.
            case opening
            /// The server answered `101`: messages go both ways.
            case open
            /// The app closed or cancelled: a close frame is out, the end is awaited.
            case closing
            /// The end was decided and reported.
            case ended
        }

        /// How the socket ends, once decided.
        enum End: Sendable {
            /// After a closing handshake: `finish()`.
            case finish
            /// The answer to the opening was not `101`: its head is reported, then `finish()`, for the pool
            /// to judge as any answer (a `401` renews the credential).
            case answer
            /// `fail(_:)` with the error.
            case fail(any Error)
        }

        /// What to do about the server's `101`.
        enum Opening: Sendable {
            /// Report the head, then read the first message (and start the keep-alive).
            case report
            /// The server broke a rule of the opening: cancel the task and fail with the error.
            case refuse(WebSocketError)
            /// The socket is already ending: nothing.
            case ignore
        }

        /// What to do about the app's cancel.
        enum Cancel: Sendable, Equatable {
            /// Cancel the task (not open yet, or closing already): the session reports its end.
            case stopTask
            /// Send a close frame saying going away: the session reports the end.
            case closeGoingAway
            /// Nothing: the socket has ended.
            case none
        }

        private(set) var phase = Phase.opening
        /// The subprotocols the opening offered.
        let offered: [String]
        /// The largest message taken.
        let limit: Int
        /// How long a ping waits for its pong.
        let pongTimeout: TimeInterval
        /// Set by the first of a close frame, a message too large, a missing pong, a deadline: what the
        /// task's completion reports.
        private var outcome: End?
        /// The app cancelled.
        private(set) var isCancelled = false
        private var paused = false
        /// A `receive` of the task is waiting for a message.
        private(set) var receiving = false
        /// A message or a pong came since the last keep-alive tick.
        private var heard = false
        /// The number of the last ping sent, and of the one still awaiting its pong.
        private var pings = 0
        private var awaitedPong: Int?

        init(offered: [String], limit: Int, pongTimeout: TimeInterval) {
            self.offered = offered
            self.limit = limit
            self.pongTimeout = pongTimeout
        }

        /// Whether a message can be sent now.
        var isOpen: Bool { phase == .open }

        /// The server answered `101`, choosing `chosen` among the subprotocols offered.
        mutating func opened(choosing chosen: String?) -> Opening {
            // Cancelled, or past its deadline, while the 101 was on its way: the task's completion ends it.
            guard phase == .opening, !isCancelled, outcome == nil else { return .ignore }
            if let chosen, !chosen.isEmpty, !offered.contains(chosen) {
                let refusal = WebSocketError.upgradeRefused(
                    "the server chose the subprotocol \(chosen), which was not offered")
                outcome = .fail(refusal)
                phase = .ended
                return .refuse(refusal)
            }
            phase = .open
            receiving = !paused
            return .report
        }

        /// A message arrived: whether to pass it on (not after the end), and whether to read the next one
        /// at once (not while the pool has paused the socket: ``resume()`` reads it).
        mutating func received() -> (deliver: Bool, readNext: Bool) {
            receiving = false
            guard phase == .open || phase == .closing else { return (false, false) }
            heard = true
            receiving = !paused
            return (true, receiving)
        }

        /// A `receive` failed: the connection is over. `tooLarge` when the message was over the limit.
        /// Returns whether to cancel the task (so that it completes, which reports the end).
        mutating func receiveFailed(tooLarge: Bool) -> Bool {
            receiving = false
            guard phase != .ended else { return false }
            if tooLarge, outcome == nil { outcome = .fail(NetworkError.responseTooLarge(limit: limit)) }
            return true
        }

        /// The pool paused the socket (its reader fell behind): no message is read until ``resume()``.
        mutating func pause() { paused = true }

        /// The pool resumed the socket: whether to read the next message now.
        mutating func resume() -> Bool {
            paused = false
            guard phase == .open || phase == .closing, !receiving else { return false }
            receiving = true
            return true
        }

        /// The server's close frame: whether to report it (once). A normal code ends the socket as finished,
        /// another fails it with ``WebSocketError/closed(_:reason:)``, unless its end was decided before.
        mutating func closeFrame(_ code: WebSocketCloseCode, reason: String) -> Bool {
            guard phase != .ended else { return false }
            heard = true
            if outcome == nil {
                let normal = code == .normalClosure || code == .goingAway || code == .noStatusReceived
                outcome = normal ? .finish : .fail(WebSocketError.closed(code, reason: reason))
            }
            return true
        }

        /// The app closes: whether to send the close frame (once, and only while open).
        mutating func close() -> Bool {
            guard phase == .open else { return false }
            phase = .closing
            return true
        }

        /// The app cancels (the pool's `cancel(id:)`, or its deadline).
        mutating func cancel() -> Cancel {
            switch phase {
            case .ended: return .none
            case .opening, .closing:
                isCancelled = true
                return .stopTask
            case .open:
                isCancelled = true
                phase = .closing
                return .closeGoingAway
            }
        }

        /// The task completed, with `error` and, when the server answered, its `status`: the end to report,
        /// or `nil` when it was reported already.
        mutating func completed(error: (any Error)?, status: Int?) -> End? {
            let was = phase
            guard was != .ended else { return nil }
            phase = .ended
            if let outcome { return outcome }
            switch was {
            case .opening:
                if isCancelled { return .fail(URLError(.cancelled)) }
                if let status, status != 101 { return .answer }
                return .fail(error ?? URLError(.badServerResponse))
            case .closing:
                // The app's close or cancel, answered or not: the closing it asked for.
                return isCancelled ? .fail(URLError(.cancelled)) : .finish
            case .open, .ended:
                guard let error else { return .finish }
                return .fail(
                    WebSocketError.closed(
                        .abnormalClosure, reason: "the connection was lost: \(error.localizedDescription)"))
            }
        }

        /// The close timeout passed after the app's close with no answer: the end to report now (the task
        /// is cancelled), or `nil` when it has ended.
        mutating func closeTimedOut() -> End? {
            guard phase == .closing else { return nil }
            phase = .ended
            return outcome ?? (isCancelled ? .fail(URLError(.cancelled)) : .finish)
        }

        /// The opening's deadline passed: whether the socket fails as timed out (the task is cancelled,
        /// and its completion reports it).
        mutating func openingTimedOut() -> Bool {
            guard phase == .opening, outcome == nil else { return false }
            outcome = .fail(URLError(.timedOut))
            return true
        }

        /// A send waited `seconds` without its completion: whether the socket fails for it (the task is
        /// cancelled, and its completion reports it: the platform cannot withdraw the message).
        mutating func sendTimedOut(seconds: TimeInterval) -> Bool {
            guard phase == .open, outcome == nil else { return false }
            outcome = .fail(WebSocketError.sendTimedOut(seconds: seconds))
            return true
        }

        /// A keep-alive tick: the number of a ping to send, when nothing was heard since the last tick and
        /// no ping awaits its pong.
        mutating func keepAliveTick() -> Int? {
            guard phase == .open, awaitedPong == nil else { return nil }
            if heard {
                heard = false
                return nil
            }
            pings += 1
            awaitedPong = pings
            return pings
        }

        /// The pong of ping `number` came.
        mutating func pong(_ number: Int) {
            guard awaitedPong == number else { return }
            awaitedPong = nil
            heard = true
        }

        /// Ping `number`'s pong timeout passed: whether the socket fails for it (the task is cancelled, and
        /// its completion reports it).
        mutating func pongTimedOut(_ number: Int) -> Bool {
            guard awaitedPong == number, phase == .open, outcome == nil else { return false }
            outcome = .fail(WebSocketError.pongTimeout(seconds: pongTimeout))
            return true
        }
    }
}
