import Foundation
import MovieDB
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The playground: parses the command line, runs one command or the tour, and returns the exit status.
struct PlaygroundApp {
    let invocation: Invocation
    let pool: TaskPool
    let configuration: TMDBConfiguration
    let isOffline: Bool
    /// Holds the offline answers while the tour shows its calls in flight.
    private let answers = AnswerGate()

    /// Runs with the given arguments and environment; returns 0, 1 (API or network error) or 2 (usage error).
    static func main(arguments: [String], environment: [String: String]) async -> Int32 {
        let invocation: Invocation
        do {
            invocation = try Invocation.parse(arguments)
        } catch {
            standardError("error: \(error.message)\n\n\(Invocation.usage)")
            return 2
        }
        if invocation.command == .help {
            print(Invocation.usage)
            return 0
        }
        let credential = TMDBCredential.from(environment: environment)
        if invocation.live, invocation.baseURL == nil, credential == nil {
            standardError(
                "error: --live needs TMDB_API_KEY or TMDB_READ_TOKEN in the environment\n\n\(Invocation.usage)")
            return 2
        }
        var replay: HARReplayTransport?
        if let path = invocation.replay {
            do {
                guard FileManager.default.fileExists(atPath: path) else { throw CocoaError(.fileNoSuchFile) }
                replay = try HARReplayTransport(contentsOf: URL(fileURLWithPath: path))
            } catch {
                let reason = error is CocoaError ? "there is no such file" : "it is not a HAR 1.2 archive"
                standardError("error: --replay cannot use \(path): \(reason)\n\n\(Invocation.usage)")
                return 2
            }
        }
        var cache: DiskCacheStore?
        if let path = invocation.cache {
            do {
                cache = try DiskCacheStore(directory: URL(fileURLWithPath: path))
            } catch {
                standardError("error: --cache cannot use \(path): \(error.localizedDescription)\n\n\(Invocation.usage)")
                return 2
            }
        }
        var queue: DurableStore?
        if let path = invocation.offlineQueue {
            do {
                queue = try DurableStore(directory: URL(fileURLWithPath: path))
            } catch {
                standardError(
                    "error: --offline-queue cannot use \(path): \(error.localizedDescription)\n\n\(Invocation.usage)")
                return 2
            }
        }
        let session = Self.session(live: invocation.live, environment: environment)
        if case .rate = invocation.command, session == nil {
            standardError(
                "error: rate needs a session with --live: TMDB_SESSION_ID (a user's, from login) or TMDB_GUEST_SESSION_ID\n\n\(Invocation.usage)"
            )
            return 2
        }
        let app = PlaygroundApp(
            invocation: invocation, credential: credential, replay: replay, cache: cache, queue: queue, session: session
        )
        let status = await app.run()
        if let note = app.cacheReport?.note { standardError(note) }
        for note in await app.writesReport?.notesOnRestored(count: app.restoring) ?? [] { standardError(note) }
        if let path = invocation.record, let recorder = app.recorder {
            do {
                try recorder.write(to: URL(fileURLWithPath: path))
                standardError("recorded \(recorder.count) request\(recorder.count == 1 ? "" : "s") to \(path)")
            } catch {
                standardError("error: could not write \(path): \(error)")
                return 1
            }
        }
        return status
    }

    /// Records the run's traffic with `--record`.
    let recorder: HARRecorder?
    /// Notes answers that came from the cache, with `--cache`.
    let cacheReport: CacheReport?
    /// Tells what became of durable writes, with `--offline-queue`.
    let writesReport: WritesReport?
    /// How many writes an earlier run left in the `--offline-queue` directory, sent again by this run's pool.
    let restoring: Int
    /// The session ratings are made in: the stand-in's guest session offline; live, the environment's.
    let session: TMDBSession?
    /// The `--offline-queue` store.
    let queue: DurableStore?

    /// The session named by `TMDB_SESSION_ID` or `TMDB_GUEST_SESSION_ID` live; offline, the stand-in's guest session.
    static func session(live: Bool, environment: [String: String]) -> TMDBSession? {
        guard live else { return .guest(guestSessionID: OfflineTMDB.guestSessionID, expiresAt: nil) }
        if let id = environment["TMDB_SESSION_ID"], !id.isEmpty { return .user(sessionID: id) }
        if let id = environment["TMDB_GUEST_SESSION_ID"], !id.isEmpty {
            return .guest(guestSessionID: id, expiresAt: nil)
        }
        return nil
    }

