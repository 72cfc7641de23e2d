import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A waiter as the machine sees it, with a name the tests count resumptions by.
struct MachineWaiter: TaskWaiter {
    let name: String
    let isFinisher: Bool
    var isHandler = false
}

/// An event as the pool feeds it to a task's machine.
enum MachineEvent: CustomStringConvertible, Hashable {
    /// A caller waits (`finisher`: the one that started the transfer).
    case add(String, finisher: Bool)
    /// A completion handler waits.
    case addHandler(String)
    /// That caller's Swift task was cancelled.
    case withdraw(String)
    /// The transport answered.
    case answered
    /// The finisher, woken with the answer, ends the task with it.
    case finisherEnds
    case cancel
    case deadline
    case failed

    var description: String {
        switch self {
        case .add(let name, let finisher): finisher ? "add(\(name), finisher)" : "add(\(name))"
        case .addHandler(let name): "addHandler(\(name))"
        case .withdraw(let name): "withdraw(\(name))"
        case .answered: "answered"
        case .finisherEnds: "finisherEnds"
        case .cancel: "cancel"
        case .deadline: "deadline"
        case .failed: "failed"
        }
    }
}

/// Drives a machine as the pool does, performing its actions, and counts what happens.
struct MachineDriver {
    var machine = TaskStateMachine<MachineWaiter>()
    /// How many times each waiter was resumed, and with what.
    var resumed: [String: [String]] = [:]
    var added: Set<String> = []
    var ends = 0
    var finisherHasAnswer = false
    /// How many answers were to be finished off the transport's thread, for a completion handler.
    var finishedElsewhere = 0

    static let response = Response(
        request: URLRequest(url: URL(string: "https://example.com")!),
        httpResponse: HTTPURLResponse(
            url: URL(string: "https://example.com")!, statusCode: 200, httpVersion: nil, headerFields: nil)!,
        body: Data(), duration: 0)

    private mutating func resume(_ waiter: MachineWaiter, _ outcome: DataTask.Outcome) {
        resumed[waiter.name, default: []].append(Self.name(outcome))
    }

    static func name(_ outcome: DataTask.Outcome) -> String {
        switch outcome {
        case .success: "success"
        case .failure(.cancelled): "cancelled"
        case .failure(.deadlineExceeded): "deadline"
        case .failure: "failed"
        }
    }

    private mutating func end(_ outcome: DataTask.Outcome) {
        guard let ending = machine.end(with: outcome) else { return }
        ends += 1
        for waiter in ending.waiters { resume(waiter.resumer, ending.outcome) }
    }

    mutating func apply(_ event: MachineEvent) {
        switch event {
        case .add(let name, let finisher):
            add(MachineWaiter(name: name, isFinisher: finisher))
        case .addHandler(let name):
            add(MachineWaiter(name: name, isFinisher: false, isHandler: true))
        case .withdraw(let name):
            guard let (waiter, wasLast) = machine.withdraw(UInt64(name.unicodeScalars.first!.value)) else { return }
            if wasLast { end(.failure(.cancelled)) }
            resume(waiter, .failure(.cancelled))
        case .answered:
            switch machine.answered() {
            case .resumeFinisher(let finisher):
                // The finisher is resumed with the answer, not an outcome; it ends the task next.
                resumed[finisher.name, default: []].append("answer")
                finisherHasAnswer = true
            case .finish: end(.success(Self.response))
            case .finishElsewhere:
                finishedElsewhere += 1
                end(.success(Self.response))
            case .drop: break
            }
        case .finisherEnds:
            guard finisherHasAnswer else { return }
            end(.success(Self.response))
        case .cancel: end(.failure(.cancelled))
        case .deadline: end(.failure(.deadlineExceeded(seconds: 1)))
        case .failed: end(.failure(.httpStatus(Self.response)))
        }
    }

    private mutating func add(_ waiter: MachineWaiter) {
        added.insert(waiter.name)
        if let outcome = machine.add((UInt64(waiter.name.unicodeScalars.first!.value), waiter)) {
            resume(waiter, outcome)
        }
    }

