import Foundation
import NetworkCore
import NetworkCoreTesting
import Testing

@testable import MovieDB

/// The services over the real URLSessionTransport, against a server on 127.0.0.1 that serves the fixtures.
@Suite("MovieDB end to end (URLSession → 127.0.0.1)")
struct EndToEndTests {
    let server: MockServer
    let pool = TaskPool(configuration: .init(transport: URLSessionTransport(), requestTimeout: 10))
    let configuration: TMDBConfiguration

    init() throws {
        let tmdb = OfflineTMDB()
        server = try MockServer { MockResponse(tmdb.respond(to: $0.urlRequest)) }
        configuration = TMDBConfiguration(
            environment: .custom(baseURL: server.baseURL + "/3"), credential: .apiKey(OfflineTMDB.apiKey))
    }

    @Test("lists, details, videos and search over HTTP")
    func movies() async throws {
        defer { server.stop() }
        let movies = MovieService(pool: pool, configuration: configuration)
        let page = try await movies.nowPlaying(page: 1)
        #expect(page.results.count == 5)
        #expect(page.skippedResults == 1)
        #expect(try await movies.details(id: 550).imdbID == "tt0137523")
        #expect(try await movies.videos(id: 550).results.count == 3)
        #expect(try await movies.search(query: "spirited").results.map(\.id) == [129])
        let requests = server.requests
        #expect(requests.count == 4)
        #expect(requests.allSatisfy { $0.value(forHTTPHeaderField: "User-Agent")?.hasPrefix("NetworkCore/") == true })
        #expect(requests[0].url?.query?.contains("api_key=\(OfflineTMDB.apiKey)") == true)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("login and logout over HTTP, with JSON bodies")
    func auth() async throws {
        defer { server.stop() }
        let store = InMemorySessionStore()
        let auth = AuthService(pool: pool, configuration: configuration, store: store)
        let session = try await auth.login(username: "demo", password: "demo")
        #expect(store.session == .user(sessionID: session.sessionID))
        try await auth.logout()
        #expect(store.session == nil)
        let methods = server.requests.map { $0.httpMethod ?? "" }
        #expect(methods == ["GET", "POST", "POST", "DELETE"])
        #expect(server.requests[1].value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test("TMDB's error bodies over HTTP keep their codes")
    func errors() async throws {
        defer { server.stop() }
        var invalid = configuration
        invalid.credential = .apiKey("invalid")
        let error = try #require(
            await failure { () async throws(NetworkError) in
                try await MovieService(pool: pool, configuration: invalid).popular()
            })
        #expect(error.statusCode == 401)
        #expect(error.serverError?.code == 7)
        let missing = try #require(
            await failure { () async throws(NetworkError) in
                try await MovieService(pool: pool, configuration: configuration).details(id: 42)
            })
        #expect(missing.statusCode == 404)
        #expect(missing.serverError?.message == "The resource you requested could not be found.")
    }
}
