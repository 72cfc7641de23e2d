/// Which of a pool's tasks run and which wait, as a value the pool keeps under its lock: at most
/// `maximumTotal` running at once and `maximumPerHost` for any one host; the rest wait in a line per host
/// and priority, and whenever a slot frees (or the pool resumes), the waiting task of the highest
/// priority that may run, the oldest of that priority, starts.
///
/// Invariant: a task waits only while it cannot run (the pool is paused or offline, or its host or the
/// whole pool is full), because every change that frees a slot starts what it can (``release(host:)``,
/// ``resume()``, ``setOffline(_:)``). Removing a waiting task (a cancel, its deadline) or giving it another
/// priority marks its place stale, to be skipped when reached, so that neither walks a line.
struct Scheduler<Element: Hashable> {
    /// One waiting task: the element and its ticket, the order in which tasks came (a new ticket on a
    /// new priority).
    struct Entry {
        let element: Element
        let ticket: UInt64
    }

    /// The waiting tasks of one host, a first-in, first-out line per priority.
    struct HostLines {
        var lines = [Line](repeating: Line(), count: RequestPriority.allCases.count)
        var count = 0
    }

    /// A first-in, first-out line: an array read from `head`, compacted as it empties.
    struct Line {
        private(set) var entries: [Entry] = []
        private var head = 0

        var isEmpty: Bool { head == entries.count }
        var first: Entry? { isEmpty ? nil : entries[head] }

        mutating func append(_ entry: Entry) { entries.append(entry) }

        mutating func removeFirst() {
            head += 1
            if head == entries.count {
                entries.removeAll(keepingCapacity: entries.count <= 1_024)
                head = 0
            } else if head >= 1_024, head * 2 >= entries.count {
                entries.removeFirst(head)
                head = 0
            }
        }

        var waiting: ArraySlice<Entry> { entries[head...] }
    }

    /// The most tasks running at once, and for one host unless its transport said otherwise.
    let maximumTotal: Int
    let maximumPerHost: Int
    /// Whether a transport's report of what it carries to a host sets that host's limit
    /// (``setCapacity(_:host:)``): not when the app set the per-host limit itself.
    let followsTransport: Bool
    /// The hosts whose transport said how many requests it carries to them at once, and that many.
    private var capacities: [String: Int] = [:]
    /// Whether nothing new starts (see ``pause()``).
    private(set) var isPaused = false
    /// Whether the network is gone (see ``setOffline(_:)``): nothing new starts either.
    private(set) var isOffline = false
    /// Whether nothing new starts: paused or offline.
    var isHolding: Bool { isPaused || isOffline }
    /// Tasks holding a slot.
    private(set) var running = 0
    private var runningByHost: [String: Int] = [:]
    /// The lines of the hosts that have waiting tasks.
    private var waiting: [String: HostLines] = [:]
    /// The ticket of each waiting task: an entry whose ticket differs is stale.
    private var tickets: [Element: UInt64] = [:]
    private var nextTicket: UInt64 = 0
    /// Tasks that take no slot (sockets), sent while the pool is paused or offline, in order: they start
    /// once it is neither.
    private var held: [Element] = []

    init(maximumTotal: Int, maximumPerHost: Int, followsTransport: Bool = false) {
        self.maximumTotal = max(1, maximumTotal)
        self.maximumPerHost = max(1, maximumPerHost)
        self.followsTransport = followsTransport
    }

    /// The most tasks of `host` that run at once.
    func limit(of host: String) -> Int {
        capacities.isEmpty ? maximumPerHost : capacities[host] ?? maximumPerHost
    }

    /// The transport carries `count` requests to `host` at once from now on (an HTTP/2 connection's stream
    /// limit): it becomes the host's limit, at least 1, when the scheduler follows its transport. Returns the
    /// waiting tasks that start now, each holding a slot.
    mutating func setCapacity(_ count: Int, host: String) -> [Element] {
        guard followsTransport else { return [] }
        capacities[host] = max(1, count)
        return drain()
    }

    /// How many tasks wait.
    var queuedCount: Int { tickets.count + held.count }

    /// `host` as the scheduler keeps it while tasks of that host run: the same string, its storage shared.
    func interned(_ host: String) -> String {
        guard let index = runningByHost.index(forKey: host) else { return host }
        return runningByHost.keys[index]
    }

    /// How many tasks of `host` hold a slot.
    func running(host: String) -> Int { runningByHost[host, default: 0] }

    /// A new task for `host`: returns `true` when it may start now (it holds a slot), `false` when it
    /// waits in line.
    mutating func admit(_ element: Element, host: String, priority: RequestPriority) -> Bool {
        if !isHolding, running < maximumTotal {
            // The host is looked up once, whether it runs tasks already or not.
            let index = runningByHost.index(forKey: host)
            if let index, runningByHost.values[index] < limit(of: host) {
                running += 1
                runningByHost.values[index] += 1
                return true
            } else if index == nil {
                take(host)
                return true
            }
        }
        enqueue(element, host: host, priority: priority)
        return false
    }

