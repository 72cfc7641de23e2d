import Foundation
import Testing

@testable import NetworkCore

/// An event that can reach a running task, in any order with the others.
enum OrderEvent: String, CaseIterable, CustomStringConvertible {
    /// `cancel(id:)`.
    case cancel
    /// The task's deadline passes and the timer fires.
    case deadline
    /// A caller's Swift task is cancelled: it withdraws.
    case withdrawA, withdrawB
    /// The transport's answer arrives: handed to a caller or to the pool, who reports the outcome at once
    /// or later (`report`).
    case answer
    /// The one handed the answer reports the attempt's outcome.
    case report

    var description: String { rawValue }
}

/// Runs one order of events against a task with callers `a` (the one that sent it) and `b` (joined) and a
/// completion handler `h`, a 5 s deadline, its transfer under way; then checks what must hold whatever the
/// order.
struct OrderRun {
    var driver = PoolStateDriver()
    let key: TaskKey
    let tokens: (a: UInt32, b: UInt32)
    let transfer: TestWork
    /// Who was handed the answer, and whether they have reported.
    var handedTo: String?
    var reported = false
    var withdrawn: Set<String> = []

    init() {
        guard case .registered(let key, _, let a, true) = driver.submit("t", deadline: 5) else {
            fatalError("not registered")
        }
        driver.attach("a", token: a, to: key)
        guard case .joined = driver.submit("t", handler: "h"), case .joined(_, _, let b) = driver.submit("t") else {
            fatalError("not joined")
        }
        driver.attach("b", token: b, to: key)
        self.key = key
        tokens = (a, b)
        transfer = driver.startTransfer(key)!
    }

    mutating func apply(_ event: OrderEvent) {
        switch event {
        case .cancel: _ = driver.cancel("t")
        case .deadline: driver.fireTimers(after: 5)
        case .withdrawA: withdraw("a", tokens.a)
        case .withdrawB: withdraw("b", tokens.b)
        case .answer:
            switch driver.transferEnded(key) {
            case .dropped: break
            case .finish(let caller, _, _): handedTo = caller?.name ?? "pool"
            }
        case .report:
            guard let finisher = handedTo, !reported else { return }
            reported = true
            if case .ended(let outcome) = driver.finished(key), finisher != "pool" {
                // The caller that finished returns the task's outcome: its one resumption.
                driverResumed(finisher, outcome)
            }
        }
    }

    private mutating func withdraw(_ name: String, _ token: UInt32) {
        let before = driver.resumes[name]?.count ?? 0
        driver.withdraw(token, from: key)
        if (driver.resumes[name]?.count ?? 0) > before { withdrawn.insert(name) }
    }

    private mutating func driverResumed(_ name: String, _ outcome: PoolStateDriver.Outcome) {
        finisherOutcome = (name, PoolStateDriver.name(outcome))
    }

    var finisherOutcome: (name: String, outcome: String)?

    /// Every waiter's resumptions, the finisher's own return included.
    func resumptions(of name: String) -> [String] {
        var resumed = driver.resumes[name] ?? []
        if let finisherOutcome, finisherOutcome.name == name { resumed.append(finisherOutcome.outcome) }
        return resumed
    }
}

@Suite("Pool state: exactly once, in every order of events")
struct PoolStateOrderTests {
    /// Every order of the events, each once (720 orders).
    static let orders: [[OrderEvent]] = permutations(OrderEvent.allCases)

    static func permutations(_ events: [OrderEvent]) -> [[OrderEvent]] {
        guard let first = events.first else { return [[]] }
        return permutations(Array(events.dropFirst())).flatMap { rest in
            (0...rest.count).map { index in
                var order = rest
                order.insert(first, at: index)
                return order
            }
        }
    }

