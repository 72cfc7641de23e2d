import Foundation
import Testing

@testable import NetworkCore

/// A socket's life on the pool's state alone, event by event: what the pool's route and a socket's delivery
/// report, in the order a test row gives, with no transport, no thread and no clock but the driver's.
@Suite("Pool state: a socket task's order of events, open, lost, reopened, cancelled at each point")
struct PoolStateSocketTests {
    typealias State = PoolState<TestWaiter, TestHandle>

    /// One event of a socket's life.
    enum Step: CustomStringConvertible, Sendable {
        /// The attempt's transfer starts, its transport's control attached.
        case start(Int)
        /// The server's `101` for the attempt.
        case open(Int)
        /// A message of 3 bytes on the attempt's connection.
        case message(Int)
        /// The attempt's connection is lost; the delivery asks to open again after the wait, as
        /// `TaskPool.reopen` reports it (`nil`: it does not, and the failure ends the task).
        case lost(Int, wait: TimeInterval?)
        /// The attempt's answer opened the task again (a reconnection).
        case reopened(Int)
        /// The closing handshake of the attempt completed.
        case closed(Int)
        /// The clock moves to this many seconds after the start; due timers fire.
        case clock(Double)
        /// `cancel(id:)`.
        case cancel

        var description: String {
            switch self {
            case .start(let attempt): "start #\(attempt)"
            case .open(let attempt): "101 #\(attempt)"
            case .message(let attempt): "message #\(attempt)"
            case .lost(let attempt, let wait): "lost #\(attempt)" + (wait.map { ", again in \($0) s" } ?? "")
            case .reopened(let attempt): "reopened #\(attempt)"
            case .closed(let attempt): "closed #\(attempt)"
            case .clock(let seconds): "at \(seconds) s"
            case .cancel: "cancel"
            }
        }
    }

    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let steps: [Step]
        /// The one end the task must have.
        let end: String
        /// The events logged, in order.
        let logged: [String]
        /// The attempts begun by the state (after a wait).
        let begun: [String]
        var testDescription: String { name + ": " + steps.map(\.description).joined(separator: ", ") }
    }

    static let lost = NetworkError.transport(WebSocketError.closed(.abnormalClosure, reason: "lost"))

    static let rows: [Row] = [
        Row(
            name: "open, a message, a normal close", steps: [.start(1), .open(1), .message(1), .closed(1)],
            end: "ok", logged: ["started s", "finished s"], begun: []),
        Row(
            name: "lost and reopened after its wait, then closed",
            steps: [
                .start(1), .open(1), .lost(1, wait: 1), .clock(0.5), .clock(1), .start(2), .open(2), .reopened(2),
                .message(2), .closed(2),
            ],
            end: "ok", logged: ["started s", "retrying s", "reconnected s", "finished s"], begun: ["s#2"]),
        Row(
            name: "lost with no reconnection: failed, once",
            steps: [.start(1), .open(1), .message(1), .lost(1, wait: nil), .clock(5)],
            end: "failed", logged: ["started s", "failed s"], begun: []),
        Row(
            name: "cancelled while it waits to open again: nothing begins after",
            steps: [.start(1), .open(1), .lost(1, wait: 1), .cancel, .clock(2)],
            end: "cancelled", logged: ["started s", "retrying s", "cancelled s"], begun: []),
        Row(
            name: "cancelled while it opens again: the late 101 and reopening count for nothing",
            steps: [.start(1), .open(1), .lost(1, wait: 0), .start(2), .cancel, .open(2), .reopened(2), .closed(2)],
            end: "cancelled", logged: ["started s", "retrying s", "cancelled s"], begun: ["s#2"]),
        Row(
            name: "cancelled before its 101: a late 101, message and close of that attempt are ignored",
            steps: [.start(1), .cancel, .open(1), .message(1), .closed(1)],
            end: "cancelled", logged: ["started s", "cancelled s"], begun: []),
        Row(
            name: "cancelled while open: the connection's end after it changes nothing",
            steps: [.start(1), .open(1), .message(1), .cancel, .lost(1, wait: 1), .clock(2)],
            end: "cancelled", logged: ["started s", "cancelled s"], begun: []),
        Row(
            name: "a report of an earlier attempt after the next has begun is ignored",
            steps: [
                .start(1), .open(1), .lost(1, wait: 0), .start(2), .message(1), .reopened(1), .lost(1, wait: 0),
                .open(2), .reopened(2), .closed(2),
            ],
            end: "ok", logged: ["started s", "retrying s", "reconnected s", "finished s"], begun: ["s#2"]),
    ]

    @Test("every socket ends once, with the events logged in order", arguments: rows)
    func life(_ row: Row) {
        // One slot in the pool, held by a request: a socket takes none, so it runs anyway.
        var driver = PoolStateDriver(total: 1, perHost: 1)
        let request = driver.send("request")
        guard case .registered(let key, _, _, true) = driver.submit("s", takesSlot: false) else {
            Issue.record("the socket did not begin beside a request holding the only slot")
            return
        }
        for step in row.steps {
            switch step {
            case .start(let attempt): driver.startTransfer(key, attempt: attempt)
            case .open(let attempt):
                driver.report { state, now in state.head(key, attempt: attempt, hop: 0, extent: (0, nil), at: now) }
            case .message(let attempt):
                driver.report { state, now in state.received(key, attempt: attempt, hop: 0, count: 3, at: now) }
            case .lost(let attempt, let wait):
                guard case .finish = driver.transferEnded(key, attempt: attempt, received: nil, status: nil) else {
                    continue
                }
                if let wait {
                    if case .deciding = driver.finished(
                        key, attempt: attempt, with: .failure(Self.lost), retrying: Self.lost)
                    {
                        driver.decided(key, attempt: attempt, .retry(after: wait))
                    }
                } else {
                    driver.finished(key, attempt: attempt, with: .failure(Self.lost))
                }
            case .reopened(let attempt):
                driver.run { state, effects, now in state.reopened(key, attempt: attempt, at: now, into: &effects) }
            case .closed(let attempt):
                if case .finish = driver.transferEnded(key, attempt: attempt, received: 0, status: 101) {
                    driver.finished(key, attempt: attempt)
                }
            case .clock(let seconds): driver.fireTimers(after: seconds)
            case .cancel: _ = driver.cancel("s")
            }
        }
        #expect(driver.ends(of: "s") == [row.end])
        #expect(driver.logged.filter { $0.hasSuffix(" s") } == row.logged)
        #expect(driver.begun.filter { $0.hasPrefix("s#") } == row.begun)
        #expect(driver.phase(request) == .preparing, "the request kept its slot")
        #expect(driver.running == 1)
    }
}
