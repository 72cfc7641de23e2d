import Foundation
import NetworkCoreTesting
import TestSupport
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A rating, as an app posts one: a JSON body, its credential added by an interceptor at send time.
struct Rating: Endpoint {
    var baseURL: String
    var movie = 550
    var path: String { "movie/\(movie)/rating?api_key=sekrit-query-key&session=1" }
    var method: HTTPMethod { .post }
    var task: HTTPTask { .bodyParameters(["value": 8.5]) }
    var headers: [String: String] { ["Cookie": "session=sekrit-cookie"] }
}

/// Adds the credential to every attempt, as an authentication interceptor does.
struct BearerInterceptor: RequestInterceptor {
    func adapt(_ request: URLRequest, context: AttemptContext) async throws -> URLRequest {
        var request = request
        request.setValue("Bearer sekrit-token", forHTTPHeaderField: "Authorization")
        return request
    }
}

/// Outcomes told to a pool's `durableOutcomes`, from any thread.
final class DurableOutcomes: @unchecked Sendable {  // `lock` guards `told`.
    private let lock = NSLock()
    private var told: [DurableOutcome] = []
    func add(_ outcome: DurableOutcome) {
        lock.lock()
        told.append(outcome)
        lock.unlock()
    }
    var all: [DurableOutcome] {
        lock.lock()
        defer { lock.unlock() }
        return told
    }
}

@Suite("Durable writes: kept in a store before they are sent, sent again by the next pool until the server has them")
struct DurableWriteTests {
    /// A loopback port nothing listens on (a server's, stopped), and a scratch directory with the store's
    /// folder in it, not made yet.
    static func closedPortAndStore() throws -> (port: UInt16, scratch: ScratchDirectory, directory: URL) {
        let first = try MockServer()
        first.stop()
        let scratch = try ScratchDirectory()
        return (first.port, scratch, scratch.url.appendingPathComponent("writes"))
    }

    func pool(_ store: DurableStore, _ outcomes: DurableOutcomes) -> TaskPool {
        TaskPool(
            configuration: .init(
                defaultHeaders: ["Accept": "application/json", "X-Api-Key": "sekrit-default-header"],
                interceptors: [BearerInterceptor()], durableStore: store,
                durableOutcomes: { outcomes.add($0) }))
    }

