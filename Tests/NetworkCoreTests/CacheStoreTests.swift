import Foundation
import NetworkCoreTesting
import TestSupport
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Caching: keys, the memory and disk stores, and entries that survive a crash")
struct CacheStoreTests {
    static func entry(_ body: String = "body", status: Int = 200, headers: [String: String] = [:]) -> CachedResponse {
        CachedResponse(
            url: "http://127.0.0.1/x", statusCode: status, headers: headers, body: Data(body.utf8),
            requestDate: Date(timeIntervalSince1970: 1_700_000_000),
            responseDate: Date(timeIntervalSince1970: 1_700_000_001),
            variance: ["accept-language": SHA256.hex("de")])
    }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("nc-cache-\(UUID().uuidString)")
    }

    @Test(
        "SHA-256 gives the standard's digests, whether fed bytes or Data in any split",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (String(repeating: "a", count: 1000), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"),
        ])
    func digests(input: String, expected: String) {
        #expect(SHA256.hex(input) == expected)
        for split in [0, 1, 63, 64, 65, input.utf8.count] where split <= input.utf8.count {
            var digest = SHA256()
            digest.update(Data(input.utf8.prefix(split)))
            digest.update(Data(input.utf8.dropFirst(split)))
            #expect(SHA256.hex(digest.finalize()) == expected)
        }
    }

    @Test("keys differ by method, URL, query credential and credential header, and hide them all")
    func keys() throws {
        func request(_ url: String, _ headers: [String: String] = [:]) -> URLRequest {
            var request = URLRequest(url: URL(string: url)!)
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            return request
        }
        let base = request("http://h/movie?api_key=k1&page=1")
        let keys = [
            CacheTransaction.key(for: base, method: "GET"),
            CacheTransaction.key(for: base, method: "HEAD"),
            CacheTransaction.key(for: request("http://h/movie?api_key=k2&page=1"), method: "GET"),
            CacheTransaction.key(
                for: request("http://h/movie?api_key=k1&page=1", ["Authorization": "Bearer a"]), method: "GET"),
            CacheTransaction.key(
                for: request("http://h/movie?api_key=k1&page=1", ["Authorization": "Bearer b"]), method: "GET"),
            CacheTransaction.key(for: request("http://h/movie?api_key=k1&page=1", ["Cookie": "s=1"]), method: "GET"),
            CacheTransaction.key(for: request("http://h/movie?api_key=k1&page=1", ["X-Api-Key": "z"]), method: "GET"),
        ]
        #expect(Set(keys).count == keys.count)
        #expect(keys.allSatisfy { $0.count == 64 && !$0.contains("k1") })
        // Headers that are not credentials (they are a Vary's business) and the fragment do not change the key.
        #expect(
            CacheTransaction.key(for: request("http://h/movie?api_key=k1&page=1#top", ["Accept": "x/y"]), method: "GET")
                == keys[0])
    }

    @Test("the LRU keeps to its limit, oldest out first, a read making an entry the newest")
    func leastRecentlyUsed() {
        var lru = LeastRecentlyUsed<Int>(limit: 10)
        #expect(lru.insert(1, cost: 4, forKey: "a").isEmpty)
        #expect(lru.insert(2, cost: 4, forKey: "b").isEmpty)
        #expect(lru.value(forKey: "a") == 1)  // "a" is now the newest
        #expect(lru.insert(3, cost: 4, forKey: "c") == ["b"])
        #expect(lru.keysOldestFirst == ["a", "c"])
        #expect(lru.cost == 8)
        #expect(lru.insert(4, cost: 11, forKey: "a").isEmpty)  // too large: not kept, old "a" gone
        #expect(lru.value(forKey: "a") == nil)
        #expect(lru.keysOldestFirst == ["c"])
        #expect(lru.insert(5, cost: 6, forKey: "c").isEmpty)  // replaced in place
        #expect(lru.cost == 6 && lru.count == 1 && lru.value(forKey: "c") == 5)
        #expect(lru.remove("c") == 6 && lru.cost == 0 && lru.count == 0)
    }

    @Test("a stored answer's head is made once, and again for a copy whose headers changed")
    func keptHead() {
        let request = URLRequest(url: URL(string: "http://127.0.0.1/x")!)
        let stored = Self.entry(headers: ["X-Version": "1"])
        let first = CacheTransaction.response(stored, for: request, source: .cache, age: 0)
        let again = CacheTransaction.response(stored, for: request, source: .cache, age: 0)
        #expect(first.httpResponse === again.httpResponse)
        var changed = stored
        changed.headers["X-Version"] = "2"
        let updated = CacheTransaction.response(changed, for: request, source: .cache, age: 0)
        #expect(updated.header("X-Version") == "2" && first.header("X-Version") == "1")
        let elsewhere = CacheTransaction.response(
            stored, for: URLRequest(url: URL(string: "http://127.0.0.1/y")!), source: .cache, age: 0)
        #expect(elsewhere.url?.path == "/y")
    }

    @Test("the memory store keeps to its byte limit and forgets on request")
    func memoryStore() {
        let store = MemoryCacheStore(byteLimit: 1_300)
        let big = Self.entry(String(repeating: "x", count: 400))
        store.store(big, forKey: "a")
        store.store(big, forKey: "b")
        #expect(store.count == 2)
        store.store(big, forKey: "c")
        #expect(store.count == 2)
        #expect(store.response(forKey: "a") == nil)
        #expect(store.response(forKey: "c") == big)
        #expect(store.byteCount <= 1_300)
        store.store(Self.entry(String(repeating: "y", count: 2_000)), forKey: "d")
        #expect(store.response(forKey: "d") == nil)
        store.removeResponse(forKey: "c")
        #expect(store.response(forKey: "c") == nil)
        store.removeAll()
        #expect(store.count == 0 && store.byteCount == 0)
    }

    @Test("an entry reads back whole; a truncated, altered or misplaced one reads as nothing")
    func entryEncoding() {
        let key = SHA256.hex("k")
        let entry = Self.entry("{\"a\":1}", headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=60"])
        let data = entry.encoded(key: key)
        #expect(CachedResponse(decoding: data, key: key) == entry)
        #expect(CachedResponse(decoding: data, key: SHA256.hex("other")) == nil)
        for cut in [0, 1, 20, 28, data.count / 2, data.count - 33, data.count - 1] {
            #expect(CachedResponse(decoding: data.prefix(cut), key: key) == nil, "cut at \(cut)")
        }
        for position in [0, 25, 40, data.count - 40, data.count - 1] {
            var altered = data
            altered[position] ^= 0x01
            #expect(CachedResponse(decoding: altered, key: key) == nil, "byte \(position) altered")
        }
    }

    @Test("the disk store reads what another store wrote, and deletes a torn file, a stray temporary and old entries")
    func diskStore() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, c) = (SHA256.hex("a"), SHA256.hex("b"), SHA256.hex("c"))
        let first = try DiskCacheStore(directory: directory, byteLimit: 10_000)
        first.store(Self.entry("alpha"), forKey: a)
        first.store(Self.entry("beta"), forKey: b)
        let second = try DiskCacheStore(directory: directory, byteLimit: 10_000)
        #expect(second.response(forKey: a)?.body == Data("alpha".utf8))
        // Torn: the file loses its end, as a crash in the middle of a write in place would leave it.
        let path = directory.appendingPathComponent(b + ".entry")
        let whole = try Data(contentsOf: path)
        try whole.prefix(whole.count - 10).write(to: path)
        #expect(second.response(forKey: b) == nil)
        #expect(!FileManager.default.fileExists(atPath: path.path))
        // A temporary file left by a write that died is removed when a store opens the directory.
        let stray = directory.appendingPathComponent(c + ".123.tmp")
        try Data("half".utf8).write(to: stray)
        let third = try DiskCacheStore(directory: directory, byteLimit: 10_000)
        #expect(!FileManager.default.fileExists(atPath: stray.path))
        #expect(third.response(forKey: a) != nil)
        // Keys that are not digests never name a path.
        third.store(Self.entry(), forKey: "../escape")
        #expect(third.response(forKey: "../escape") == nil)
        #expect(
            !FileManager.default.fileExists(
                atPath: directory.deletingLastPathComponent().appendingPathComponent("escape.entry").path))
        third.removeAll()
        #expect(third.response(forKey: a) == nil && third.byteCount == 0)
    }

    @Test("the disk store keeps to its byte limit, least recently used out first")
    func diskLimit() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let size = Self.entry(String(repeating: "x", count: 1_000)).encoded(key: SHA256.hex("0")).count
        let store = try DiskCacheStore(directory: directory, byteLimit: size * 3)
        let keys = (0..<4).map { SHA256.hex("\($0)") }
        for key in keys.prefix(3) { store.store(Self.entry(String(repeating: "x", count: 1_000)), forKey: key) }
        #expect(store.response(forKey: keys[0]) != nil)  // now the most recently used
        store.store(Self.entry(String(repeating: "x", count: 1_000)), forKey: keys[3])
        #expect(store.response(forKey: keys[1]) == nil)
        #expect(store.response(forKey: keys[0]) != nil && store.response(forKey: keys[2]) != nil)
        #expect(store.byteCount <= size * 3)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".entry")
        }
        #expect(files.count == 3)
    }

    @Test("a disk store refuses a directory that is a file, with a typed error")
    func diskStoreOnAFile() throws {
        let file = Self.temporaryDirectory()
        try Data("x".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: NetworkError.self) { try DiskCacheStore(directory: file) }
        do {
            _ = try DiskCacheStore(directory: file)
        } catch {
            guard case .fileAccessFailed(let path, let reason) = error else { Issue.record("\(error)"); return }
            #expect(path == file.path && reason.contains("is a file"))
        }
    }
}

