import Foundation
import Testing

@testable import NetworkCore

@Suite("Pool state: registering, joining, duplicate ids")
struct PoolStateRegistryTests {
    /// A second send of a running id, under each policy and whether it is the same call on the wire.
    struct Duplicate: CustomStringConvertible, Sendable {
        let policy: DuplicatePolicy
        let sameCall: Bool
        let givenID: Bool
        /// What the second send comes to: "joined", "rejected", "registered <id>".
        let expected: String
        /// How the first task ends by the second send.
        let firstEnds: [String]

        var description: String { "\(policy), same call \(sameCall), id given \(givenID)" }
    }

    static let duplicates: [Duplicate] = [
        Duplicate(policy: .join, sameCall: true, givenID: true, expected: "joined", firstEnds: []),
        Duplicate(policy: .join, sameCall: false, givenID: true, expected: "rejected", firstEnds: []),
        Duplicate(policy: .reject, sameCall: true, givenID: true, expected: "rejected", firstEnds: []),
        Duplicate(policy: .replace, sameCall: true, givenID: true, expected: "registered t", firstEnds: ["cancelled"]),
        Duplicate(policy: .replace, sameCall: false, givenID: true, expected: "registered t", firstEnds: ["cancelled"]),
        // A derived id names the call: another call deriving the same id is a task of its own.
        Duplicate(policy: .join, sameCall: false, givenID: false, expected: "registered t (2)", firstEnds: []),
        Duplicate(policy: .reject, sameCall: false, givenID: false, expected: "registered t (2)", firstEnds: []),
        Duplicate(policy: .join, sameCall: true, givenID: false, expected: "joined", firstEnds: []),
        Duplicate(policy: .reject, sameCall: true, givenID: false, expected: "rejected", firstEnds: []),
    ]

    @Test("a second send of a running id, by policy", arguments: duplicates)
    func duplicate(_ row: Duplicate) {
        var driver = PoolStateDriver()
        driver.submit(row.givenID ? "t" : nil, derived: "t", policy: row.policy)
        let second = driver.submit(
            row.givenID ? "t" : nil, derived: "t", policy: row.policy, sameCall: row.sameCall)
        let got: String =
            switch second {
            case .joined: "joined"
            case .rejected(.duplicateTask(let id)) where id == "t": "rejected"
            case .rejected(let error): "rejected with \(error)"
            case .registered(_, let handle, _, _): "registered \(handle.id)"
            }
        #expect(got == row.expected)
        #expect(driver.ends(of: "t") == row.firstEnds)
        // What runs: the first (joined, rejected), the replacement, or both.
        let expectedRunning = row.expected.hasPrefix("registered t (") ? 2 : 1
        #expect(driver.state.activeCount == expectedRunning)
    }

    @Test("ids taken by running tasks are skipped when a derived id is made unique: (2), (3)…")
    func uniqueIDs() {
        var driver = PoolStateDriver()
        var ids: [String] = []
        for _ in 0..<4 {
            if case .registered(_, let handle, _, _) = driver.submit(nil, derived: "d", sameCall: false) {
                ids.append(handle.id)
            }
        }
        #expect(ids == ["d", "d (2)", "d (3)", "d (4)"])
        let cancelled = driver.cancel("d (2)")
        #expect(cancelled)
        if case .registered(_, let handle, _, _) = driver.submit(nil, derived: "d", sameCall: false) {
            #expect(handle.id == "d (2)")
        }
    }

    @Test("an answer from the cache starts and ends at once, takes no slot, and a caller attaching gets it")
    func cached() {
        var driver = PoolStateDriver(total: 1)
        let busy = driver.send("busy", as: "x")
        guard
            case .registered(let key, _, let token, let begins) = driver.submit(
                "c", cached: .success(PoolStateDriver.response))
        else {
            Issue.record("not registered")
            return
        }
        #expect(!begins)
        #expect(driver.ends(of: "c") == ["ok"])
        #expect(driver.logged.suffix(2) == ["started c", "finished c"])
        driver.attach("caller", token: token, to: key)
        #expect(driver.resumes["caller"] == ["ok"])
        #expect(driver.running == 1)  // "busy" alone holds the one slot
        #expect(driver.record(busy)?.hasEnded == false)
    }

    /// A task ended by some event before its caller waited (a refused connection answers at once), and
    /// the caller's attach comes while the pool still performs the end (logs it, tells its delivery).
    struct EarlyEnd: CustomStringConvertible, Sendable {
        let name: String
        let outcome: String
        let end: @Sendable (inout PoolStateDriver, TaskKey) -> Void

