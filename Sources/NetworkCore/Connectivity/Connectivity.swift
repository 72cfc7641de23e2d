/// Whether the network is there, as a ``ConnectivityMonitor`` sees it.
public enum Connectivity: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A network is there: requests may leave.
    case online
    /// No network: no interface is up with an address (Linux), or the system has no path (Apple platforms).
    /// A pool with the monitor starts no task meanwhile.
    case offline
    /// A network is there, and the user asked apps to use little of it (Low Data Mode on Apple platforms).
    /// Requests may leave. Linux never reports it.
    case constrained

    /// Whether requests may leave: online or constrained.
    public var isReachable: Bool { self != .offline }

    /// `"online"`, `"offline"` or `"constrained"`.
    public var description: String { rawValue }
}

/// Tells whether the network is there, and each change.
///
/// ``SystemConnectivity`` asks the operating system; ``ManualConnectivity`` is told by the app (a test, or a
/// signal of the app's own). Give one to ``TaskPool/Configuration/connectivity`` and the pool starts no task
/// while it says ``Connectivity/offline``:
///
/// ```swift
/// let network = SystemConnectivity()
/// let pool = TaskPool(configuration: .init(connectivity: network))
/// for await connectivity in network.changes {
///     print("network:", connectivity, "waiting:", pool.isWaitingForNetwork)
/// }
/// ```
public protocol ConnectivityMonitor: AnyObject, Sendable {
    /// Whether the network is there now.
    var connectivity: Connectivity { get }

    /// Calls `observer` with each change from now on, in order, on a thread of the monitor's; not with the
    /// value now (read ``connectivity``). The observer must be quick and must not wait for the monitor.
    /// - Returns: the observation: it ends when cancelled or released.
    func observe(_ observer: @escaping @Sendable (Connectivity) -> Void) -> ConnectivityObservation
}

extension ConnectivityMonitor {
    /// The value now, then each change, as a sequence; it ends when the task reading it is cancelled.
    public var changes: AsyncStream<Connectivity> {
        let (stream, continuation) = AsyncStream.makeStream(of: Connectivity.self)
        // Subscribed before the value now is read: a change between the two is not lost (it may repeat).
        let observation = observe { continuation.yield($0) }
        continuation.yield(connectivity)
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }
}

/// An observer of a ``ConnectivityMonitor``'s changes: ``cancel()`` it, or release it, to stop them.
public final class ConnectivityObservation: Sendable {
    private let stop: Locked<(@Sendable () -> Void)?>

    init(stop: @escaping @Sendable () -> Void) {
        self.stop = Locked(stop)
    }

    /// No more changes reach the observer. Cancelling twice is harmless.
    public func cancel() {
        stop.withLock { stop in
            defer { stop = nil }
            return stop
        }?()
    }

    deinit { cancel() }
}

/// The value a monitor says and its observers: what every monitor shares.
final class ConnectivityState: Sendable {
    private struct State {
        var connectivity: Connectivity
        var observers: [UInt64: @Sendable (Connectivity) -> Void] = [:]
        var nextID: UInt64 = 0
    }

    private let state: Locked<State>
    /// Orders the calls to observers: one change's calls end before the next change's begin.
    private let delivery = Lock()

    init(_ connectivity: Connectivity) {
        state = Locked(State(connectivity: connectivity))
    }

    var connectivity: Connectivity { state.withLock { $0.connectivity } }

    func observe(_ observer: @escaping @Sendable (Connectivity) -> Void) -> ConnectivityObservation {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.observers[state.nextID] = observer
            return state.nextID
        }
        return ConnectivityObservation { [weak self] in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
    }

    /// Records `connectivity` and tells the observers, if it changed.
    func set(_ connectivity: Connectivity) {
        delivery.withLock {
            let observers = state.withLock { state -> [@Sendable (Connectivity) -> Void] in
                guard state.connectivity != connectivity else { return [] }
                state.connectivity = connectivity
                return state.observers.sorted { $0.key < $1.key }.map(\.value)
            }
            for observer in observers { observer(connectivity) }
        }
    }
}

/// A monitor the app tells: ``set(_:)`` changes what it says. For tests, or an app that knows by its own means
/// (a server's health check, a user's "work offline" switch).
public final class ManualConnectivity: ConnectivityMonitor {
    private let state: ConnectivityState

    /// A monitor that says `connectivity` until told otherwise.
    public init(_ connectivity: Connectivity = .online) {
        state = ConnectivityState(connectivity)
    }

    /// What it says now.
    public var connectivity: Connectivity { state.connectivity }

    /// From now on it says `connectivity`; its observers are told, before this returns, if it changed.
    public func set(_ connectivity: Connectivity) { state.set(connectivity) }

    /// See ``ConnectivityMonitor/observe(_:)``.
    public func observe(_ observer: @escaping @Sendable (Connectivity) -> Void) -> ConnectivityObservation {
        state.observe(observer)
    }
}