    @Test("720 orders of cancel, deadline, two withdrawals, the answer and its report: one end, one resumption each")
    func everyOrder() {
        #expect(Self.orders.count == 720)
        for order in Self.orders {
            var run = OrderRun()
            for event in order { run.apply(event) }
            // The one handed the answer always reports it, at once or later.
            run.apply(.report)
            let ends = run.driver.ends(of: "t")
            // Cancel and deadline are in every order: the task has ended, once.
            #expect(ends.count == 1, "\(order): ended \(ends)")
            guard let outcome = ends.first else { continue }
            for name in ["a", "b", "h"] {
                let resumed = run.resumptions(of: name)
                #expect(resumed.count == 1, "\(order): \(name) resumed \(resumed)")
                // A caller that withdrew got `cancelled`; every other waiter the task's outcome.
                let expected = run.withdrawn.contains(name) ? "cancelled" : outcome
                #expect(resumed.first == expected, "\(order): \(name) got \(resumed), the task ended \(outcome)")
            }
            // Its transfer was stopped once if the task ended before the answer, never after it.
            let answeredFirst =
                order.firstIndex(of: .answer)!
                < min(
                    order.firstIndex(of: .cancel)!, order.firstIndex(of: .deadline)!)
            #expect(run.transfer.stops <= 1)
            if !answeredFirst { #expect(run.transfer.stops == 1, "\(order): transfer stopped \(run.transfer.stops)") }
            // Nothing of it is left running: no id, no timer, no slot; one end logged.
            #expect(run.driver.state.activeCount == 0)
            #expect(run.driver.state.timerCount == 0)
            #expect(run.driver.running == 0)
            let endLogs = run.driver.logged.filter { ["finished t", "failed t", "cancelled t"].contains($0) }
            #expect(endLogs.count == 1, "\(order): \(endLogs)")
        }
    }

    @Test(
        "without cancel or deadline, the answer ends the task with its outcome for every caller, in any order of withdrawals"
    )
    func answerWins() {
        let events: [OrderEvent] = [.withdrawB, .answer, .report]
        for order in Self.permutations(events) {
            var run = OrderRun()
            for event in order { run.apply(event) }
            run.apply(.report)
            #expect(run.driver.ends(of: "t") == ["ok"], "\(order)")
            #expect(run.resumptions(of: "a") == ["ok"], "\(order)")
            #expect(run.resumptions(of: "h") == ["ok"], "\(order)")
            #expect(run.resumptions(of: "b") == [run.withdrawn.contains("b") ? "cancelled" : "ok"], "\(order)")
        }
    }

    @Test("the last caller withdrawing cancels the task, unless a caller away finishing it still counts")
    func lastWithdrawal() {
        // No handler: a and b only.
        var driver = PoolStateDriver()
        guard case .registered(let key, _, let a, _) = driver.submit("t"),
            case .joined(_, _, let b) = driver.submit("t")
        else {
            Issue.record("not registered")
            return
        }
        driver.attach("a", token: a, to: key)
        driver.attach("b", token: b, to: key)
        let transfer = driver.startTransfer(key)
        // The answer goes to `a`, the first caller; `b` withdrawing then is not the last.
        guard case .finish(let caller?, false, _) = driver.transferEnded(key) else {
            Issue.record("the answer did not go to a caller")
            return
        }
        #expect(caller.name == "a")
        driver.withdraw(b, from: key)
        #expect(driver.resumes["b"] == ["cancelled"])
        #expect(driver.ends(of: "t").isEmpty, "the task went on for the caller finishing it")
        guard case .ended(let outcome) = driver.finished(key) else {
            Issue.record("not ended")
            return
        }
        #expect(PoolStateDriver.name(outcome) == "ok")
        #expect(driver.ends(of: "t") == ["ok"])
        #expect(transfer?.stops == 0)

        // Before any answer, the last withdrawal cancels, and stops the transfer.
        var other = PoolStateDriver()
        let key2 = other.send("u", as: "c")
        let work = other.startTransfer(key2)
        other.withdraw(1, from: key2)
        #expect(other.resumes["c"] == ["cancelled"])
        #expect(other.ends(of: "u") == ["cancelled"])
        #expect(work?.stops == 1)
    }

    @Test("a caller that comes back after finishing finds the outcome; one cancelled before it waits withdraws at once")
    func comingBack() {
        var driver = PoolStateDriver()
        let key = driver.send("t", as: "a")
        _ = driver.startTransfer(key)
        _ = driver.transferEnded(key)
        // Cancelled while it finished: the end does not resume the caller that is away.
        let cancelled = driver.cancel("t")
        #expect(cancelled)
        #expect(driver.resumes["a"] == nil)
        // It reports, and is given the task's outcome; attaching again also gives it at once.
        guard case .ended(let outcome) = driver.finished(key) else {
            Issue.record("not ended")
            return
        }
        #expect(PoolStateDriver.name(outcome) == "cancelled")
        driver.attach("a", token: 1, to: key)
        #expect(driver.resumes["a"] == ["cancelled"])
    }
}