        var description: String { name }
    }

    static let earlyEnds: [EarlyEnd] = [
        EarlyEnd(name: "answered, finished by the pool", outcome: "ok") { driver, key in
            driver.startTransfer(key)
            guard case .finish(nil, _, _) = driver.transferEnded(key) else {
                Issue.record("not the pool's to finish")
                return
            }
            driver.finished(key)
        },
        EarlyEnd(name: "cancelled by id", outcome: "cancelled") { driver, _ in _ = driver.cancel("t") },
        EarlyEnd(name: "past its deadline", outcome: "deadline") { driver, key in
            driver.startTransfer(key)
            driver.fireTimers(after: 5)
        },
    ]

    @Test(
        "a caller coming for an ended task before its end is performed waits for it, then is resumed once; later ones at once",
        arguments: earlyEnds)
    func heldUntilSettled(_ early: EarlyEnd) {
        var driver = PoolStateDriver()
        driver.holdsSettling = true
        guard case .registered(let key, _, let token, true) = driver.submit("t", deadline: 5) else {
            Issue.record("not registered")
            return
        }
        early.end(&driver, key)
        #expect(driver.ends(of: "t") == [early.outcome])
        driver.attach("caller", token: token, to: key)
        #expect(driver.resumes["caller"] == nil, "resumed before the end was performed")
        #expect(driver.record(key)?.settling == true)
        // A progress stream begun now ends with the settling too, not before.
        let (_, observer) = AsyncStream<TransferProgress>.makeStream()
        #expect(driver.state.observe(key, with: observer, at: driver.now).ended == false)
        let told = driver.progressTold.count
        driver.settle()
        #expect(driver.resumes["caller"] == [early.outcome])
        #expect(driver.progressTold.count == told + 1)
        #expect(driver.progressTold.last?.finish == true)
        #expect(driver.state.observe(key, with: observer, at: driver.now).ended == true)
        #expect(driver.record(key)?.settling == false)
        #expect(driver.record(key)?.waiters.isEmpty == true)
        driver.attach("late", token: token, to: key)
        #expect(driver.resumes["late"] == [early.outcome])
        driver.settle()
        #expect(driver.resumes["caller"]?.count == 1)
        #expect(driver.ends(of: "t").count == 1)
    }

    @Test("a caller held for an ended task that withdraws is resumed cancelled, once; settling then resumes nobody")
    func heldThenWithdrawn() {
        var driver = PoolStateDriver()
        driver.holdsSettling = true
        guard case .registered(let key, _, let token, true) = driver.submit("t") else {
            Issue.record("not registered")
            return
        }
        _ = driver.cancel("t")
        driver.attach("caller", token: token, to: key)
        driver.withdraw(token, from: key)
        #expect(driver.resumes["caller"] == ["cancelled"])
        driver.settle()
        #expect(driver.resumes["caller"] == ["cancelled"])
        #expect(driver.ends(of: "t") == ["cancelled"])
    }

    @Test("an ended task's record stays while its handle lives, and goes with it; a running one's cannot")
    func forget() {
        var driver = PoolStateDriver()
        let key = driver.send("t")
        driver.state.forget(key)
        #expect(driver.record(key) != nil, "a running task's record stays")
        let cancelled = driver.cancel("t")
        #expect(cancelled)
        #expect(driver.view(key)?.outcome != nil)
        driver.state.forget(key)
        #expect(driver.record(key) == nil)
        #expect(driver.view(key) == nil)
    }
}

@Suite("Pool state: the queue, pause, resume, priorities")
struct PoolStateSchedulingTests {
    @Test("past the limits a task waits, deadline running; a slot freed by any end starts the next, by priority")
    func queue() {
        var driver = PoolStateDriver(total: 2, perHost: 2)
        let a = driver.send("a")
        _ = driver.send("b")
        let low = driver.send("low", priority: .low, deadline: 30)
        let high = driver.send("high", priority: .high)
        #expect(driver.phase(low) == .queued)
        #expect(driver.phase(high) == .queued)
        #expect(driver.logged.filter { $0.hasPrefix("queued") } == ["queued low", "queued high"])
        #expect(driver.state.timerCount == 1, "a waiting task's deadline counts")
        #expect(driver.state.activeTasks().map(\.queuePosition) == [nil, nil, 2, 1])
        // a's end frees a slot: the high-priority task begins, not the older low one.
        _ = driver.startTransfer(a)
        _ = driver.transferEnded(a)
        driver.finished(a)
        #expect(driver.begun == ["high#1"])
        #expect(driver.phase(high) == .preparing)
        #expect(driver.logged.last == "started high")
        // A cancel of a waiting task takes it out of the queue; nothing starts in its place.
        let cancelled = driver.cancel("low")
        #expect(cancelled)
        #expect(driver.state.scheduler.queuedCount == 0)
        #expect(driver.begun == ["high#1"])
        #expect(driver.running == 2)
    }