    init(
        invocation: Invocation, credential: TMDBCredential?, replay: HARReplayTransport? = nil,
        cache: DiskCacheStore? = nil, queue: DurableStore? = nil, session: TMDBSession? = nil
    ) {
        self.invocation = invocation
        isOffline = !invocation.live
        var transport: any Transport
        let environment: TMDBEnvironment
        if let replay {
            transport = replay
            environment = .production
        } else if isOffline {
            // The tour holds its four calls' answers until it has shown them in flight.
            let standIn: any Transport =
                invocation.unreachable
                ? StubTransport.failing(with: URLError(.cannotConnectToHost)) : OfflineTMDB().transport(delay: 0.05)
            transport = HeldTransport(base: standIn, gate: answers)
            environment = .production
        } else {
            transport = URLSessionTransport()
            environment = invocation.baseURL.map { TMDBEnvironment.custom(baseURL: $0) } ?? .production
        }
        recorder = invocation.record.map { _ in HARRecorder() }
        if let recorder { transport = RecordingTransport(transport, recorder: recorder) }
        cacheReport = cache.map { _ in CacheReport() }
        var loggers: [any NetworkLogger] = invocation.debug ? [ConsoleLogger()] : []
        if let cacheReport { loggers.append(cacheReport) }
        if let recorder { loggers.append(recorder) }  // answers from the cache never reach the transport
        let configuration = TMDBConfiguration(
            environment: environment, credential: isOffline ? .apiKey(OfflineTMDB.apiKey) : credential)
        self.configuration = configuration
        self.queue = queue
        self.session = session
        let writesReport = queue.map { _ in WritesReport() }
        self.writesReport = writesReport
        // Read before the pool, which sends them again as it is made.
        restoring = queue?.pendingKeys.count ?? 0
        let interceptors: [any RequestInterceptor] = queue == nil ? [] : [configuration.credentials(session: session)]
        var outcomes: (@Sendable (DurableOutcome) -> Void)?
        if let writesReport { outcomes = { writesReport.add($0) } }
        pool = TaskPool(
            configuration: .init(
                transport: transport, logger: loggers.isEmpty ? nil : CombinedLogger(loggers), requestTimeout: 20,
                // The store keeps no credential: a write sent again gets this run's key and session.
                interceptors: interceptors,
                stallThreshold: invocation.debug ? 2 : nil, cache: cache, cachePolicy: .networkFirst,
                durableStore: queue, durableOutcomes: outcomes))
    }

    private var movies: MovieService { MovieService(pool: pool, configuration: configuration) }

    func run() async -> Int32 {
        do {
            switch invocation.command {
            case .tour: try await tour()
            case .nowPlaying(let page):
                try await list("Now playing") { () async throws(NetworkError) in try await movies.nowPlaying(page: page)
                }
            case .popular(let page):
                try await list("Popular") { () async throws(NetworkError) in try await movies.popular(page: page) }
            case .topRated(let page):
                try await list("Top rated") { () async throws(NetworkError) in try await movies.topRated(page: page) }
            case .upcoming(let page):
                try await list("Upcoming") { () async throws(NetworkError) in try await movies.upcoming(page: page) }
            case .recommendations(let id, let page):
                try await list("Recommended for movie \(id)") { () async throws(NetworkError) in
                    try await movies.recommendations(id: id, page: page)
                }
            case .search(let query, let page):
                try await list("Search \"\(query)\"") { () async throws(NetworkError) in
                    try await movies.search(query: query, page: page)
                }
            case .details(let id):
                let details = try await inspected { () async throws(NetworkError) in try await movies.details(id: id) }
                print(invocation.json ? Render.json(details) : Render.details(details))
            case .videos(let id):
                let videos = try await inspected { () async throws(NetworkError) in try await movies.videos(id: id) }
                print(invocation.json ? Render.json(videos) : Render.videos(videos))
            case .login(let username, let password):
                let auth = AuthService(pool: pool, configuration: configuration)
                let session = try await inspected { () async throws(NetworkError) in
                    try await auth.login(username: username, password: password)
                }
                print(invocation.json ? Render.json(session) : Render.login(session, username: username))
            case .rate(let id, let value):
                try await rate(id: id, value: value)
            case .poster(let id, let size, let out):
                try await poster(id: id, size: ImageSize(rawValue: size), out: out)
            case .refreshDemo:
                try await refreshDemo()
            case .help:
                print(Invocation.usage)
            }
            return 0
        } catch {
            standardError(Render.error(error))
            return 1
        }
    }

