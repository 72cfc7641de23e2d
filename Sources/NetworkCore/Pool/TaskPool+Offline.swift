import Foundation

/// Working offline: following the pool's connectivity monitor, and sending again the durable writes an
/// earlier pool left in its store (`Docs/WorkingOffline.md`).
extension TaskPool {
    /// Holds or starts the waiting tasks as the pool's connectivity monitor says now; back online, sends the
    /// durable writes it kept again, unless told not to (the pool being made sends them once, online or not).
    func followConnectivity(sendingKeptWrites: Bool = true) {
        guard let monitor = configuration.connectivity else { return }
        let connectivity = monitor.connectivity
        mutate { state, effects in
            state.connectivity(connectivity, at: MonotonicClock.now(), into: &effects)
        }
        if sendingKeptWrites, connectivity.isReachable { sendKeptWrites() }
    }

    /// Sends again, now, the durable writes in the pool's ``Configuration/durableStore`` that no task is
    /// sending: those an earlier pool left (a pool does this when it is made) and those this pool kept because
    /// they ended without an answer (a pool with a ``Configuration/connectivity`` monitor does this each time
    /// it says the network is back). Each goes under its task id and idempotency key, as a restored task;
    /// its outcome goes to ``Configuration/durableOutcomes``. One past its expiry is given up and told so.
    ///
    /// Call it when the app knows the server may answer again (it came to the foreground, a health check
    /// passed). A write being sent is never sent twice at once.
    /// - Returns: How many writes were taken from the store (sent, or given up as expired); 0 without a store.
    @discardableResult
    public func sendKeptWrites() -> Int {
        guard let store = configuration.durableStore else { return 0 }
        let entries = store.claimPending()
        let now = Date().timeIntervalSince1970
        for entry in entries {
            let write = DurableWrite(store: store, entry: entry, restored: true, report: configuration.durableOutcomes)
            guard now < entry.expires else {
                write.ended(
                    with: .failure(.deadlineExceeded(seconds: entry.expires - entry.created)), poolClosing: false)
                continue
            }
            let stored = StoredWrite(entry: entry)
            // A write whose request cannot be built again (a store written by hand) is given up, told so.
            do throws(NetworkError) {
                _ = try makeRequest(stored)
            } catch {
                write.ended(with: .failure(error), poolClosing: false)
                continue
            }
            // Its end is told by its durable stage.
            send(stored, id: entry.id) { _ in }
        }
        return entries.count
    }
}