    @Test(
        "a task that makes no other attempt gives its slot back as its transfer ends: the next begins before it is finished, and its end frees nothing more"
    )
    func slotFreedAtTransferEnd() {
        var driver = PoolStateDriver(total: 1, perHost: 1)
        let a = driver.send("a")
        let b = driver.send("b")
        let c = driver.send("c")
        #expect(driver.phase(b) == .queued)
        _ = driver.startTransfer(a)
        // The answer arrives: b begins at once, a still waits for its finisher.
        guard case .finish = driver.transferEnded(a, freesSlot: true) else {
            Issue.record("a's answer has no finisher")
            return
        }
        #expect(driver.begun == ["b#1"])
        #expect(driver.phase(b) == .preparing)
        #expect(driver.phase(c) == .queued)
        #expect(driver.state.scheduler.running == 1)
        // a's end gives back no second slot: c waits for b's.
        driver.finished(a)
        #expect(driver.ends(of: "a") == ["ok"])
        #expect(driver.begun == ["b#1"])
        #expect(driver.state.scheduler.running == 1)
        // Without the promise (retriers may send it again), the slot is held until the end, as before.
        _ = driver.startTransfer(b)
        _ = driver.transferEnded(b, freesSlot: false)
        #expect(driver.begun == ["b#1"])
        driver.finished(b)
        #expect(driver.begun == ["b#1", "c#1"])
        // A cancel while finishing, after the slot went back, frees nothing either.
        _ = driver.startTransfer(c)
        _ = driver.transferEnded(c, freesSlot: true)
        #expect(driver.state.scheduler.running == 0)
        let cancelled = driver.cancel("c")
        #expect(cancelled)
        #expect(driver.state.scheduler.running == 0)
        #expect(driver.ends(of: "c") == ["cancelled"])
    }

    @Test("pause holds new and waiting tasks, running ones go on; resume starts as many as the limits allow")
    func pauseAndResume() {
        var driver = PoolStateDriver(total: 2, perHost: 2)
        let running = driver.send("running")
        driver.state.pause()
        let held = (0..<3).map { driver.send("p\($0)") }
        #expect(held.allSatisfy { driver.phase($0) == .queued })
        #expect(driver.phase(running) == .preparing)
        driver.run { state, effects, now in state.resume(at: now, into: &effects) }
        #expect(driver.begun == ["p0#1"])
        #expect(driver.running == 2)
        #expect(driver.state.scheduler.queuedCount == 2)
    }

    @Test("reprioritizing a waiting task moves it; a running one keeps its slot; an unknown id is false")
    func reprioritize() {
        var driver = PoolStateDriver(total: 1, perHost: 1)
        let first = driver.send("first")
        _ = driver.send("q1")
        let q2 = driver.send("q2")
        let moved = driver.state.reprioritize(id: "q2", to: .high)
        let kept = driver.state.reprioritize(id: "first", to: .low)
        let unknown = driver.state.reprioritize(id: "nobody", to: .high)
        #expect(moved && kept && !unknown)
        #expect(driver.view(q2)?.priority == .high)
        #expect(driver.view(first)?.priority == .low)
        let cancelled = driver.cancel("first")
        #expect(cancelled)
        #expect(driver.begun == ["q2#1"])
    }

    @Test("cancelAll ends waiting tasks first, so that none starts in a slot a cancelled one frees")
    func cancelAll() {
        var driver = PoolStateDriver(total: 1, perHost: 1)
        _ = driver.send("run")
        _ = driver.send("wait1")
        _ = driver.send("wait2")
        let count = driver.run { state, effects, now in state.cancelAll(at: now, into: &effects) }
        #expect(count == 3)
        #expect(driver.begun.isEmpty)
        #expect(driver.ended.map(\.id) == ["wait1", "wait2", "run"])
        #expect(driver.state.activeCount == 0)
    }