    /// Downloads the movie's poster to `out`, drawing its progress on standard error.
    private func poster(id: Int, size: ImageSize, out: String) async throws(NetworkError) {
        let details = try await inspected { () async throws(NetworkError) in try await movies.details(id: id) }
        let file = URL(fileURLWithPath: out)
        let bar = ProgressBar(onTerminal: isatty(STDERR_FILENO) != 0)
        let response = try await movies.downloadPoster(of: details, size: size, to: file) { bar.show($0) }
        bar.finish()
        let bytes = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
        if invocation.json {
            print(
                Render.json(
                    Render.PosterJSON(id: id, title: details.title, size: size.rawValue, file: file.path, bytes: bytes))
            )
        } else {
            print(
                "Saved the \(size.rawValue) poster of \(details.title) to \(file.path) (\(bytes) bytes, status \(response.statusCode))."
            )
        }
    }

    /// Rates a movie; with `--offline-queue`, a durable write: kept when the server cannot be reached.
    private func rate(id: Int, value: Double) async throws(NetworkError) {
        guard let session else {
            throw .invalidEndpoint(url: configuration.environment.baseURL, reason: "rating needs a session")
        }
        let durability = queue.map { _ in Durability(expiry: 7 * 86_400) }
        do {
            let status = try await inspected { () async throws(NetworkError) in
                try await movies.rate(id: id, value: value, session: session, durability: durability)
            }
            print(
                invocation.json
                    ? Render.json(
                        Render.RatingJSON(
                            id: id, value: value, queued: false, statusCode: status.statusCode,
                            statusMessage: status.statusMessage))
                    : "Rated movie \(id) \(value) of 10: \(status.statusMessage) (TMDB code \(status.statusCode)).")
        } catch {
            let taskID = movies.taskID(for: .rate(id: id, value: value))
            guard let queue, let writesReport, writesReport.wasKept(id: taskID) else { throw error }
            let path = invocation.offlineQueue ?? queue.directory.path
            print(
                invocation.json
                    ? Render.json(
                        Render.RatingJSON(id: id, value: value, queued: true, statusCode: nil, statusMessage: nil))
                    : "The server could not be reached: the rating of movie \(id) is kept in \(path), "
                        + "and the next run with --offline-queue \(path) sends it."
            )
        }
    }

    private func list(
        _ title: String, _ call: @escaping @Sendable () async throws(NetworkError) -> MoviePage
    )
        async throws(NetworkError)
    {
        let page = try await inspected(call)
        print(invocation.json ? Render.json(Render.PageJSON(page: page)) : Render.table(page, title: title))
    }

    /// Runs a call; with `--debug`, prints the active-task table to stderr while it is in flight.
    private func inspected<T: Sendable>(
        _ call: @escaping @Sendable () async throws(NetworkError) -> T
    )
        async throws(NetworkError) -> T
    {
        let task = started(call)
        if invocation.debug {
            for _ in 0..<200 where pool.activeTasks.isEmpty {
                try? await Task.sleep(nanoseconds: 1_000_000)
            }
            standardError(pool.debugDescription)
        }
        return try await task.value.get()
    }

    // MARK: Token refresh

