import Foundation
import NetworkCore
import Testing

@testable import MovieDB

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("MovieService")
struct MovieServiceTests {
    let log = RequestLog()

    func service(_ configuration: TMDBConfiguration = offlineConfiguration, delay: TimeInterval = 0) -> MovieService {
        MovieService(pool: offlinePool(delay: delay, log: log), configuration: configuration)
    }

    @Test("every list endpoint: path, page, task id and decoded page")
    func lists() async throws {
        let movies = service()
        let cases: [(String, String, Int, () async throws(NetworkError) -> MoviePage)] = [
            (
                "/3/movie/now_playing", "movies.nowPlaying.page=1", 5,
                { () async throws(NetworkError) in try await movies.nowPlaying(page: 1) }
            ),
            (
                "/3/movie/popular", "movies.popular.page=1", 5,
                { () async throws(NetworkError) in try await movies.popular() }
            ),
            (
                "/3/movie/top_rated", "movies.topRated.page=1", 6,
                { () async throws(NetworkError) in try await movies.topRated() }
            ),
            (
                "/3/movie/upcoming", "movies.upcoming.page=1", 3,
                { () async throws(NetworkError) in try await movies.upcoming() }
            ),
            (
                "/3/movie/550/recommendations", "movies.recommendations.id=550.page=1", 4,
                { () async throws(NetworkError) in try await movies.recommendations(id: 550) }
            ),
            (
                "/3/search/movie", "movies.search.query=fight.page=1", 1,
                { () async throws(NetworkError) in try await movies.search(query: "fight") }
            ),
        ]
        for (path, _, count, call) in cases {
            let page = try await call()
            #expect(page.results.count == count, "\(path)")
            let request = try #require(log.requests.last)
            #expect(request.url?.path == path)
            #expect(request.url?.host == "api.themoviedb.org")
            #expect(request.queryItems["api_key"] == OfflineTMDB.apiKey)
            #expect(request.queryItems["page"] == "1")
        }
        #expect(log.requests.count == cases.count)
        #expect(
            cases.map { $0.1 } == [
                MovieEndpoint.nowPlaying(page: 1).taskID, MovieEndpoint.popular(page: 1).taskID,
                MovieEndpoint.topRated(page: 1).taskID, MovieEndpoint.upcoming(page: 1).taskID,
                MovieEndpoint.recommendations(id: 550, page: 1).taskID,
                MovieEndpoint.search(query: "fight", page: 1).taskID,
            ])
    }

    @Test("details and videos")
    func detailsAndVideos() async throws {
        let movies = service()
        #expect(try await movies.details(id: 550).title == "Fight Club")
        #expect(log.requests.last?.url?.path == "/3/movie/550")
        #expect(try await movies.details(id: 278).genres.map(\.name) == ["Drama", "Crime"])
        #expect(try await movies.videos(id: 550).results.count == 3)
        #expect(log.requests.last?.url?.path == "/3/movie/550/videos")
    }

    @Test("search sends its options, and a page past the last is empty")
    func searchOptions() async throws {
        let movies = service()
        let page = try await movies.search(query: "the", page: 1)
        #expect(page.results.map(\.title).contains("The Godfather"))
        let request = try #require(log.requests.last)
        #expect(request.queryItems["query"] == "the")
        #expect(request.queryItems["include_adult"] == "false")
        #expect(request.queryItems["year"] == nil)
        #expect(try await movies.nowPlaying(page: 2).results.isEmpty)
    }

    @Test("language and region are sent when configured, left out when not")
    func languageAndRegion() async throws {
        var configuration = offlineConfiguration
        configuration.language = "de-DE"
        configuration.region = "DE"
        _ = try await service(configuration).upcoming()
        #expect(log.requests.last?.queryItems["language"] == "de-DE")
        #expect(log.requests.last?.queryItems["region"] == "DE")
        _ = try await service().upcoming()
        #expect(log.requests.last?.queryItems["language"] == nil)
        #expect(log.requests.last?.queryItems["region"] == nil)
    }

    @Test("a read-access token is sent as a Bearer header, not in the query")
    func readToken() async throws {
        _ = try await service(TMDBConfiguration(credential: .readAccessToken("rt-123"))).popular()
        let request = try #require(log.requests.last)
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer rt-123")
        #expect(request.queryItems["api_key"] == nil)
    }

    @Test("the environment is a value: a custom base URL is used as given")
    func environment() async throws {
        _ = try await service(
            TMDBConfiguration(environment: .custom(baseURL: "http://127.0.0.1:9/3"), credential: .apiKey("k"))
        )
        .popular()
        #expect(log.requests.last?.url?.absoluteString.hasPrefix("http://127.0.0.1:9/3/movie/popular?") == true)
        #expect(TMDBEnvironment.staging(baseURL: "https://s.example/3").name == "staging")
        #expect(TMDBEnvironment.qa(baseURL: "https://q.example/3").baseURL == "https://q.example/3")
    }

    @Test(
        "TMDB's errors reach the caller with TMDB's own code and message",
        arguments: [
            ("invalid", 550, 401, 7), ("read-only", 550, 401, 3), ("rate-limited", 550, 429, 25),
            (OfflineTMDB.apiKey, 999_999, 404, 34),
        ])
    func errors(key: String, id: Int, status: Int, code: Int) async throws {
        let movies = service(TMDBConfiguration(credential: .apiKey(key)))
        let error = try #require(await failure { () async throws(NetworkError) in try await movies.details(id: id) })
        #expect(error.statusCode == status)
        #expect(error.serverError?.code == code)
        #expect(error.serverError?.message?.isEmpty == false)
        #expect(!error.localizedDescription.contains(key) || ["invalid", "read-only", "rate-limited"].contains(key))
    }

    @Test("a page below 1 is TMDB's code 22; past 500, its validation error with the server's message")
    func invalidPage() async throws {
        let error = try #require(
            await failure { () async throws(NetworkError) in try await service().popular(page: 0) })
        #expect(error.statusCode == 400)
        #expect(error.serverError?.code == 22)
        let past = try #require(
            await failure { () async throws(NetworkError) in try await service().popular(page: 501) })
        #expect(past.statusCode == 422)
        #expect(past.serverError?.code == nil)
        #expect(past.serverError?.message == "page must be less than or equal to 500")
        #expect(past.localizedDescription.contains("page must be less than or equal to 500"))
    }

    @Test("services with different environments or credentials share one pool: each call runs, with its own answer")
    func sharedPool() async throws {
        let pool = offlinePool(delay: 0.3, log: log)
        let production = MovieService(pool: pool, configuration: offlineConfiguration)
        let staging = MovieService(
            pool: pool,
            configuration: TMDBConfiguration(
                environment: .staging(baseURL: "https://staging.example/3"), credential: .apiKey(OfflineTMDB.apiKey)))
        let otherKey = MovieService(pool: pool, configuration: TMDBConfiguration(credential: .apiKey("invalid")))
        let token = MovieService(pool: pool, configuration: TMDBConfiguration(credential: .readAccessToken("tok-A")))
        let otherToken = MovieService(
            pool: pool, configuration: TMDBConfiguration(credential: .readAccessToken("expired-tok-B")))
        let ids = [production, staging, otherKey, token, otherToken].map { $0.taskID(for: .nowPlaying(page: 1)) }
        #expect(Set(ids).count == 5)
        #expect(!ids.contains { $0.contains("tok-") || $0.contains(OfflineTMDB.apiKey) || $0.contains("invalid") })
        async let a = failure { () async throws(NetworkError) in try await production.nowPlaying(page: 1) }
        async let b = failure { () async throws(NetworkError) in try await staging.nowPlaying(page: 1) }
        async let c = failure { () async throws(NetworkError) in try await otherKey.nowPlaying(page: 1) }
        async let d = failure { () async throws(NetworkError) in try await token.nowPlaying(page: 1) }
        async let e = failure { () async throws(NetworkError) in try await otherToken.nowPlaying(page: 1) }
        let errors = await [a, b, c, d, e]
        #expect(errors[0] == nil)
        #expect(errors[1] == nil)
        // The offline TMDB refuses `invalid` and `expired…`: each gets its own refusal, never another's page.
        #expect(errors[2]?.serverError?.code == 7)
        #expect(errors[3] == nil)
        #expect(errors[4]?.statusCode == 401)
        #expect(log.requests.count == 5)
        #expect(Set(log.requests.compactMap { $0.url?.host }) == ["api.themoviedb.org", "staging.example"])
    }

    @Test("a call can be found and cancelled by its readable id")
    func cancelByID() async throws {
        let movies = service(delay: 10)
        let screen = Task { try await movies.nowPlaying(page: 1) }
        let id = movies.taskID(for: .nowPlaying(page: 1))
        #expect(id.hasPrefix("movies.nowPlaying.page=1 production#"))
        var found = false
        for _ in 0..<10_000 where !found {  // up to 10 s: a ThreadSanitizer run is slow
            found = movies.pool.task(id: id) != nil
            if !found { try await Task.sleep(nanoseconds: 1_000_000) }
        }
        #expect(found)
        #expect(movies.pool.cancel(id: id))
        guard case .failure(let error as NetworkError) = await screen.result else {
            Issue.record("the cancelled call did not fail")
            return
        }
        #expect(error.isCancelled)
        #expect(movies.pool.activeTasks.isEmpty)
    }

    @Test("completion-handler variants deliver the same results")
    func completions() async throws {
        let movies = service()
        let page: MoviePage = try await withCheckedThrowingContinuation { c in
            movies.topRated(page: 1, completion: { c.resume(with: $0) })
        }
        #expect(page.results.count == 6)
        let details: MovieDetails = try await withCheckedThrowingContinuation { c in
            movies.details(id: 550, completion: { c.resume(with: $0) })
        }
        #expect(details.runtime == 139)
        let videos: VideoList = try await withCheckedThrowingContinuation { c in
            movies.videos(id: 550, completion: { c.resume(with: $0) })
        }
        #expect(videos.results.count == 3)
        let search: MoviePage = try await withCheckedThrowingContinuation { c in
            movies.search(query: "inter", completion: { c.resume(with: $0) })
        }
        #expect(search.results.map(\.title) == ["Interstellar"])
        let others: [MoviePage] = try await [
            withCheckedThrowingContinuation { c in movies.nowPlaying(completion: { c.resume(with: $0) }) },
            withCheckedThrowingContinuation { c in movies.popular(completion: { c.resume(with: $0) }) },
            withCheckedThrowingContinuation { c in movies.upcoming(completion: { c.resume(with: $0) }) },
            withCheckedThrowingContinuation { c in movies.recommendations(id: 550, completion: { c.resume(with: $0) })
            },
        ]
        #expect(others.map(\.results.count) == [5, 5, 3, 4])
        let missing: Result<MovieDetails, NetworkError> = await withCheckedContinuation { continuation in
            movies.details(id: 1) { continuation.resume(returning: $0) }
        }
        guard case .failure(let error) = missing else {
            Issue.record("movie 1 exists offline")
            return
        }
        #expect(error.serverError?.code == 34)
    }

    @Test("endpoints have fixtures as sample data, so StubTransport.sampleData works offline")
    func sampleData() async throws {
        let pool = TaskPool(configuration: .init(transport: StubTransport.sampleData()))
        let page = try await MovieService(pool: pool, configuration: offlineConfiguration).nowPlaying()
        #expect(page.results.count == 5)
        #expect(AuthEndpoint.newToken.sampleData == TMDBFixtures.data(.newToken))
    }

    @Test("a session is attached where a service asks for it")
    func sessionAttachment() throws {
        let user = try offlineConfiguration.prepare(MovieEndpoint.details(id: 1), session: .user(sessionID: "s1"))
            .urlRequest()
        #expect(user.queryItems["session_id"] == "s1")
        let guest = try offlineConfiguration.prepare(
            MovieEndpoint.details(id: 1), session: .guest(guestSessionID: "g1", expiresAt: nil)
        )
        .urlRequest()
        #expect(guest.queryItems["guest_session_id"] == "g1")
        #expect(guest.queryItems["session_id"] == nil)
    }
}