    @Test("a pool going away cancels its waiting tasks only")
    func cancelQueued() {
        var driver = PoolStateDriver(total: 1, perHost: 1)
        _ = driver.send("run", as: "r")
        _ = driver.send("wait", as: "w")
        driver.run { state, effects, now in state.cancelQueued(at: now, into: &effects) }
        #expect(driver.resumes["w"] == ["cancelled"])
        #expect(driver.resumes["r"] == nil)
        #expect(driver.begun.isEmpty, "nothing starts: the pool is going away")
    }

    @Test("per-host limits: a second host runs beside a full one")
    func perHost() {
        var driver = PoolStateDriver(total: 10, perHost: 2)
        let keys = (0..<3).map { driver.send("a\($0)", host: "a") }
        let other = driver.send("b0", host: "b")
        #expect(keys.map { driver.phase($0) } == [.preparing, .preparing, .queued])
        #expect(driver.phase(other) == .preparing)
        let cancelled = driver.cancel("a0")
        #expect(cancelled)
        #expect(driver.begun == ["a2#1"])
    }
}

@Suite("Pool state: attempts, retries, deadlines")
struct PoolStateAttemptTests {
    @Test("a failure the interceptors may retry waits for their decision; a retry backs off, then begins attempt 2")
    func retry() {
        var driver = PoolStateDriver()
        let key = driver.send("t", deadline: 10)
        _ = driver.startTransfer(key)
        _ = driver.transferEnded(key, status: 503)
        let failure = NetworkError.httpStatus(PoolStateDriver.unavailable)
        guard case .deciding = driver.finished(key, with: .failure(failure), retrying: failure) else {
            Issue.record("not deciding")
            return
        }
        #expect(driver.phase(key) == .sending)
        // The decider's work is kept, to be stopped with the task.
        let decider = TestWork("decider")
        driver.startWork(decider, .deciding, of: key)
        #expect(decider.stops == 0)
        driver.decided(key, attempt: 1, .retry(after: 0.5))
        #expect(driver.phase(key) == .backingOff(beforeAttempt: 2))
        #expect(driver.logged.last == "retrying t")
        #expect(driver.begun.isEmpty)
        driver.fireTimers(after: 0.5)
        #expect(driver.begun == ["t#2"])
        #expect(driver.phase(key) == .preparing)
        #expect(driver.view(key)?.attempts == 2)
        // The second attempt answers; attempt 1's late decision or report is ignored.
        driver.decided(key, attempt: 1, .retry(after: 0))
        _ = driver.startTransfer(key, attempt: 2)
        _ = driver.transferEnded(key, attempt: 2)
        driver.finished(key, attempt: 2)
        #expect(driver.ends(of: "t") == ["ok"])
        #expect(driver.resumes["caller"] == nil, "the caller finished it and returns the outcome itself")
        #expect(decider.stops == 0)
        let attempts = driver.view(key)?.meter.attempts.map(\.statusCode)
        #expect(attempts == [503, 200])
    }

    /// How a retried attempt meets the network: its failure, whether the network goes before the decision
    /// or during the backoff, and what the task does.
    struct NetworkRetry: CustomStringConvertible, Sendable {
        let name: String
        let failure: NetworkError
        /// The network is gone when the retry is decided, or only once its backoff has begun.
        let goneBeforeDecision: Bool
        /// Attempt 2 begun when the backoff's timer fires, while the network is still gone.
        let begunOnTimer: [String]
        let waitsForNetwork: Bool
        var description: String { name }
    }

    @Test(
        "a retry while the network is gone waits for it, not for its timer; it goes once when the network is back",
        arguments: [
            NetworkRetry(
                name: "a lost connection, the network gone", failure: .transport(URLError(.networkConnectionLost)),
                goneBeforeDecision: true, begunOnTimer: [], waitsForNetwork: true),
            NetworkRetry(
                name: "a request timeout, the network gone", failure: .timedOut(seconds: 1), goneBeforeDecision: true,
                begunOnTimer: [], waitsForNetwork: true),
            // The server answered: its backoff runs, and its timer finds the network gone.
            NetworkRetry(
                name: "a 503, the network gone", failure: .httpStatus(PoolStateDriver.unavailable),
                goneBeforeDecision: true, begunOnTimer: [], waitsForNetwork: false),
            NetworkRetry(
                name: "a lost connection, the network gone during the backoff",
                failure: .transport(URLError(.networkConnectionLost)), goneBeforeDecision: false, begunOnTimer: [],
                waitsForNetwork: false),
        ])
    func retryAwaitsNetwork(_ row: NetworkRetry) {
        var driver = PoolStateDriver()
        let key = driver.send("t", deadline: 60)
        _ = driver.startTransfer(key)
        _ = driver.transferEnded(key, received: nil, status: row.failure.statusCode)
        driver.finished(key, with: .failure(row.failure), retrying: row.failure)
        func network(_ connectivity: Connectivity) {
            driver.run { state, effects, now in state.connectivity(connectivity, at: now, into: &effects) }
        }
        if row.goneBeforeDecision { network(.offline) }
        driver.decided(key, attempt: 1, .retry(after: 0.5))
        if !row.goneBeforeDecision { network(.offline) }
        #expect((driver.phase(key) == .waitingForNetwork) == row.waitsForNetwork, "before the timer")
        #expect(driver.logged.contains("waitingForNetwork t") == row.waitsForNetwork)
        driver.fireTimers(after: 0.5)
        #expect(driver.begun == row.begunOnTimer)
        // Whatever the way, once the timer has passed with the network gone the attempt waits for it.
        #expect(driver.phase(key) == .waitingForNetwork)
        network(.online)
        #expect(driver.begun == ["t#2"])
        #expect(driver.phase(key) == .preparing)
        network(.offline)
        network(.online)
        #expect(driver.begun == ["t#2"], "once")
        #expect(driver.state.retriesAwaitingNetwork.isEmpty)
    }

