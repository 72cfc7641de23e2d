import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The Apple-platform socket of `URLSessionTransport` decided on its state alone: what the session, the
/// app and the timers report, in a row's order, and what the state says to do after each. Every row ends
/// the socket exactly once.
@Suite("URLSessionTransport's socket state: each event's action, and one end whatever the order")
struct URLSessionSocketStateTests {
    typealias State = URLSessionSocket.State

    enum Step: CustomStringConvertible, Sendable {
        case opened(String?)
        case message
        case receiveFailed(tooLarge: Bool)
        case pause
        case resume
        case closeFrame(UInt16)
        case close
        case cancel
        case completed(failed: Bool, status: Int?)
        case closeTimeout
        case openingTimeout
        case tick
        case pong(Int)
        case pongTimeout(Int)
        case sendTimeout

        var description: String {
            switch self {
            case .opened(let chosen): "101" + (chosen.map { " (\($0))" } ?? "")
            case .message: "message"
            case .receiveFailed(let tooLarge): tooLarge ? "receive: too large" : "receive failed"
            case .pause: "pause"
            case .resume: "resume"
            case .closeFrame(let code): "close frame \(code)"
            case .close: "app closes"
            case .cancel: "app cancels"
            case .completed(let failed, let status):
                "completed" + (failed ? " with an error" : "") + (status.map { " \($0)" } ?? "")
            case .closeTimeout: "close timeout"
            case .openingTimeout: "opening timeout"
            case .tick: "keep-alive tick"
            case .pong(let number): "pong \(number)"
            case .pongTimeout(let number): "pong \(number) timeout"
            case .sendTimeout: "send timeout"
            }
        }
    }

    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let steps: [Step]
        /// What the state says after each step ("-" for nothing).
        let actions: [String]
        var testDescription: String { name }
    }

    static func name(_ end: State.End?) -> String {
        switch end {
        case nil: "-"
        case .finish: "end: finish"
        case .answer: "end: answer"
        case .fail(let error as WebSocketError): "end: \(error)"
        case .fail(let error as URLError): "end: URLError \(error.code.rawValue)"
        case .fail(let error as NetworkError): "end: \(error.localizedDescription)"
        case .fail(let error): "end: \(error)"
        }
    }

    static func perform(_ step: Step, on state: inout State) -> String {
        switch step {
        case .opened(let chosen):
            switch state.opened(choosing: chosen) {
            case .report: return state.receiving ? "report, read" : "report"
            case .refuse(let error): return "refuse: \(error)"
            case .ignore: return "-"
            }
        case .message:
            let (deliver, readNext) = state.received()
            return deliver ? (readNext ? "deliver, read" : "deliver") : "-"
        case .receiveFailed(let tooLarge):
            return state.receiveFailed(tooLarge: tooLarge) ? "cancel task" : "-"
        case .pause:
            state.pause()
            return "-"
        case .resume:
            return state.resume() ? "read" : "-"
        case .closeFrame(let code):
            return state.closeFrame(WebSocketCloseCode(rawValue: code), reason: "r") ? "report close" : "-"
        case .close:
            return state.close() ? "send close" : "-"
        case .cancel:
            switch state.cancel() {
            case .stopTask: return "cancel task"
            case .closeGoingAway: return "send 1001"
            case .none: return "-"
            }
        case .completed(let failed, let status):
            return name(state.completed(error: failed ? URLError(.networkConnectionLost) : nil, status: status))
        case .closeTimeout:
            return name(state.closeTimedOut())
        case .openingTimeout:
            return state.openingTimedOut() ? "cancel task" : "-"
        case .tick:
            return state.keepAliveTick().map { "ping \($0)" } ?? "-"
        case .pong(let number):
            state.pong(number)
            return "-"
        case .pongTimeout(let number):
            return state.pongTimedOut(number) ? "cancel task" : "-"
        case .sendTimeout:
            return state.sendTimedOut(seconds: 30) ? "cancel task" : "-"
        }
    }

    static let lost =
        "end: "
        + WebSocketError.closed(
            .abnormalClosure,
            reason: "the connection was lost: \(URLError(.networkConnectionLost).localizedDescription)"
        ).description

    static let rows: [Row] = [
        Row(
            name: "open, two messages, the server's normal close",
            steps: [.opened(nil), .message, .message, .closeFrame(1000), .completed(failed: false, status: 101)],
            actions: ["report, read", "deliver, read", "deliver, read", "report close", "end: finish"]),
        Row(
            name: "the server closes with 4001: the end fails with its code, even if the task completes cleanly",
            steps: [.opened(nil), .closeFrame(4001), .message, .completed(failed: false, status: 101)],
            actions: [
                "report, read", "report close", "deliver, read",
                "end: " + WebSocketError.closed(WebSocketCloseCode(rawValue: 4001), reason: "r").description,
            ]),
        Row(
            name: "an answer other than 101: its head, then finish, for the pool to judge",
            steps: [.completed(failed: true, status: 401), .opened(nil), .completed(failed: false, status: nil)],
            actions: ["end: answer", "-", "-"]),
        Row(
            name: "no answer at all: the task's error",
            steps: [.completed(failed: true, status: nil)], actions: ["end: URLError -1005"]),
        Row(
            name: "a subprotocol not offered: refused at once, nothing after counts",
            steps: [.opened("chat.v9"), .message, .completed(failed: true, status: 101)],
            actions: [
                "refuse: "
                    + WebSocketError.upgradeRefused(
                        "the server chose the subprotocol chat.v9, which was not offered"
                    ).description, "-", "-",
            ]),
        Row(
            name: "the subprotocol offered is taken",
            steps: [.opened("chat.v2"), .closeFrame(1001), .completed(failed: false, status: 101)],
            actions: ["report, read", "report close", "end: finish"]),
        Row(
            name: "the connection lost while open: an abnormal closure",
            steps: [.opened(nil), .message, .receiveFailed(tooLarge: false), .completed(failed: true, status: 101)],
            actions: ["report, read", "deliver, read", "cancel task", lost]),
        Row(
            name: "a message over the limit: too large, whatever the completion says",
            steps: [.opened(nil), .receiveFailed(tooLarge: true), .completed(failed: true, status: 101)],
            actions: [
                "report, read", "cancel task", "end: " + NetworkError.responseTooLarge(limit: 64).localizedDescription,
            ]),
        Row(
            name: "paused: no read after a message until resumed; a resume with a read waiting reads nothing more",
            steps: [
                .opened(nil), .pause, .message, .resume, .resume, .message, .closeFrame(1000),
                .completed(failed: false, status: 101),
            ],
            actions: ["report, read", "-", "deliver", "read", "-", "deliver, read", "report close", "end: finish"]),
        Row(
            name: "paused before the 101: it opens without a read",
            steps: [.pause, .opened(nil), .resume, .cancel, .completed(failed: true, status: 101)],
            actions: ["-", "report", "read", "send 1001", "end: URLError -999"]),
        Row(
            name: "the app closes: one close frame, and the completion finishes",
            steps: [.opened(nil), .close, .close, .message, .closeFrame(1000), .completed(failed: false, status: 101)],
            actions: ["report, read", "send close", "-", "deliver, read", "report close", "end: finish"]),
        Row(
            name: "the app closes and no answer comes: the close timeout finishes it, the late completion is nothing",
            steps: [.opened(nil), .close, .closeTimeout, .completed(failed: true, status: 101), .closeTimeout],
            actions: ["report, read", "send close", "end: finish", "-", "-"]),
        Row(
            name: "cancelled before the 101: the task is cancelled, the late 101 counts for nothing",
            steps: [.cancel, .opened(nil), .completed(failed: true, status: nil), .cancel],
            actions: ["cancel task", "-", "end: URLError -999", "-"]),
        Row(
            name: "cancelled while open: 1001, then cancelled",
            steps: [.opened(nil), .cancel, .cancel, .completed(failed: false, status: 101)],
            actions: ["report, read", "send 1001", "cancel task", "end: URLError -999"]),
        Row(
            name: "the opening's deadline: timed out, once",
            steps: [.openingTimeout, .openingTimeout, .completed(failed: true, status: nil)],
            actions: ["cancel task", "-", "end: URLError -1001"]),
        Row(
            name: "the opening's deadline after the 101: nothing",
            steps: [.opened(nil), .openingTimeout, .closeFrame(1000), .completed(failed: false, status: 101)],
            actions: ["report, read", "-", "report close", "end: finish"]),
        Row(
            name: "keep-alive: a silent socket is pinged once at a time; a pong in time keeps it",
            steps: [
                .opened(nil), .tick, .tick, .pong(1), .pongTimeout(1), .tick, .tick, .message, .tick, .tick, .pong(3),
                .close, .completed(failed: false, status: 101),
            ],
            actions: [
                "report, read", "ping 1", "-", "-", "-", "-", "ping 2", "deliver, read", "-", "-", "-", "send close",
                "end: finish",
            ]),
        Row(
            name: "keep-alive: no pong in time fails it, an old ping's timeout does not",
            steps: [
                .opened(nil), .tick, .pong(1), .tick, .tick, .pongTimeout(1), .pongTimeout(3), .pongTimeout(2),
                .completed(failed: true, status: 101),
            ],
            actions: [
                "report, read", "ping 1", "-", "-", "ping 2", "-", "-", "cancel task",
                "end: " + WebSocketError.pongTimeout(seconds: 5).description,
            ]),
        Row(
            name: "a send not taken in time fails the socket, once; another after it, or after the end, is nothing",
            steps: [
                .sendTimeout, .opened(nil), .sendTimeout, .sendTimeout, .completed(failed: true, status: 101),
                .sendTimeout,
            ],
            actions: [
                "-", "report, read", "cancel task", "-", "end: " + WebSocketError.sendTimedOut(seconds: 30).description,
                "-",
            ]),
    ]

    @Test("each event's action, in order", arguments: rows)
    func actions(_ row: Row) {
        var state = State(offered: ["chat.v2", "chat.v1"], limit: 64, pongTimeout: 5)
        var actions: [String] = []
        for step in row.steps { actions.append(Self.perform(step, on: &state)) }
        #expect(actions == row.actions)
        #expect(actions.filter { $0.hasPrefix("end: ") || $0.hasPrefix("refuse: ") }.count == 1)
        #expect(state.phase == .ended)
    }
}