@Suite("MovieService images")
struct MovieImageTests {
    /// Requests the stand-in saw, from any thread.
    final class Seen: @unchecked Sendable {  // `lock` guards `requests`.
        private let lock = NSLock()
        private var stored: [URLRequest] = []
        func append(_ request: URLRequest) { lock.withLock { stored.append(request) } }
        var requests: [URLRequest] { lock.withLock { stored } }
    }

    @Test("a poster downloads from the image host with no credential, with progress, to the file")
    func poster() async throws {
        let seen = Seen()
        let offline = OfflineTMDB()
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { request, _ in
                    seen.append(request)
                    return offline.respond(to: request)
                }))
        let movies = MovieService(pool: pool, configuration: .init(credential: .apiKey(OfflineTMDB.apiKey)))
        let fightClub = try await movies.details(id: 550)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("poster-\(UUID().uuidString).jpg")
        defer { try? FileManager.default.removeItem(at: file) }
        let last = Seen()
        let response = try await movies.downloadPoster(of: fightClub, size: .w185, to: file) { progress in
            if progress.fractionCompleted == 1 { last.append(URLRequest(url: file)) }
        }
        #expect(response.fileURL == file)
        #expect(try Data(contentsOf: file) == TMDBFixtures.poster)
        #expect(last.requests.count == 1)
        let image = try #require(seen.requests.last)
        #expect(image.url?.absoluteString == "https://image.tmdb.org/t/p/w185/pB8BM7pdSp6B6Ih7QZ4DrQ3PmJK.jpg")
        #expect(image.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(ImageEndpoint(path: "/a.jpg", size: .w500).taskID == "images.w500/a.jpg")

        let plain = Movie(id: 1, title: "No art")
        do {
            try await movies.downloadBackdrop(of: plain, to: file)
            Issue.record("downloaded a backdrop that does not exist")
        } catch {
            guard case .invalidEndpoint(_, let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(reason == "the movie has no backdrop")
        }
        #expect(seen.requests.count == 2)
    }

    @Test("rate: a POST of the value in the session, TMDB's status back; a value TMDB does not take is refused unsent")
    func rate() async throws {
        let log = RequestLog()
        let movies = MovieService(pool: offlinePool(log: log), configuration: offlineConfiguration)
        let guest = TMDBSession.guest(guestSessionID: OfflineTMDB.guestSessionID, expiresAt: nil)
        let status = try await movies.rate(id: 550, value: 8.5, session: guest)
        #expect(status == TMDBStatus(success: true, statusCode: 1, statusMessage: "Success."))
        let request = try #require(log.requests.last)
        #expect(request.httpMethod == "POST" && request.url?.path == "/3/movie/550/rating")
        #expect(request.queryItems["guest_session_id"] == OfflineTMDB.guestSessionID)
        #expect(request.queryItems["api_key"] == OfflineTMDB.apiKey)
        #expect(request.httpBody == Data(#"{"value":8.5}"#.utf8))
        #expect(MovieEndpoint.rate(id: 550, value: 8.5).taskID == "movies.rate.id=550.value=8.5")
        for value in [0, 0.25, 8.3, 10.5, -1, .nan, .infinity] {
            let error = await failure { () async throws(NetworkError) in
                try await movies.rate(id: 550, value: value, session: guest)
            }
            guard case .invalidEndpoint(let url, let reason) = error else {
                Issue.record("\(value): \(String(describing: error))")
                continue
            }
            #expect(url == "https://api.themoviedb.org/3/movie/550/rating")
            #expect(reason == "a rating is 0.5 to 10 in steps of 0.5, not \(value)")
        }
        #expect(log.requests.count == 1)
        // TMDB's own refusals, typed with its codes.
        let stranger = await failure { () async throws(NetworkError) in
            try await movies.rate(id: 550, value: 8, session: .user(sessionID: "not-a-session"))
        }
        #expect(stranger?.statusCode == 401 && stranger?.serverError?.code == 3)
        let unknown = await failure { () async throws(NetworkError) in
            try await movies.rate(id: 1, value: 8, session: guest)
        }
        #expect(unknown?.statusCode == 404 && unknown?.serverError?.code == 34)
        // A durable rating needs the interceptor that adds the credential and session again, and a store.
        let withoutInterceptor = await failure { () async throws(NetworkError) in
            try await movies.rate(id: 550, value: 8, session: guest, durability: Durability())
        }
        guard case .invalidEndpoint(_, let reason) = withoutInterceptor else {
            Issue.record("\(String(describing: withoutInterceptor))")
            return
        }
        #expect(reason.hasPrefix("a durable rating needs configuration.credentials(session:) among the pool's"))
        let storeless = MovieService(
            pool: TaskPool(
                configuration: .init(
                    transport: OfflineTMDB().transport(),
                    interceptors: [offlineConfiguration.credentials(session: guest)])),
            configuration: offlineConfiguration)
        let withoutStore = await failure { () async throws(NetworkError) in
            try await storeless.rate(id: 550, value: 8, session: guest, durability: Durability())
        }
        guard case .invalidEndpoint(_, let storeReason) = withoutStore else {
            Issue.record("\(String(describing: withoutStore))")
            return
        }
        #expect(storeReason.contains("durableStore"))
        #expect(log.requests.count == 3)
    }

    @Test(
        "the stand-in's rating route answers as TMDB does",
        arguments: [
            (#"{"value": 0}"#, "guest_session_id=\(OfflineTMDB.guestSessionID)", 400, 18),
            (#"{"value": 10.5}"#, "guest_session_id=\(OfflineTMDB.guestSessionID)", 400, 19),
            (#"{"value": 7.3}"#, "guest_session_id=\(OfflineTMDB.guestSessionID)", 400, 20),
            (#"{}"#, "guest_session_id=\(OfflineTMDB.guestSessionID)", 400, 18),
            (#"{"value": 7}"#, "", 401, 3),
            (#"{"value": 7}"#, "guest_session_id=other", 401, 3),
            (#"{"value": 7}"#, "session_id=79191836ddaa0da3df76a5ffef6f07ad6ab0c641", 201, 1),
            (#"{"value": 10}"#, "guest_session_id=\(OfflineTMDB.guestSessionID)", 201, 1),
        ])
    func standInRating(body: String, session: String, status: Int, code: Int) throws {
        var request = URLRequest(
            url: URL(string: "https://api.themoviedb.org/3/movie/550/rating?api_key=k&\(session)")!)
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        let answer = OfflineTMDB().respond(to: request)
        #expect(answer.statusCode == status)
        let object = try JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
        #expect(object?["status_code"] as? Int == code)
        #expect(answer.headers["Cache-Control"] == nil)
    }

    @Test(
        "TMDBCredentialInterceptor adds what a request lacks: the credential to the environment's requests, the session to writes",
        arguments: [
            // credential, method, URL, Authorization header → URL, Authorization header
            (
                TMDBCredential.apiKey("k"), "GET", "https://api.themoviedb.org/3/movie/550", nil,
                "https://api.themoviedb.org/3/movie/550?api_key=k", nil
            ),
            (
                .apiKey("k"), "POST", "https://api.themoviedb.org/3/movie/550/rating?api_key=mine", nil,
                "https://api.themoviedb.org/3/movie/550/rating?api_key=mine&session_id=s%26%3D1", nil
            ),
            (
                .apiKey("k&=+"), "POST", "https://api.themoviedb.org/3/search/movie?query=a%20b+c", nil,
                "https://api.themoviedb.org/3/search/movie?query=a%20b+c&api_key=k%26%3D%2B&session_id=s%26%3D1", nil
            ),
            (
                .apiKey("k"), "DELETE", "https://api.themoviedb.org/3/movie/550/rating?guest_session_id=g", nil,
                "https://api.themoviedb.org/3/movie/550/rating?guest_session_id=g&api_key=k", nil
            ),
            (
                .readAccessToken("t"), "POST", "https://api.themoviedb.org/3/movie/550/rating", nil,
                "https://api.themoviedb.org/3/movie/550/rating?session_id=s%26%3D1", "Bearer t"
            ),
            (
                .readAccessToken("t"), "GET", "https://api.themoviedb.org/3/movie/550", "Bearer mine",
                "https://api.themoviedb.org/3/movie/550", "Bearer mine"
            ),
            (
                .apiKey("k"), "POST", "https://image.tmdb.org/t/p/w500/a.jpg", nil,
                "https://image.tmdb.org/t/p/w500/a.jpg", nil
            ),
            (
                .apiKey("k"), "GET", "https://api.themoviedb.org/30/movie", nil, "https://api.themoviedb.org/30/movie",
                nil
            ),
        ] as [(TMDBCredential, String, String, String?, String, String?)])
    func credentialInterceptor(
        credential: TMDBCredential, method: String, url: String, authorization: String?, expectedURL: String,
        expectedAuthorization: String?
    ) async throws {
        let configuration = TMDBConfiguration(credential: credential)
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.setValue(authorization, forHTTPHeaderField: "Authorization")
        let context = AttemptContext(taskID: "t", attempt: 1, method: HTTPMethod(rawValue: method))
        let adapted = try await configuration.credentials(session: .user(sessionID: "s&=1"))
            .adapt(request, context: context)
        #expect(adapted.url?.absoluteString == expectedURL)
        #expect(adapted.value(forHTTPHeaderField: "Authorization") == expectedAuthorization)
    }

    @Test("a credential and session put back by the interceptor read byte for byte as prepare writes them")
    func interceptorMatchesPrepare() async throws {
        let session = TMDBSession.user(sessionID: "s/?#&=+é 1")
        let configuration = TMDBConfiguration(credential: .apiKey("k/?#&=+é 1"))
        let prepared = try configuration.prepare(MovieEndpoint.rate(id: 550, value: 8), session: session).urlRequest()
        var stripped = URLRequest(url: URL(string: "https://api.themoviedb.org/3/movie/550/rating")!)
        stripped.httpMethod = "POST"
        let adapted = try await configuration.credentials(session: session)
            .adapt(stripped, context: AttemptContext(taskID: "t", attempt: 1, method: .post))
        #expect(
            adapted.url?.query?.split(separator: "&").sorted() == prepared.url?.query?.split(separator: "&").sorted())
        #expect(adapted.url?.query?.contains("api_key=k%2F%3F%23%26%3D%2B%C3%A9%201") == true)
    }
}