    @Test("a task cancelled while its retry waits for the network ends once and is forgotten there")
    func cancelWhileRetryAwaitsNetwork() {
        var driver = PoolStateDriver()
        let key = driver.send("t")
        _ = driver.startTransfer(key)
        let failure = NetworkError.transport(URLError(.networkConnectionLost))
        _ = driver.transferEnded(key, received: nil, status: nil)
        driver.finished(key, with: .failure(failure), retrying: failure)
        driver.run { state, effects, now in state.connectivity(.offline, at: now, into: &effects) }
        driver.decided(key, attempt: 1, .retry(after: 0))
        #expect(driver.phase(key) == .waitingForNetwork && driver.begun.isEmpty)
        let cancelled = driver.cancel("t")
        #expect(cancelled)
        #expect(driver.ends(of: "t") == ["cancelled"])
        #expect(driver.state.retriesAwaitingNetwork.isEmpty)
        driver.run { state, effects, now in state.connectivity(.online, at: now, into: &effects) }
        #expect(driver.begun.isEmpty)
    }

    /// What the interceptors decide, and what the task comes to.
    struct Decision: CustomStringConvertible, Sendable {
        let name: String
        let decision: PoolStateDriver.State.Decision
        let elapsed: Double
        let ends: [String]
        let begun: [String]
        var description: String { name }
    }

    static let decisions: [Decision] = [
        Decision(
            name: "no retry", decision: .conclude(.failure(.cancelled)), elapsed: 0, ends: ["cancelled"], begun: []),
        Decision(
            name: "fail", decision: .conclude(.failure(.timedOut(seconds: 1))), elapsed: 0, ends: ["failed"], begun: []),
        Decision(name: "retry now", decision: .retry(after: 0), elapsed: 0, ends: [], begun: ["t#2"]),
        Decision(name: "retry within the deadline", decision: .retry(after: 4), elapsed: 5, ends: [], begun: []),
        // The wait would end after the 10 s deadline: it ends now, not when the deadline fires.
        Decision(
            name: "retry past the deadline", decision: .retry(after: 6), elapsed: 5, ends: ["deadline"], begun: []),
        Decision(
            name: "retry right at the deadline", decision: .retry(after: 5), elapsed: 5, ends: ["deadline"], begun: []),
    ]

    @Test("the interceptors' decision, by case", arguments: decisions)
    func decision(_ row: Decision) {
        var driver = PoolStateDriver()
        let key = driver.send("t", deadline: 10)
        _ = driver.startTransfer(key)
        driver.advance(row.elapsed)
        _ = driver.transferEnded(key, status: 503)
        let failure = NetworkError.httpStatus(PoolStateDriver.unavailable)
        _ = driver.finished(key, with: .failure(failure), retrying: failure)
        driver.decided(key, attempt: 1, row.decision)
        #expect(driver.ends(of: "t") == row.ends)
        #expect(driver.begun == row.begun)
    }

