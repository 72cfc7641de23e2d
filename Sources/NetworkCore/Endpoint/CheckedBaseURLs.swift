/// The base URLs a pool built its latest requests from, each checked once, with its origin (``URLParts/origin(in:)``).
///
/// Most of a pool's requests share a few base URLs. Checking a base URL and reading its origin cost more than
/// finding it here, so a request whose base URL is here checks only its path. A base URL that fails its check is
/// never kept, so it fails on every request. The latest ``capacity`` base URLs are kept, the oldest replaced first.
struct CheckedBaseURLs: Sendable {
    /// How many base URLs are kept.
    static let capacity = 8

    private struct Entries {
        var bases: [(base: String, origin: String)] = []
        /// Where the next base URL goes once every place is taken.
        var next = 0
    }

    private let entries = Locked(Entries())

    /// The origin of `base` if it was checked before.
    func origin(ofChecked base: String) -> String? {
        entries.withLock { entries in
            // Usually the very same string as last time, which `==` finds without reading its bytes.
            for index in entries.bases.indices where entries.bases[index].base == base {
                return entries.bases[index].origin
            }
            return nil
        }
    }

    /// Keeps `base`, which passed its check, with its origin.
    func remember(_ base: String, origin: String) {
        entries.withLock { entries in
            guard !entries.bases.contains(where: { $0.base == base }) else { return }
            if entries.bases.count < Self.capacity {
                entries.bases.append((base, origin))
            } else {
                entries.bases[entries.next] = (base, origin)
                entries.next = (entries.next + 1) % Self.capacity
            }
        }
    }
}