    /// What must hold after any order of events: the task ended at most once; each caller was resumed
    /// at most once, and exactly once if the task ended or it withdrew; the machine keeps no caller
    /// once ended.
    func check(_ order: [MachineEvent], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(ends <= 1, "\(order): ended \(ends) times", sourceLocation: sourceLocation)
        #expect(machine.hasEnded == (ends == 1), "\(order)", sourceLocation: sourceLocation)
        for name in added {
            let count = resumed[name, default: []].count
            #expect(count <= 1, "\(order): \(name) resumed \(resumed[name]!)", sourceLocation: sourceLocation)
            let waiting = machine.waiters.contains { $0.resumer.name == name }
            #expect(count + (waiting ? 1 : 0) == 1, "\(order): \(name) lost", sourceLocation: sourceLocation)
        }
        if machine.hasEnded {
            #expect(machine.waiters.isEmpty, "\(order)", sourceLocation: sourceLocation)
            #expect(machine.phase == .ended, "\(order)", sourceLocation: sourceLocation)
        }
    }
}

/// All orders of `events`.
private func permutations<T>(_ events: [T]) -> [[T]] {
    guard events.count > 1 else { return [events] }
    return events.indices.flatMap { index -> [[T]] in
        var rest = events
        let first = rest.remove(at: index)
        return permutations(rest).map { [first] + $0 }
    }
}

@Suite("A task's state machine")
struct TaskStateMachineTests {
    /// Orders of events, and the outcome each caller gets.
    static let table: [(order: [MachineEvent], expected: [String: String], outcome: String)] = [
        // The answer comes; the finisher ends the task; a joined caller gets the same outcome.
        (
            [.add("A", finisher: true), .add("B", finisher: false), .answered, .finisherEnds],
            ["A": "answer", "B": "success"], "success"
        ),
        // The answer comes before the finisher waits: the task ends at once; the finisher finds the outcome.
        ([.answered, .add("A", finisher: true)], ["A": "success"], "success"),
        // A cancel before the answer: everyone is cancelled; the late answer is dropped.
        ([.add("A", finisher: true), .cancel, .answered], ["A": "cancelled"], "cancelled"),
        // The finisher has the answer, then a cancel comes: the cancel ends the task; the finisher's end is not a second one.
        (
            [.add("A", finisher: true), .add("B", finisher: false), .answered, .cancel, .finisherEnds],
            ["A": "answer", "B": "cancelled"], "cancelled"
        ),
        // The deadline first, then a cancel: the deadline is the outcome.
        ([.add("A", finisher: true), .deadline, .cancel], ["A": "deadline"], "deadline"),
        // The starter withdraws while a joined caller waits: the task runs on; the answer is finished here.
        (
            [.add("A", finisher: true), .add("B", finisher: false), .withdraw("A"), .answered],
            ["A": "cancelled", "B": "success"], "success"
        ),
        // The last caller withdraws: the task is cancelled.
        ([.add("A", finisher: true), .withdraw("A"), .answered], ["A": "cancelled"], "cancelled"),
        // The finisher has the answer and the joined caller withdraws: not abandoned; the finisher ends it.
        (
            [.add("A", finisher: true), .add("B", finisher: false), .answered, .withdraw("B"), .finisherEnds],
            ["A": "answer", "B": "cancelled"], "success"
        ),
        // A failure, then a caller that comes late gets it at once.
        ([.add("A", finisher: false), .failed, .add("B", finisher: false)], ["A": "failed", "B": "failed"], "failed"),
    ]

    @Test("each order of events ends the task once and tells each caller once", arguments: table.indices)
    func orders(_ index: Int) {
        let (order, expected, outcome) = Self.table[index]
        var driver = MachineDriver()
        for event in order { driver.apply(event) }
        driver.check(order)
        #expect(driver.resumed.mapValues { $0.joined(separator: ",") } == expected, "\(order)")
        #expect(driver.machine.outcome.map(MachineDriver.name) == outcome, "\(order)")
    }

