import Foundation

/// Working offline: following the pool's connectivity monitor, and sending again the durable writes an
/// earlier pool left in its store (`Docs/WorkingOffline.md`).
extension TaskPool {
    /// Holds or starts the waiting tasks as the pool's connectivity monitor says now.
    func followConnectivity() {
        guard let monitor = configuration.connectivity else { return }
        mutate { state, effects in
            state.connectivity(monitor.connectivity, at: MonotonicClock.now(), into: &effects)
        }
    }

    /// Sends again the durable writes an earlier pool left in `store`, under their ids and idempotency keys;
    /// their outcomes go to ``Configuration/durableOutcomes``. One past its expiry is given up and told so.
    func sendAgain(_ entries: [DurableEntry], from store: DurableStore) {
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
    }
}