    /// (A task backing off never meets its deadline there: a retry whose wait would end after the deadline
    /// ends the task at once; see ``decision(_:)``.)
    @Test("a deadline ends the task whatever it is doing, when its timer fires, and stops what runs")
    func deadlineInEveryPhase() {
        for phase in ["queued", "preparing", "credential", "sending", "receiving", "finishing", "deciding"] {
            var driver = PoolStateDriver(total: 1)
            if phase == "queued" { _ = driver.send("other") }
            let key = driver.send("t", deadline: 2)
            var work: TestWork?
            let failure = NetworkError.httpStatus(PoolStateDriver.unavailable)
            switch phase {
            case "preparing":
                work = TestWork("adapt")
                driver.startWork(work!, .preparing, of: key)
            case "credential":
                work = TestWork("adapt")
                driver.startWork(work!, .preparing, of: key)
                driver.state.waitingForCredential(key, attempt: 1)
            case "sending": work = driver.startTransfer(key)
            case "receiving":
                work = driver.startTransfer(key)
                _ = driver.report { $0.received(key, attempt: 1, hop: 0, count: 10, at: $1) }
            case "finishing":
                _ = driver.startTransfer(key)
                _ = driver.transferEnded(key)
            case "deciding":
                _ = driver.startTransfer(key)
                _ = driver.transferEnded(key, status: 503)
                _ = driver.finished(key, with: .failure(failure), retrying: failure)
                driver.attach("caller", token: 1, to: key)  // the caller that finished waits again
                work = TestWork("decider")
                driver.startWork(work!, .deciding, of: key)
            default: break
            }
            driver.fireTimers(after: 1.9)
            #expect(driver.ends(of: "t").isEmpty, "\(phase): ended before its deadline")
            driver.fireTimers(after: 2)
            #expect(driver.ends(of: "t") == ["deadline"], "\(phase)")
            #expect(work.map(\.stops) ?? 1 == 1, "\(phase): its work was stopped once")
            #expect(driver.state.timerCount == 0, "\(phase)")
            if phase != "finishing" { #expect(driver.resumes["caller"] == ["deadline"], "\(phase)") }
        }
    }

    @Test(
        "a cancel ends the task and resumes its callers at once, whatever its transfer does; the transfer's later reports are dropped"
    )
    func cancelNeedsNoTransport() {
        var driver = PoolStateDriver()
        let key = driver.send("t")
        let transfer = driver.startTransfer(key)!
        let cancelled = driver.cancel("t")
        #expect(cancelled)
        // Resumed by the cancel itself: nothing of the transport was needed.
        #expect(driver.resumes["caller"] == ["cancelled"])
        #expect(transfer.stops == 1)
        // What the transport still reports changes nothing.
        let head = driver.report { $0.head(key, attempt: 1, hop: 0, extent: (0, 2), at: $1) }
        let bytes = driver.report { $0.received(key, attempt: 1, hop: 0, count: 2, at: $1) }
        #expect(!head && !bytes)
        guard case .dropped = driver.transferEnded(key) else {
            Issue.record("the answer was not dropped")
            return
        }
        #expect(driver.resumes["caller"] == ["cancelled"])
        #expect(driver.ends(of: "t") == ["cancelled"])
        let cancelledAgain = driver.cancel("t")
        #expect(!cancelledAgain)
    }

    @Test("credential waits show in the phase, while preparing and while deciding; a renewal is logged")
    func credentials() {
        var driver = PoolStateDriver()
        let key = driver.send("t")
        driver.state.waitingForCredential(key, attempt: 1)
        #expect(driver.phase(key) == .waitingForCredential)
        driver.run { state, effects, now in state.credentialRefreshed(key, at: now, into: &effects) }
        #expect(driver.logged.last == "credentialRefreshed t")
        _ = driver.startTransfer(key)
        #expect(driver.phase(key) == .sending)
        _ = driver.transferEnded(key, status: 401)
        let failure = NetworkError.httpStatus(PoolStateDriver.unavailable)
        _ = driver.finished(key, with: .failure(failure), retrying: failure)
        driver.state.waitingForCredential(key, attempt: 1)
        #expect(driver.phase(key) == .waitingForCredential)
        // A stale attempt's report changes nothing.
        driver.state.waitingForCredential(key, attempt: 7)
        #expect(driver.phase(key) == .waitingForCredential)
    }

    @Test(
        "a transport's control that comes after the task ended is handed back to cancel; after the answer, it is not kept"
    )
    func lateControl() {
        var driver = PoolStateDriver()
        let key = driver.send("t")
        _ = driver.run { $0.transferStarting(key, attempt: 1, hop: 0, bodyLength: 0, kept: 0, at: $2) }
        // The transport answered before it returned its control (a transport that answers at once).
        _ = driver.transferEnded(key)
        let answered = TestWork("answered")
        driver.attach(answered, to: key)
        #expect(answered.stops == 0)
        driver.finished(key)
        // A task cancelled before its transport returned: the control is cancelled at once.
        let other = driver.send("u")
        _ = driver.run { $0.transferStarting(other, attempt: 1, hop: 0, bodyLength: 0, kept: 0, at: $2) }
        let cancelled = driver.cancel("u")
        #expect(cancelled)
        let late = TestWork("late")
        driver.attach(late, to: other)
        #expect(late.stops == 1)
    }

    @Test("work started after its task ended is handed back to be stopped; work that finished is left alone")
    func lateWork() {
        var driver = PoolStateDriver()
        let key = driver.send("t")
        _ = driver.startTransfer(key)
        let late = TestWork("adapt, stored late")
        driver.startWork(late, .preparing, of: key)
        #expect(late.stops == 0)
        let cancelled = driver.cancel("t")
        #expect(cancelled)
        let after = TestWork("after the end")
        driver.startWork(after, .preparing, of: key)
        #expect(after.stops == 1)
    }
}

@Suite("Pool state: transfers, redirects, progress")
struct PoolStateTransferTests {
    @Test("a redirect the pool follows is the next hop of the same attempt; a stale hop's reports are dropped")
    func redirects() {
        var driver = PoolStateDriver()
        let key = driver.send("t")
        _ = driver.startTransfer(key)
        // A second hop cannot start before the first has redirected.
        #expect(driver.startTransfer(key, hop: 1) == nil)
        let followed = driver.run {
            $0.redirected(
                key, attempt: 1, hop: 0, status: 302, to: URL(string: "https://b.example/x"), byTransport: false,
                at: $2, into: &$1)
        }
        #expect(followed)
        #expect(driver.logged.last == "redirected t")
        #expect(driver.view(key)?.meter.redirects == 1)
        // Hop 0 has ended: its late answer is dropped; hop 1 runs in the same attempt.
        guard case .dropped = driver.transferEnded(key) else {
            Issue.record("hop 0's answer was taken")
            return
        }
        #expect(driver.startTransfer(key, hop: 1) != nil)
        guard case .finish = driver.transferEnded(key, hop: 1) else {
            Issue.record("hop 1's answer dropped")
            return
        }
        driver.finished(key)
        #expect(driver.ends(of: "t") == ["ok"])
        #expect(driver.view(key)?.meter.attempts.count == 1)
    }