    @Test("every order of two callers, the answer, the finisher's end, a cancel, a deadline and withdrawals")
    func everyOrder() {
        let events: [MachineEvent] = [
            .add("A", finisher: true), .add("B", finisher: false), .answered, .finisherEnds, .cancel, .deadline,
            .withdraw("A"), .withdraw("B"),
        ]
        var orders = 0
        var outcomes: [String: Int] = [:]
        for order in permutations(events) {
            var driver = MachineDriver()
            for event in order { driver.apply(event) }
            driver.check(order)
            orders += 1
            if let outcome = driver.machine.outcome { outcomes[MachineDriver.name(outcome), default: 0] += 1 }
        }
        #expect(orders == 40_320)
        // Every order includes a cancel, so every task ends; each kind of end wins in some order.
        #expect(outcomes.values.reduce(0, +) == 40_320)
        #expect(Set(outcomes.keys) == ["success", "cancelled", "deadline"])
    }

    @Test(
        "an answer no finisher waits for is finished off the transport's thread when a completion handler waits, else at once",
        arguments: [
            ([MachineEvent.addHandler("H"), .answered], 1, ["H": "success"]),
            ([.add("A", finisher: false), .answered], 0, ["A": "success"]),
            ([.add("A", finisher: false), .addHandler("H"), .answered], 1, ["A": "success", "H": "success"]),
            ([.answered, .addHandler("H")], 0, ["H": "success"]),
            (
                [.add("A", finisher: true), .addHandler("H"), .answered, .finisherEnds], 0,
                ["A": "answer", "H": "success"]
            ),
        ])
    func handlersFinishElsewhere(_ order: [MachineEvent], elsewhere: Int, expected: [String: String]) {
        var driver = MachineDriver()
        for event in order { driver.apply(event) }
        driver.check(order)
        #expect(driver.finishedElsewhere == elsewhere, "\(order)")
        #expect(driver.resumed.mapValues { $0.joined(separator: ",") } == expected, "\(order)")
    }

    @Test(
        "once ended, the machine counts no progress, no retry and no runner; the runner given late is returned to stop")
    func afterTheEnd() {
        var machine = TaskStateMachine<MachineWaiter>()
        #expect(machine.phase == .preparing)
        let attemptOpened = machine.attemptOpened()
        #expect(attemptOpened)
        #expect(machine.phase == .sending)
        let received = machine.received()
        #expect(received)
        #expect(machine.phase == .receiving)
        let retrying2 = machine.retrying(attempt: 2)
        #expect(retrying2)
        #expect(machine.attempts == 2)
        #expect(machine.phase == .backingOff(beforeAttempt: 2))
        let control = CountingControl()
        let kept = machine.started(runner: .transfer(control)) == nil
        #expect(kept)
        let ending = machine.end(with: .failure(.cancelled))
        guard case .transfer(let runner)? = ending?.runner else {
            Issue.record("the ending has no runner to stop")
            return
        }
        #expect(runner === control)
        let endedTwice = machine.end(with: .failure(.cancelled)) != nil
        #expect(!endedTwice)
        let attemptOpenedLate = machine.attemptOpened()
        #expect(!attemptOpenedLate)
        let receivedLate = machine.received()
        #expect(!receivedLate)
        #expect(!machine.progressed())
        let retryingLate3 = machine.retrying(attempt: 3)
        #expect(!retryingLate3)
        #expect(machine.attempts == 2)
        machine.enter(.waitingForCredential)
        #expect(machine.phase == .ended)
        let late = CountingControl()
        let returned = machine.started(runner: .transfer(late))
        guard case .transfer(let back)? = returned else {
            Issue.record("a runner started after the end was kept")
            return
        }
        #expect(back === late)
        guard case .drop = machine.answered() else {
            Issue.record("an answer after the end was not dropped")
            return
        }
    }
}

/// A transfer control that counts cancels.
final class CountingControl: TransportControl, @unchecked Sendable {  // `lock` guards `count`.
    private let lock = NSLock()
    private var count = 0
    var cancels: Int { lock.withLock { count } }
    func cancel() { lock.withLock { count += 1 } }
}