#if canImport(FoundationNetworking)
    /// The socket's driver and the session delegate's routing, run for real on Linux, where
    /// FoundationNetworking's task fails at once ("WebSockets not supported by libcurl"): the session's
    /// completion reaches the socket, which ends once. (The open socket's path runs on Apple platforms only.)
    @Suite(
        "URLSessionTransport's socket over FoundationNetworking's task, which cannot open here", .timeLimit(.minutes(1))
    )
    struct URLSessionSocketDriverTests {
        /// Records what a socket reports.
        final class Reports: TransportReceiver, @unchecked Sendable {  // `kept` is locked.
            private let kept = Locked<[String]>([])
            var all: [String] { kept.withLock { $0 } }
            func receive(head: HTTPURLResponse) -> Bool {
                kept.withLock { $0.append("head \(head.statusCode)") }
                return true
            }
            func receive(body: Data) -> Bool { true }
            func sent(totalBytes: Int, expected: Int?) {}
            func redirected(statusCode: Int, to url: URL?) {}
            func finish() { kept.withLock { $0.append("finish") } }
            func fail(_ error: any Error) {
                kept.withLock {
                    $0.append("fail \((error as? URLError).map { "URLError \($0.code.rawValue)" } ?? "\(error)")")
                }
            }

            /// Waits, at most 10 s, for a report.
            func waitForEnd() async throws {
                var tries = 0
                while all.isEmpty, tries < 200 {
                    tries += 1
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
        }

        static let request = URLRequest(url: URL(string: "ws://127.0.0.1:9/chat")!)

        @Test("a socket the session cannot open ends once, with the session's error; the delegate lets it go")
        func sessionError() async throws {
            let delegate = SessionDelegate(fileUploads: .withLength)
            let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
            defer { session.invalidateAndCancel() }
            let reports = Reports()
            weak var weakSocket: URLSessionSocket?
            do {
                let socket = delegate.startWebSocket(
                    Self.request, options: WebSocketOptions(subprotocols: ["chat.v1"]), in: session,
                    events: TransportEvents(taskID: "s", receiver: reports))
                weakSocket = socket
                try await reports.waitForEnd()
                socket.cancel()  // after the end: nothing more
                socket.close(.normalClosure, reason: "")
                await #expect(throws: WebSocketError.notOpen) { try await socket.send(.text("x")) }
            }
            delegate.control.sync {}
            #expect(reports.all == ["fail URLError \(URLError.Code.unsupportedURL.rawValue)"])
            #expect(weakSocket == nil)
        }

        @Test("cancelled before its task is made: no task is made, and it ends once, cancelled")
        func cancelledFirst() async throws {
            let delegate = SessionDelegate(fileUploads: .withLength)
            let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
            defer { session.invalidateAndCancel() }
            let reports = Reports()
            delegate.control.suspend()
            let socket = delegate.startWebSocket(
                Self.request, options: WebSocketOptions(), in: session,
                events: TransportEvents(taskID: "s", receiver: reports))
            socket.cancel()
            delegate.control.resume()
            try await reports.waitForEnd()
            delegate.control.sync {}
            #expect(reports.all == ["fail URLError \(URLError.Code.cancelled.rawValue)"])
            let tasks = await withCheckedContinuation { continuation in
                session.getAllTasks { continuation.resume(returning: $0.count) }
            }
            #expect(tasks == 0)
        }
    }
#endif