    @Test("a redirect followed by the transport itself counts within the transfer")
    func transportRedirect() {
        var driver = PoolStateDriver()
        let key = driver.send("t")
        _ = driver.startTransfer(key)
        let counted = driver.run {
            $0.redirected(key, attempt: 1, hop: 0, status: 301, to: nil, byTransport: true, at: $2, into: &$1)
        }
        #expect(counted)
        guard case .finish = driver.transferEnded(key) else {
            Issue.record("the answer was dropped")
            return
        }
    }

    @Test("progress: head, bytes each way and the end are measured and told to those following")
    func progress() {
        var driver = PoolStateDriver()
        let key = driver.send("t")
        let (stream, continuation) = AsyncStream<TransferProgress>.makeStream()
        _ = stream
        _ = driver.state.observe(key, with: continuation, at: driver.now)
        _ = driver.startTransfer(key, length: 10)
        driver.report { $0.sent(key, attempt: 1, hop: 0, total: 10, expected: 10, at: $1) }
        driver.advance(0.1)
        _ = driver.report { $0.head(key, attempt: 1, hop: 0, extent: (0, 100), at: $1) }
        driver.advance(0.1)
        _ = driver.report { $0.received(key, attempt: 1, hop: 0, count: 60, at: $1) }
        #expect(driver.phase(key) == .receiving)
        let told = driver.progressTold.map(\.value)
        #expect(told.map(\.bytesSent) == [10, 10, 10])
        #expect(told.last?.bytesReceived == 60)
        #expect(told.last?.bytesExpected == 100)
        _ = driver.transferEnded(key, received: 60, status: 200)
        driver.finished(key)
        #expect(driver.progressTold.last?.finish == true)
        let meter = driver.view(key)!.meter
        guard let attempt = Array(meter.attempts).first else {
            Issue.record("no attempt")
            return
        }
        #expect(attempt.bytesReceived == 60)
        #expect(attempt.bytesSent == 10)
        #expect(abs((attempt.firstByte ?? 0) - 0.1) < 1e-9)
        #expect(abs(attempt.end - 0.2) < 1e-9)
    }
}

@Suite("Pool state: timers and stalls")
struct PoolStateTimerTests {
    @Test("the timer is armed for the earliest entry only, and again for the next once it fires")
    func arming() {
        var driver = PoolStateDriver()
        // Compared unwrapped: AddressSanitizer saw `#expect` read 9 bytes of an 8-byte slot when converting an
        // optional UInt64 compared with a literal sum to AnyHashable (the testing library's, not this code).
        let second: UInt64 = 1_000_000_000
        _ = driver.send("late", deadline: 9)
        #expect(driver.armed ?? 0 == second + 9 * second)
        _ = driver.send("early", deadline: 3)
        #expect(driver.armed ?? 0 == second + 3 * second)
        _ = driver.send("middle", deadline: 5)
        #expect(driver.armed ?? 0 == second + 3 * second, "a later entry does not re-arm it")
        driver.fireTimers(after: 3)
        #expect(driver.ends(of: "early") == ["deadline"])
        #expect(driver.armed ?? 0 == second + 5 * second)
        driver.fireTimers(after: 9)
        #expect(driver.ended.map(\.id) == ["early", "middle", "late"])
        #expect(driver.state.timerCount == 0)
    }