    @Test("a write the server answers carries an idempotency key and leaves nothing in the store; the outcome is told")
    func answered() async throws {
        let server = try MockServer()
        defer { server.stop() }
        server.enqueue(.json(#"{"status_code": 1}"#, statusCode: 201))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let directory = scratch.url.appendingPathComponent("writes")
        let outcomes = DurableOutcomes()
        let pool = pool(try DurableStore(directory: directory), outcomes)
        let response = try await pool.send(Rating(baseURL: server.baseURL).durable(), id: "rate 550")
        #expect(response.statusCode == 201)
        let request = try await server.takeRequest()
        let key = try #require(request.value(forHTTPHeaderField: "Idempotency-Key"))
        #expect(UUID(uuidString: key) != nil)
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer sekrit-token")
        #expect(try DurableStore(directory: directory).pendingKeys.isEmpty)
        #expect(await eventually { outcomes.all.count == 1 })
        let told = try #require(outcomes.all.first)
        #expect(told.id == "rate 550" && told.idempotencyKey == key && !told.restored && !told.kept)
        #expect((try? told.result.get().statusCode) == 201)
    }

    @Test(
        "the server unreachable: the write stays, with no secret in its file; a pool opened later sends it again under its id and key, its credential added then"
    )
    func sentAgainAfterRestart() async throws {
        // A port nothing listens on, then a server on it.
        let (port, scratch, directory) = try Self.closedPortAndStore()
        defer { scratch.remove() }
        let outcomes = DurableOutcomes()
        do {
            let pool = pool(try DurableStore(directory: directory), outcomes)
            await #expect(throws: NetworkError.self) {
                try await pool.send(Rating(baseURL: "http://127.0.0.1:\(port)").durable(for: 3_600), id: "rate 550")
            }
        }
        #expect(await eventually { outcomes.all.count == 1 })
        #expect(outcomes.all.first?.kept == true)
        let store = try DurableStore(directory: directory)
        let key = try #require(store.pendingKeys.first)
        #expect(store.pendingKeys.count == 1 && store.droppedEntries == 0)
        // What is on disk: the request without a secret of any kind.
        let file = try Data(contentsOf: directory.appendingPathComponent(key + ".write"))
        let text = String(decoding: file, as: UTF8.self)
        for secret in ["sekrit-token", "sekrit-cookie", "sekrit-query-key", "sekrit-default-header", "Authorization"] {
            #expect(!text.contains(secret), "\(secret) written")
        }
        #expect(text.contains("session=1") && text.contains("8.5") && text.contains(key))

        let server = try MockServer(port: port)
        defer { server.stop() }
        server.enqueue(.json("{}", statusCode: 201))
        let second = pool(store, outcomes)
        let request = try await server.takeRequest()
        #expect(request.value(forHTTPHeaderField: "Idempotency-Key") == key)
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer sekrit-token")
        #expect(request.method == .post && request.path == "/movie/550/rating")
        #expect(request.url?.query == "session=1")
        #expect(request.httpBody.map { String(decoding: $0, as: UTF8.self) }?.contains("8.5") == true)
        #expect(await eventually { outcomes.all.count == 2 })
        let told = try #require(outcomes.all.last)
        #expect(told.id == "rate 550" && told.idempotencyKey == key && told.restored && !told.kept)
        #expect(await eventually { second.activeTasks.isEmpty })
        #expect(try DurableStore(directory: directory).pendingKeys.isEmpty)
        #expect(server.count() == 1)
        // The same store given to one more pool: what is sent is not sent again.
        let third = pool(store, outcomes)
        #expect(third.activeTasks.isEmpty && server.count() == 1 && outcomes.all.count == 2)
    }

    @Test("a pool let go of while its durable write waits for the network keeps the write for the next pool")
    func poolReleasedWhileWaiting() async throws {
        let (port, scratch, directory) = try Self.closedPortAndStore()
        defer { scratch.remove() }
        let store = try DurableStore(directory: directory)
        let outcomes = DurableOutcomes()
        let ended = Locked<[Bool]>([])
        do {
            let offline = TaskPool(
                configuration: .init(
                    connectivity: ManualConnectivity(.offline), durableStore: store,
                    durableOutcomes: { outcomes.add($0) }))
            offline.send(Rating(baseURL: "http://127.0.0.1:\(port)").durable(), id: "rate 550") { result in
                ended.withLock { $0.append(result.isCancelledFailure) }
            }
            #expect(offline.task(id: "rate 550")?.phase == .waitingForNetwork)
        }
        // Its caller hears the pool went away; the write stays.
        #expect(ended.withLock { $0 } == [true])
        #expect(outcomes.all.map(\.kept) == [true])
        #expect(store.pendingKeys.count == 1)
        let server = try MockServer(port: port)
        defer { server.stop() }
        server.enqueue(.json("{}", statusCode: 201))
        _ = pool(store, outcomes)
        #expect(await eventually { outcomes.all.count == 2 })
        #expect(outcomes.all.last.map { $0.restored && !$0.kept } == true)
        #expect(server.count() == 1 && store.pendingKeys.isEmpty)
    }

    @Test(
        "a write kept while its pool runs goes again when the pool is told (sendKeptWrites) and when its monitor says the network is back: once at a time, under its first key"
    )
    func keptWritesGoAgainInTheSamePool() async throws {
        let (port, scratch, directory) = try Self.closedPortAndStore()
        defer { scratch.remove() }
        let outcomes = DurableOutcomes()
        let network = ManualConnectivity(.online)
        let store = try DurableStore(directory: directory)
        let logger = InMemoryLogger()
        let pool = TaskPool(
            configuration: .init(
                logger: logger, interceptors: [BearerInterceptor()], connectivity: network, durableStore: store,
                durableOutcomes: { outcomes.add($0) }))
        await #expect(throws: NetworkError.self) {
            try await pool.send(Rating(baseURL: "http://127.0.0.1:\(port)").durable(), id: "rate 550")
        }
        // Told before its caller is resumed.
        #expect(outcomes.all.count == 1)
        let key = try #require(store.pendingKeys.first)
        #expect(outcomes.all.map(\.kept) == [true])
        // Told by the app, with the server still away: sent, kept again.
        #expect(pool.sendKeptWrites() == 1)
        #expect(await eventually { outcomes.all.count == 2 && pool.activeTasks.isEmpty })
        #expect(outcomes.all.last.map { $0.restored && $0.kept && $0.idempotencyKey == key } == true)
        #expect(store.pendingKeys == [key])

        // The server is back, and holds its answer until the test lets it go.
        let answer = DispatchSemaphore(value: 0)
        let server = try MockServer(port: port) { _ in
            _ = answer.wait(timeout: .now() + 10)
            return MockResponse(StubResponse(statusCode: 201))
        }
        defer { server.stop() }
        network.set(.offline)
        #expect(pool.activeTasks.isEmpty)
        network.set(.online)
        #expect(await eventually { server.count() == 1 })
        // While it is being sent, neither the app nor the monitor sends it a second time.
        #expect(pool.sendKeptWrites() == 0)
        network.set(.offline)
        network.set(.online)
        #expect(pool.activeTasks.count == 1)
        // A write sent again is a task like any other, named a durable write in the table and the events.
        #expect(pool.task(id: "rate 550")?.service == "durable write")
        #expect(pool.debugDescription.contains("rate 550") && pool.debugDescription.contains("durable write"))
        #expect(logger.events(.started).map(\.service) == ["Rating", "durable write", "durable write"])
        answer.signal()
        #expect(await eventually { outcomes.all.count == 3 && pool.activeTasks.isEmpty })
        let told = try #require(outcomes.all.last)
        #expect(told.restored && !told.kept && told.idempotencyKey == key && told.id == "rate 550")
        #expect((try? told.result.get().statusCode) == 201)
        #expect(store.pendingKeys.isEmpty && pool.sendKeptWrites() == 0)
        #expect(server.count() == 1)
        let request = try #require(server.requests.first)
        #expect(request.value(forHTTPHeaderField: "Idempotency-Key") == key)
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer sekrit-token")
    }