/// A process killed with SIGKILL while four threads write to a disk store: the next store to open the
/// directory reads every entry whole or not at all, and finds no half-written file (`cancel-probe
/// cache-crash`, in a child process).
@Suite("Caching: a disk store survives a process killed mid-write", .enabled(if: OwnPass.enabled, OwnPass.reason))
struct CacheCrashTests {
    @Test("every entry left is whole, none is half written, and the directory opens")
    func killedMidWrite() async throws {
        let directory = CacheStoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Smaller under a sanitizer, where the store's SHA-256 (Swift, byte by byte) wrote 8 entries of 256 KiB
        // in the child's 60 s: a kill still lands in the middle of the next writes.
        let kib = isSlowRun ? 8 : 256
        let run = try await ChildProcess.run(
            "CancelProbe", ["cache-crash", String(kib)], environment: ["NETWORKCORE_CACHE_DIR": directory.path],
            timeout: 120)
        #expect(run.status == SIGKILL, "cancel-probe cache-crash exited \(run.status): \(run.errors.suffix(600))")
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        let store = try DiskCacheStore(directory: directory, byteLimit: 1 << 30)
        let after = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(after.allSatisfy { !$0.hasSuffix(".tmp") })
        let keys = after.filter { $0.hasSuffix(".entry") }.map { String($0.dropLast(".entry".count)) }
        #expect(keys.count >= 20)
        var whole = 0
        for key in keys {
            let entry = try #require(store.response(forKey: key), "entry \(key) unreadable")
            let number = try #require(Int(key.suffix(8), radix: 16))
            #expect(entry.url == "entry \(number)")
            #expect(entry.body.count == kib * 1024 && entry.body.allSatisfy { $0 == 0x61 })
            whole += 1
        }
        #expect(whole == keys.count)
        // What the kill interrupted was left as temporary files, which opening the store removed.
        print("cache-crash: \(before.count - keys.count) temporary file(s) removed, \(whole) whole entries")
    }
}