    /// When bytes come, and what the stall detector says at a 1 s threshold.
    struct Stall: CustomStringConvertible, Sendable {
        let name: String
        /// Seconds at which body bytes arrive, after the transfer starts at 0.
        let bytesAt: [Double]
        /// Seconds at which the check runs, as the timer would.
        let checksAt: [Double]
        let reported: Int
        var description: String { name }
    }

    static let stalls: [Stall] = [
        Stall(name: "nothing for 1 s", bytesAt: [], checksAt: [1], reported: 1),
        Stall(
            name: "a byte every 0.4 s for 5 s", bytesAt: stride(from: 0.4, through: 5, by: 0.4).map { $0 },
            checksAt: [1, 1.4, 1.8, 2.2, 2.6, 3.0, 3.4, 3.8, 4.2, 4.6, 5.0], reported: 0),
        Stall(name: "bytes, then silence", bytesAt: [0.2, 0.4], checksAt: [1, 1.4], reported: 1),
        Stall(name: "reported once, however long the silence", bytesAt: [], checksAt: [1, 2, 3, 4], reported: 1),
    ]

    @Test("the stall detector, by case", arguments: stalls)
    func stall(_ row: Stall) {
        var driver = PoolStateDriver()
        let key = driver.send("t", stall: 1)
        _ = driver.startTransfer(key)
        let events = (row.bytesAt.map { ($0, true) } + row.checksAt.map { ($0, false) }).sorted { $0.0 < $1.0 }
        for (time, isBytes) in events {
            driver.now = 1_000_000_000 + UInt64(time * 1e9)
            if isBytes {
                _ = driver.report { $0.received(key, attempt: 1, hop: 0, count: 1, at: $1) }
            } else {
                driver.run { $0.checkForStall(key, threshold: 1, at: $2, into: &$1) }
            }
        }
        #expect(driver.logged.filter { $0 == "stalled t" }.count == row.reported)
    }

    @Test("a stall says how long nothing moved, not how long the task has run")
    func silence() {
        var driver = PoolStateDriver()
        let key = driver.send("t", stall: 1)
        _ = driver.startTransfer(key)
        for time in [0.2, 0.4] {
            driver.now = 1_000_000_000 + UInt64(time * 1e9)
            _ = driver.report { $0.received(key, attempt: 1, hop: 0, count: 1, at: $1) }
        }
        driver.now = 1_000_000_000 + 1_400_000_000
        driver.run { $0.checkForStall(key, threshold: 1, at: $2, into: &$1) }
        let stall = driver.entries.last { $0.kind == .stalled }
        #expect(abs((stall?.silence ?? 0) - 1.0) < 1e-9)
        #expect(abs((stall?.duration ?? 0) - 1.4) < 1e-9)
        #expect(driver.phase(key) == .receiving)
    }

    @Test("a task between attempts is not stalled: nothing is expected to move")
    func backingOffIsNoStall() {
        var driver = PoolStateDriver()
        let key = driver.send("t", stall: 1)
        _ = driver.startTransfer(key)
        _ = driver.transferEnded(key, status: 503)
        let failure = NetworkError.httpStatus(PoolStateDriver.unavailable)
        _ = driver.finished(key, with: .failure(failure), retrying: failure)
        driver.decided(key, attempt: 1, .retry(after: 30))
        driver.fireTimers(after: 10)
        #expect(!driver.logged.contains("stalled t"))
        #expect(driver.state.timers.contains(.stall, of: key), "checked again later")
    }
}