    @Test(
        "processes killed (SIGKILL) at random while they store writes to an unreachable server, and one after storing all 50 while it sends them again: a pool opened after sends every stored write once, each under one key"
    )
    func killedMidWrite() async throws {
        let (port, scratch, directory) = try Self.closedPortAndStore()
        defer { scratch.remove() }
        var stored: Set<String> = []
        var attempted: [String: Set<String>] = [:]  // id: the keys its attempts went with
        // Three runs of 40 killed at random, then one that stores all of its 50 and is killed while it sends
        // them again (the kill lands mid-attempt).
        for round in ["r0", "r1", "r2", "all"] {
            let run = try await ChildProcess.run(
                "CancelProbe", ["durable-kill", round == "all" ? "50" : "40"],
                environment: [
                    "NETWORKCORE_DURABLE_DIR": directory.path, "NETWORKCORE_DURABLE_URL": "http://127.0.0.1:\(port)",
                    "NETWORKCORE_DURABLE_ROUND": round,
                    "NETWORKCORE_DURABLE_KILL": round == "all" ? "after-stored" : "anywhere",
                ], timeout: 60)
            #expect(run.status == SIGKILL, "round \(round): \(run.errors.suffix(300))")
            for line in run.output.split(separator: "\n") {
                let words = line.split(separator: " ").map(String.init)
                if words.count == 2, words[0] == "stored" { stored.insert(words[1]) }
                if words.count == 3, words[0] == "attempted" { attempted[words[1], default: []].insert(words[2]) }
            }
        }
        // Writes cut short by a kill are temporary files: dropped, and counted, when the store is opened.
        let unfinished = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".tmp")
        }
        let store = try DurableStore(directory: directory)
        #expect(store.droppedEntries == unfinished.count)
        let pending = store.pendingKeys.count
        #expect(stored.filter { $0.hasPrefix("all-") }.count == 50)
        #expect(pending >= stored.count && pending <= 170)
        let server = try MockServer(port: port) { _ in MockResponse(StubResponse(statusCode: 201)) }
        defer { server.stop() }
        let outcomes = DurableOutcomes()
        let pool = TaskPool(configuration: .init(durableStore: store, durableOutcomes: { outcomes.add($0) }))
        #expect(await eventually(within: 30) { outcomes.all.count == pending })
        let requests = server.requests
        let ids = requests.map { String($0.path.dropFirst("/likes/".count)) }
        let keys = requests.compactMap { $0.value(forHTTPHeaderField: "Idempotency-Key") }
        // Every write stored before a kill arrives; none twice; each under one key of its own, 32 KiB whole.
        #expect(stored.isSubset(of: Set(ids)), "lost: \(stored.subtracting(ids).sorted())")
        // The run that stored all 50: the server sees all 50, none twice (under one key each, below).
        #expect(ids.filter { $0.hasPrefix("all-") }.count == 50)
        // A write sent again after a kill carries the key its first attempts had.
        #expect(attempted.count >= 50 && attempted.values.allSatisfy { $0.count == 1 })
        for request in requests {
            let id = String(request.path.dropFirst("/likes/".count))
            guard let first = attempted[id] else { continue }
            #expect(first == [request.value(forHTTPHeaderField: "Idempotency-Key") ?? ""], "\(id)")
        }
        #expect(ids.count == Set(ids).count && keys.count == ids.count && Set(keys).count == keys.count)
        #expect(requests.count == pending)
        #expect(requests.allSatisfy { $0.httpBody?.count == 32 << 10 })
        #expect(outcomes.all.allSatisfy { $0.restored && !$0.kept && (try? $0.result.get().statusCode) == 201 })
        #expect(await eventually { pool.activeTasks.isEmpty })
        #expect(store.pendingKeys.isEmpty)
    }

    @Test("opening a store drops torn and foreign files, counted; a write past its expiry is given up and told so")
    func tornAndExpired() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let directory = scratch.url.appendingPathComponent("writes")
        let request = URLRequest(url: URL(string: "http://127.0.0.1:1/likes")!)
        let whole = DurableEntry(
            id: "like", key: "0a", request: request, body: Data("{}".utf8), created: Date(timeIntervalSinceNow: -20),
            expiry: 10
        ).encoded()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try whole.write(to: directory.appendingPathComponent("0a.write"))
        try whole.prefix(whole.count - 5).write(to: directory.appendingPathComponent("0b.write"))
        try Data("not a write".utf8).write(to: directory.appendingPathComponent("0c.write"))
        try whole.write(to: directory.appendingPathComponent("0d.write"))  // another key's bytes
        try Data().write(to: directory.appendingPathComponent("0e.1234.tmp"))
        let store = try DurableStore(directory: directory)
        #expect(store.droppedEntries == 4)
        #expect(store.pendingKeys == ["0a"])
        let outcomes = DurableOutcomes()
        _ = pool(store, outcomes)
        let told = try #require(outcomes.all.first)
        #expect(told.id == "like" && told.restored && !told.kept)
        guard case .failure(.deadlineExceeded(let seconds)) = told.result else {
            Issue.record("\(told.result)")
            return
        }
        #expect(seconds == 10)
        #expect(store.pendingKeys.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("the fuzz target's seed, signed, reads as a whole write, and reads back the same once written again")
    func fuzzSeed() throws {
        let seed = try Data(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fuzzers/Corpus/durableWrite/rating.write"))
        var digest = SHA256()
        digest.update(seed)
        let entry = try #require(DurableEntry(decoding: seed + digest.finalize(), key: "0a"))
        #expect(entry.id == "rate 550" && entry.method == "POST" && entry.body == Data(#"{"value":8.5}"#.utf8))
        #expect(DurableEntry(decoding: entry.encoded(), key: "0a") == entry)
        #expect(DurableEntry(decoding: entry.encoded(), key: "0b") == nil)
        #expect(DurableEntry(decoding: seed, key: "0a") == nil)
    }

    @Test("what cannot be a durable write is refused, typed, before anything is stored or sent")
    func refusals() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let directory = scratch.url.appendingPathComponent("writes")
        let store = try DurableStore(directory: directory)
        let withStore = TaskPool(
            configuration: .init(transport: StubTransport { _, _ in .json("{}") }, durableStore: store))
        let withoutStore = TaskPool(configuration: .init(transport: StubTransport { _, _ in .json("{}") }))
        func reason(_ pool: TaskPool, _ endpoint: some Endpoint, download: Bool = false) async -> String? {
            do {
                if download {
                    _ = try await pool.download(endpoint, to: scratch.file("x"))
                } else {
                    _ = try await pool.send(endpoint)
                }
                return nil
            } catch {
                guard case .invalidEndpoint(_, let reason) = error else { return "\(error)" }
                return reason
            }
        }
        let rating = Rating(baseURL: "https://api.example.com/3")
        #expect(await reason(withoutStore, rating.durable())?.contains("durableStore") == true)
        #expect(await reason(withStore, rating.durable(), download: true)?.contains("in memory") == true)
        #expect(await reason(withStore, rating.durable(for: 0))?.contains("expiry") == true)
        #expect(await reason(withStore, rating.durable(for: .infinity))?.contains("expiry") == true)
        let file = scratch.file("poster.png")
        try Data([1, 2, 3]).write(to: file)
        let form: MultipartForm = [.file("poster", file, contentType: "image/png")]
        let upload = TestEndpoint(
            baseURL: "https://api.example.com", path: "posters", method: .post, task: .multipart(form))
        #expect(await reason(withStore, upload.durable())?.contains("form with files") == true)
        #expect(store.pendingKeys.isEmpty)
        // Without `durable()` the same pool sends as ever, nothing stored.
        #expect(await reason(withStore, rating) == nil)
        #expect(store.pendingKeys.isEmpty)
        // A durable write is never joined to a running task under its id (its key makes it a call of its own):
        // refused as a duplicate, and not kept; the running one, durable or not, goes on.
        let offline = TaskPool(
            configuration: .init(
                transport: StubTransport { _, _ in .json("{}") }, connectivity: ManualConnectivity(.offline),
                durableStore: store))
        for first in [rating.durable(), rating] as [any Endpoint] {
            offline.send(first, id: "rate 550") { _ in }
            do {
                _ = try await offline.send(rating.durable(), id: "rate 550")
                Issue.record("a second write under a running id was sent")
            } catch {
                guard case .duplicateTask(let id) = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(id == "rate 550")
            }
            #expect(store.pendingKeys.count == (first is ModifiedEndpoint<Rating> ? 1 : 0))
            #expect(offline.cancel(id: "rate 550"))
            #expect(store.pendingKeys.isEmpty)
        }
    }
}
