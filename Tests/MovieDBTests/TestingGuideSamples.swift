// swift-format-ignore-file
// The samples are shown in Docs/Testing.md as written here (GuideSamplesTests), so they keep its layout.
// They are real tests: they run with the suite.
import Foundation
import MovieDB
import NetworkCore
import NetworkCoreTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Docs/Testing.md: MovieService tested against a MockServer and HAR fixtures")
struct TestingGuideSamples {
    // GUIDE-BEGIN
    /// A MovieService whose pool talks to `server`.
    func movies(on server: MockServer, pool: TaskPool = TaskPool()) -> MovieService {
        let configuration = TMDBConfiguration(
            environment: .custom(baseURL: server.baseURL + "/3"), credential: .apiKey("test-key"))
        return MovieService(pool: pool, configuration: configuration)
    }

    @Test func nowPlayingReadsAPage() async throws {
        let server = try await MockServer.start()
        defer { server.stop() }
        // A real TMDB response, kept in the test target's resources.
        server.enqueue(try .fixture("movie-now-playing", in: .module, subdirectory: "Captures"))

        let page = try await movies(on: server).nowPlaying(page: 1)

        #expect(page.page == 1 && !page.results.isEmpty)
        let request = try await server.takeRequest()
        #expect(request.matches(.get, "/3/movie/now_playing"))
        #expect(request.query["page"] == "1" && request.hasQuery("api_key", "test-key"))
    }
    // GUIDE-END

    // GUIDE-BEGIN
    @Test func aTMDBErrorCarriesItsCode() async throws {
        try await withMockServer { server in
            server.enqueue(.json(#"{"status_code": 34, "status_message": "Not found."}"#, statusCode: 404))
            do throws(NetworkError) {
                _ = try await movies(on: server).details(id: 999_999)
                Issue.record("a 404 was read as a movie")
            } catch {
                // `do throws(NetworkError)`: inside a closure a plain `do` catches `any Error`.
                #expect(error.statusCode == 404)
                #expect(error.serverError?.code == 34)
            }
        }
    }
    // GUIDE-END

    // GUIDE-BEGIN
    struct Token: Sendable { let value: String }

    struct RenewingAuthenticator: Authenticator {
        func apply(_ token: Token, to request: inout URLRequest) {
            request.setValue("Bearer \(token.value)", forHTTPHeaderField: "Authorization")
        }
        func isRequest(_ request: URLRequest, authenticatedWith token: Token) -> Bool {
            request.value(forHTTPHeaderField: "Authorization") == "Bearer \(token.value)"
        }
        func refresh(_ token: Token?) async throws -> Token { Token(value: "fresh") }
    }

    @Test func aRejectedTokenIsRenewedOnceAndTheCallReplayed() async throws {
        let server = try await MockServer.start()
        defer { server.stop() }
        let details = try MockResponse.fixture("movie-details", in: .module, subdirectory: "Captures")
        try server.route(.get, "/3/movie/:id") { request in
            request.hasHeader("Authorization", "Bearer fresh")
                ? details
                : .json(#"{"status_code": 7, "status_message": "Invalid API key"}"#, statusCode: 401)
        }
        let authentication = AuthenticationInterceptor(
            authenticator: RenewingAuthenticator(), credential: Token(value: "stale"))
        let pool = TaskPool(configuration: .init(interceptors: [authentication]))

        let movie = try await movies(on: server, pool: pool).details(id: 550)

        #expect(movie.id == 550)
        let sent = server.requests.map { $0.value(forHTTPHeaderField: "Authorization") }
        #expect(sent == ["Bearer stale", "Bearer fresh"])
    }
    // GUIDE-END

    // GUIDE-BEGIN
    @Test func aCutBodyIsRetried() async throws {
        let server = try await MockServer.start()
        defer { server.stop() }
        let page = try MockResponse.fixture("movie-now-playing", in: .module, subdirectory: "Captures")
        server.enqueue(page.with(.cutMidBody), page)   // the first answer stops halfway
        let pool = TaskPool(configuration: .init(interceptors: [RetryPolicy(baseDelay: 0.01)]))

        let result = try await movies(on: server, pool: pool).nowPlaying(page: 1)

        #expect(!result.results.isEmpty)
        #expect(server.count(.get, "/3/movie/now_playing") == 2)
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        let server = try await MockServer.start()
        defer { server.stop() }
        server.failNext(with: .neverAnswer)
        let pool = TaskPool(configuration: .init(requestTimeout: 0.5))
        do {
            _ = try await movies(on: server, pool: pool).nowPlaying(page: 1)
            Issue.record("an answer came")
        } catch {
            #expect(error.isTimeout)
        }
    }
    // GUIDE-END

    // GUIDE-BEGIN
    /// Records what the service sends and receives (here from a MockServer standing in for TMDB; in a
    /// recording run, from the real API) into a HAR archive. Secrets such as `api_key` are redacted.
    func record(into file: URL) async throws {
        let tmdb = try await MockServer.start()
        defer { tmdb.stop() }
        try tmdb.route(.get, "/3/movie/now_playing", respond:
            .fixture("movie-now-playing", in: .module, subdirectory: "Captures"))
        let recorder = HARRecorder()
        let transport = RecordingTransport(URLSessionTransport(), recorder: recorder)
        _ = try await movies(on: tmdb, pool: TaskPool(configuration: .init(transport: transport))).nowPlaying(page: 1)
        try recorder.write(to: file)
    }

    @Test func harFixturesAnswerWithoutTheAPI() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("now-playing-\(UUID()).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try await record(into: file)
        #expect(try !String(contentsOf: file, encoding: .utf8).contains("test-key"))

        // In process, with no network at all:
        let offline = TaskPool(configuration: .init(transport: try HARReplayTransport(contentsOf: file)))
        let configuration = TMDBConfiguration(credential: .apiKey("test-key"))
        let page = try await MovieService(pool: offline, configuration: configuration).nowPlaying(page: 1)
        #expect(!page.results.isEmpty)

        // Or served over HTTP by a MockServer, through the transport the app really uses:
        let server = try await MockServer.start()
        defer { server.stop() }
        try server.replay(contentsOf: file)
        let served = try await movies(on: server).nowPlaying(page: 1)
        #expect(served == page)
    }
    // GUIDE-END
}