    /// A new task that takes no slot: returns `true` when it may start now, `false` when it waits for
    /// ``resume()`` or the network.
    mutating func admitWithoutSlot(_ element: Element) -> Bool {
        guard isHolding else { return true }
        held.append(element)
        return false
    }

    /// A task of `host` that held a slot has ended: returns the waiting tasks that start now, each holding
    /// a slot.
    mutating func release(host: String) -> [Element] {
        running -= 1
        if let index = runningByHost.index(forKey: host) {
            if runningByHost.values[index] > 1 {
                runningByHost.values[index] -= 1
            } else {
                runningByHost.remove(at: index)
            }
        }
        return drain()
    }

    /// Takes `element` out of the line, if it waits there. Returns whether it did.
    mutating func remove(_ element: Element, host: String) -> Bool {
        if let index = held.firstIndex(of: element) {
            held.remove(at: index)
            return true
        }
        guard tickets.removeValue(forKey: element) != nil else { return false }
        waiting[host]?.count -= 1
        if waiting[host]?.count == 0 { waiting.removeValue(forKey: host) }
        return true
    }

    /// A waiting `element` moves to the back of the line of `priority`. Returns whether it waits.
    mutating func reprioritize(_ element: Element, host: String, to priority: RequestPriority) -> Bool {
        // A task that takes no slot waits for the resume (or the network) alone, whatever its priority.
        if held.contains(element) { return true }
        guard remove(element, host: host) else { return false }
        enqueue(element, host: host, priority: priority)
        return true
    }

    /// Nothing new starts until ``resume()``; what runs goes on.
    mutating func pause() { isPaused = true }

    /// Tasks start again, unless the network is gone: returns those that start now.
    mutating func resume() -> [Element] {
        isPaused = false
        return unhold()
    }

    /// The network is gone (`true`: nothing new starts, what runs goes on) or back (`false`: tasks start
    /// again unless the pool is paused). Returns those that start now.
    mutating func setOffline(_ offline: Bool) -> [Element] {
        isOffline = offline
        return unhold()
    }

    /// When nothing holds the pool any more, the held tasks and as many waiting ones as there is room for.
    private mutating func unhold() -> [Element] {
        guard !isHolding else { return [] }
        let unheld = held
        held = []
        return unheld + drain()
    }

    /// The waiting tasks in the order they would start if every host had room: by priority, then by
    /// when they came.
    var queueOrder: [Element] {
        var all: [(RequestPriority, Entry)] = []
        for lines in waiting.values {
            for priority in RequestPriority.allCases {
                for entry in lines.lines[priority.rawValue].waiting
                where tickets[entry.element] == entry.ticket {
                    all.append((priority, entry))
                }
            }
        }
        all.sort { $0.0 != $1.0 ? $0.0 > $1.0 : $0.1.ticket < $1.1.ticket }
        return all.map(\.1.element) + held
    }

    private mutating func take(_ host: String) {
        running += 1
        runningByHost[host, default: 0] += 1
    }

    private mutating func enqueue(_ element: Element, host: String, priority: RequestPriority) {
        nextTicket += 1
        tickets[element] = nextTicket
        waiting[host, default: HostLines()].lines[priority.rawValue].append(
            Entry(element: element, ticket: nextTicket))
        waiting[host]!.count += 1
    }

    /// Starts waiting tasks while there is room: each time the one of the highest priority whose host
    /// has room, the oldest of that priority.
    private mutating func drain() -> [Element] {
        var started: [Element] = []
        while !isHolding, running < maximumTotal, !waiting.isEmpty, let (host, priority) = next() {
            var lines = waiting.removeValue(forKey: host)!
            // Stale places before the head go with it.
            while let entry = lines.lines[priority.rawValue].first {
                lines.lines[priority.rawValue].removeFirst()
                guard tickets[entry.element] == entry.ticket else { continue }
                tickets.removeValue(forKey: entry.element)
                lines.count -= 1
                started.append(entry.element)
                break
            }
            if lines.count > 0 { waiting[host] = lines }
            take(host)
        }
        return started
    }

    /// The host and priority of the next task to start: of the hosts with room, the one whose line of
    /// the highest priority has the oldest waiting task at its head.
    private func next() -> (String, RequestPriority)? {
        var best: (host: String, priority: RequestPriority, ticket: UInt64)?
        for (host, lines) in waiting where runningByHost[host, default: 0] < limit(of: host) {
            for priority in RequestPriority.allCases.reversed() {
                if let best, best.priority > priority { break }
                guard let ticket = freshHead(of: lines.lines[priority.rawValue]) else { continue }
                if best == nil || priority > best!.priority || ticket < best!.ticket {
                    best = (host, priority, ticket)
                }
                break
            }
        }
        return best.map { ($0.host, $0.priority) }
    }

    /// The ticket of the first task of `line` still waiting there (stale places skipped).
    private func freshHead(of line: Line) -> UInt64? {
        for entry in line.waiting where tickets[entry.element] == entry.ticket {
            return entry.ticket
        }
        return nil
    }
}
