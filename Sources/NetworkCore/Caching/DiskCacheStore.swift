import Foundation

/// A ``CacheStore`` in a directory, up to a number of bytes; past it the least recently used answers go
/// first. What it stores survives the process, so a second run can answer from it (offline too).
///
/// ```swift
/// let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask)[0]
/// let store = try DiskCacheStore(directory: caches.appendingPathComponent("MovieDB"), byteLimit: 50 << 20)
/// let pool = TaskPool(configuration: .init(cache: store))
/// ```
/// Each answer is one file, written whole to a temporary file and renamed into place, with a checksum:
/// a file torn by a crash, truncated or altered reads as no answer and is deleted, never as a wrong one.
/// Files hold no credential (see ``CachedResponse``). Recency is counted from when the store was made,
/// the files' write times ordering what was there before. Several stores, even in several processes, may
/// share a directory; each keeps to the limit by what it knows of.
public final class DiskCacheStore: CacheStore, @unchecked Sendable {
    // @unchecked Sendable: `index` is only touched under its own lock, in this file.
    /// The directory that holds the answers.
    public let directory: URL
    /// The most bytes of files the store keeps.
    public let byteLimit: Int
    private let index: Locked<LeastRecentlyUsed<Bool>>

    /// Opens the store in `directory`, creating it if needed, and forgets what a crash left half written.
    /// - Throws: ``NetworkError/fileAccessFailed(path:reason:)`` when the directory cannot be made or is a file.
    public init(directory: URL, byteLimit: Int = 50 << 20) throws(NetworkError) {
        self.directory = directory
        self.byteLimit = max(0, byteLimit)
        let manager = FileManager.default
        var found: [(key: String, size: Int, date: Date)] = []
        for name in try RecordFile.openDirectory(directory).names {
            let path = directory.appendingPathComponent(name).path
            guard name.hasSuffix(".entry"), let attributes = try? manager.attributesOfItem(atPath: path) else {
                continue
            }
            let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
            let date = attributes[.modificationDate] as? Date ?? .distantPast
            found.append((String(name.dropLast(".entry".count)), size, date))
        }
        var index = LeastRecentlyUsed<Bool>(limit: self.byteLimit)
        for file in found.sorted(by: { $0.date < $1.date }) {
            for evicted in index.insert(true, cost: file.size, forKey: file.key) {
                try? manager.removeItem(at: directory.appendingPathComponent(evicted + ".entry"))
            }
        }
        self.index = Locked(index)
    }

    /// The answer stored under `key`, now the most recently used; a file that is not a whole entry for
    /// `key` is deleted and reads as `nil`.
    public func response(forKey key: String) -> CachedResponse? {
        guard Self.isKey(key), let data = try? Data(contentsOf: url(key)) else { return nil }
        guard let response = CachedResponse(decoding: data, key: key) else {
            removeResponse(forKey: key)
            return nil
        }
        index.withLock { index in
            if index.value(forKey: key) == nil { _ = index.insert(true, cost: data.count, forKey: key) }
        }
        return response
    }

    /// Writes `response` under `key` (to a temporary file, renamed into place), then deletes the least
    /// recently used files while over the limit. A failed write (a full disk) stores nothing.
    public func store(_ response: CachedResponse, forKey key: String) {
        guard Self.isKey(key) else { return }
        let data = response.encoded(key: key)
        guard data.count <= byteLimit else { return removeResponse(forKey: key) }
        guard RecordFile.write(data, to: url(key)) else { return }
        let evicted = index.withLock { $0.insert(true, cost: data.count, forKey: key) }
        for key in evicted { try? FileManager.default.removeItem(at: url(key)) }
    }

    /// Deletes the answer under `key`.
    public func removeResponse(forKey key: String) {
        guard Self.isKey(key) else { return }
        index.withLock { _ = $0.remove(key) }
        try? FileManager.default.removeItem(at: url(key))
    }

    /// Deletes every answer the directory holds.
    public func removeAll() {
        index.withLock { $0.removeAll() }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasSuffix(".entry") {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }

    /// The bytes of the files the store knows of.
    public var byteCount: Int { index.withLock { $0.cost } }

    private func url(_ key: String) -> URL { directory.appendingPathComponent(key + ".entry") }

    /// Keys are the pool's digests: anything else could name a path outside the directory.
    private static func isKey(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.count <= 128
            && key.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