    /// Six calls start with an expired read token; the server rejects it; one renewal serves all six.
    private func refreshDemo() async throws(NetworkError) {
        print("Token refresh: six calls start with an expired read token, and TMDB rejects it (401).")
        print(
            "AuthenticationInterceptor renews it once; calls that were rejected or arrive meanwhile wait, then replay.\n"
        )
        let renewals = Renewals()
        let interceptor = AuthenticationInterceptor(
            authenticator: TMDBTokenAuthenticator {
                // Your backend would hand out a fresh token here.
                try await Task.sleep(nanoseconds: 300_000_000)
                return "renewed-token-\(renewals.next())"
            },
            credential: "expired-token")
        let pool = TaskPool(
            configuration: .init(
                transport: self.pool.configuration.transport, logger: self.pool.configuration.logger,
                requestTimeout: 20,
                interceptors: [interceptor]))
        var tokenConfiguration = configuration
        tokenConfiguration.credential = nil
        let movies = MovieService(pool: pool, configuration: tokenConfiguration)
        let endpoints: [MovieEndpoint] = [
            .nowPlaying(page: 1), .popular(page: 1), .topRated(page: 1), .upcoming(page: 1), .details(id: 550),
            .videos(id: 550),
        ]
        let tasks = endpoints.map { endpoint in
            started { () async throws(NetworkError) in try await movies.send(endpoint, as: AnyJSON.self) }
        }
        // The table is shown once every call waits for the renewed token (a second at most): until then some
        // may still be on their way to their 401.
        for _ in 0..<1_000
        where pool.activeTasks.filter({ $0.phase == .waitingForCredential }).count < endpoints.count {
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
        print("While the token is renewed:")
        print(Render.indented(pool.debugDescription))
        var failures: [NetworkError] = []
        for task in tasks {
            if case .failure(let error) = await task.value { failures.append(error) }
        }
        let renewed = await interceptor.refreshCount
        print(
            "\nThe token was renewed \(renewed) time\(renewed == 1 ? "" : "s"); \(endpoints.count - failures.count) of \(endpoints.count) calls succeeded."
        )
        if let failure = failures.first { throw failure }
    }

    // MARK: The tour

    private func tour() async throws(NetworkError) {
        let source =
            invocation.replay.map { "replaying \($0)" }
            ?? (isOffline
                ? "offline, answering from bundled TMDB fixtures" : "live, \(configuration.environment.baseURL)")
        print("NetworkCore playground - \(source)\n")

        print("1. MovieService.nowPlaying(page: 1)")
        print(
            Render.table(
                try await inspected { () async throws(NetworkError) in try await movies.nowPlaying(page: 1) },
                title: "Now playing"))

        print("\n2. Four calls at once, each tracked by the pool under its id")
        let calls: [(id: String, run: @Sendable () async throws(NetworkError) -> String)] = [
            (
                movies.taskID(for: .popular(page: 1)),
                { () async throws(NetworkError) in "\(try await movies.popular().results.count) movies" }
            ),
            (
                movies.taskID(for: .topRated(page: 1)),
                { () async throws(NetworkError) in "\(try await movies.topRated().results.count) movies" }
            ),
            (
                movies.taskID(for: .upcoming(page: 1)),
                { () async throws(NetworkError) in "\(try await movies.upcoming().results.count) movies" }
            ),
            (
                movies.taskID(for: .details(id: 550)),
                { () async throws(NetworkError) in
                    let movie = try await movies.details(id: 550)
                    return "\(movie.title) (\(movie.releaseYear.map(String.init) ?? "-"))"
                }
            ),
        ]
        // Offline, the answers wait until the table is printed; live, the network takes its time.
        if isOffline { answers.close() }
        let tasks = calls.map { call in (call.id, started(call.run)) }
        if isOffline {
            await answers.holding(calls.count)
        } else {
            for _ in 0..<500 where pool.activeTasks.filter({ $0.phase == .sending }).count < calls.count {
                try? await Task.sleep(nanoseconds: 1_000_000)
            }
        }
        print(Render.indented(pool.debugDescription))

        let cancelled = movies.taskID(for: .upcoming(page: 1))
        print("\n3. pool.cancel(id: \"\(cancelled)\") while it runs")
        print("  cancelled: \(pool.cancel(id: cancelled))")
        answers.open()
        for (id, task) in tasks {
            switch await task.value {
            case .success(let summary): print("  \(id): finished, \(summary)")
            case .failure(let error) where error.isCancelled:
                print("  \(id): cancelled (\(error.localizedDescription))")
            case .failure(let error): print("  \(id): failed, \(Render.error(error))")
            }
        }

        print("\n4. A TMDB error as a user sees it: the same call with an invalid API key")
        var invalid = configuration
        invalid.credential = .apiKey("invalid")
        do {
            _ = try await MovieService(pool: pool, configuration: invalid).nowPlaying(page: 1)
            print("  unexpectedly accepted")
        } catch {
            print("  " + Render.error(error))
            print(
                "  error.serverError?.code == \(error.serverError?.code.map(String.init) ?? "nil"), statusCode == \(error.statusCode.map(String.init) ?? "nil")"
            )
        }
        print("\n5. Afterwards: pool.activeTasks.isEmpty == \(pool.activeTasks.isEmpty)")
    }
}

/// Answers from `base` once `gate` lets them through.
struct HeldTransport: Transport {
    let base: any Transport
    let gate: AnswerGate

    var maximumRequestsPerHost: Int? { base.maximumRequestsPerHost }

    func send(_ request: URLRequest, context: TransportContext) async throws -> (Data, HTTPURLResponse) {
        await gate.pass()
        try Task.checkCancellation()
        return try await base.send(request, context: context)
    }
}

/// Lets answers through while open (it starts open); while closed, holds them until it opens or their
/// task is cancelled.
final class AnswerGate: @unchecked Sendable {
    // @unchecked Sendable: every field is guarded by `lock`.
    private let lock = NSLock()
    private var closed = false
    private var held: [UUID: CheckedContinuation<Void, Never>] = [:]
    private var watcher: (count: Int, continuation: CheckedContinuation<Void, Never>)?

    /// Holds the answers that come from now on.
    func close() { lock.withLock { closed = true } }

    /// Lets every held answer through, and those that come later.
    func open() {
        let waiting = lock.withLock {
            closed = false
            defer { held = [:] }
            return Array(held.values)
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns once `count` answers are held.
    func holding(_ count: Int) async {
        await withCheckedContinuation { continuation in
            lock.lock()
            if held.count >= count {
                lock.unlock()
                continuation.resume()
            } else {
                watcher = (count, continuation)
                lock.unlock()
            }
        }
    }

    /// Returns when the gate is open, or the calling task is cancelled.
    func pass() async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                lock.lock()
                guard closed, !Task.isCancelled else {
                    lock.unlock()
                    return continuation.resume()
                }
                held[id] = continuation
                var reached: CheckedContinuation<Void, Never>?
                if let watcher, held.count >= watcher.count {
                    reached = watcher.continuation
                    self.watcher = nil
                }
                lock.unlock()
                reached?.resume()
            }
        } onCancel: {
            lock.withLock { held.removeValue(forKey: id) }?.resume()
        }
    }
}

/// Starts `call` in a task of its own, whose value is the call's outcome.
private func started<T: Sendable>(
    _ call: @escaping @Sendable () async throws(NetworkError) -> T
)
    -> Task<Result<T, NetworkError>, Never>
{
    Task {
        do throws(NetworkError) { return .success(try await call()) } catch { return .failure(error) }
    }
}

/// Any JSON at all; for calls whose answer the demo does not look at.
struct AnyJSON: Decodable, Sendable {
    init(from decoder: any Decoder) throws {}
}

/// Counts token renewals for the refresh demo.
final class Renewals: @unchecked Sendable {
    // @unchecked Sendable: `count` is guarded by `lock`.
    private let lock = NSLock()
    private var count = 0

    func next() -> Int {
        lock.withLock {
            count += 1; return count
        }
    }
}

/// Writes a line to standard error.
func standardError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// What became of the durable writes (`--offline-queue`): this run's, and those an earlier run kept.
final class WritesReport: @unchecked Sendable {
    // @unchecked Sendable: `outcomes` is guarded by `lock`.
    private let lock = NSLock()
    private var outcomes: [DurableOutcome] = []

    func add(_ outcome: DurableOutcome) { lock.withLock { outcomes.append(outcome) } }

    /// Whether this run's write under `id` was kept (a pool tells a write's outcome before its caller resumes).
    func wasKept(id: String) -> Bool {
        lock.withLock { outcomes.first { $0.id == id && !$0.restored }?.kept ?? false }
    }

    /// One line for each of the `count` writes an earlier run kept, once each has ended (at most 30 seconds).
    func notesOnRestored(count: Int) async -> [String] {
        guard count > 0 else { return [] }
        var restored: [DurableOutcome] = []
        for _ in 0..<3_000 {
            restored = lock.withLock { outcomes.filter(\.restored) }
            if restored.count >= count { break }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        let waiting = count - restored.count
        return restored.map { outcome in
            let what = "a write kept by an earlier run, \(outcome.id),"
            return switch outcome.result {
            case .success(let response): "note: \(what) was sent: the server answered \(response.statusCode)"
            case .failure where outcome.kept: "note: \(what) is kept again: the server could not be reached"
            case .failure(let error): "note: \(what) failed: \(Render.error(error).dropFirst("error: ".count))"
            }
        }
            + (waiting > 0
                ? [
                    "note: \(waiting) kept write\(waiting == 1 ? "" : "s") had no outcome yet; the next run sends \(waiting == 1 ? "it" : "them")"
                ] : [])
    }
}

/// Remembers the answers that came from the cache (`--cache`), to say so once the command has run.
final class CacheReport: NetworkLogger, @unchecked Sendable {
    // @unchecked Sendable: `sources` is guarded by `lock`.
    private let lock = NSLock()
    private var sources: [Response.Source] = []

    func log(_ event: TaskEvent) {
        guard event.kind == .finished || event.kind == .failed, let source = event.source, source != .network else {
            return
        }
        lock.withLock { sources.append(source) }
    }

    /// One line for standard error, or `nil` when every answer came from the network.
    var note: String? {
        let sources = lock.withLock { self.sources }
        guard let first = sources.first else { return nil }
        let what = sources.count == 1 ? "the answer" : "\(sources.count) answers"
        return switch first {
        case .stale: "note: \(what) came from the cache, stale: the server could not be reached"
        case .revalidated: "note: \(what) came from the cache, confirmed unchanged by the server (304)"
        default: "note: \(what) came from the cache: the server could not be reached"
        }
    }
}
