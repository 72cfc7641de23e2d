import Foundation
import MovieDB
import NetworkCore
import Testing

/// Real TheMovieDB v3 responses (`Resources/Captures`, from the project's shared captures): the client
/// reads every one of them, error shapes included.
@Suite("Real TMDB responses")
struct CaptureTests {
    static func capture(_ name: String) throws -> Data {
        let url = try #require(Bundle.module.url(forResource: "Captures/\(name)", withExtension: "json"))
        return try Data(contentsOf: url)
    }

    static let pool = TaskPool(configuration: .init(transport: StubTransport { _, _ in .json("{}") }))

    /// Parses `name` as the pool would parse an answer to `Model`.
    static func parse<Model: Decodable & Sendable>(_ name: String, as model: Model.Type) throws -> Model {
        try DecodableParser<Model>().parse(try capture(name))
    }

    @Test(
        "every list decodes as a page with every one of its movies",
        arguments: [
            ("movie-now-playing", 20), ("movie-popular", 20), ("movie-top-rated", 20), ("movie-upcoming", 20),
            ("movie-recommendations", 21), ("search-movie", 1),
        ])
    func lists(name: String, count: Int) throws {
        let page = try Self.parse(name, as: MoviePage.self)
        #expect(page.page == 1)
        #expect(page.results.count == count, "\(name): \(page.results.count) movies")
        #expect(page.results.allSatisfy { $0.id > 0 && !$0.title.isEmpty })
        #expect(page.totalPages >= 1)
    }

    @Test("details and videos decode")
    func detailsAndVideos() throws {
        let details = try Self.parse("movie-details", as: MovieDetails.self)
        #expect(details.id > 0)
        #expect(!details.title.isEmpty)
        #expect(!details.genres.isEmpty)
        let videos = try Self.parse("movie-videos", as: VideoList.self)
        #expect(videos.id == 550)
        #expect(!videos.results.isEmpty)
    }

    @Test(
        "each error shape gives the user TMDB's own code and message",
        arguments: [
            ("invalid-api-key", 7, "Invalid API key: You must be granted a valid key."),
            ("resource-not-found", 34, "The resource you requested could not be found."),
            ("validation-error", nil, "query must be provided"),
        ] as [(String, Int?, String)])
    func errors(name: String, code: Int?, message: String) throws {
        let status = try #require(JSONStatusReader.tmdb.status(in: try Self.capture(name)))
        #expect(status.code == code)
        #expect(status.message == message)
    }

    @Test("a 422 with TMDB's errors array reaches the caller with its message")
    func validationErrorThroughThePool() async throws {
        let offline = OfflineTMDB()
        let pool = TaskPool(
            configuration: .init(transport: StubTransport { request, _ in offline.respond(to: request) }))
        let movies = MovieService(pool: pool, configuration: TMDBConfiguration(credential: .apiKey(OfflineTMDB.apiKey)))
        do {
            _ = try await movies.search(query: " ")
            Issue.record("an empty query was answered")
        } catch {
            #expect(error.statusCode == 422)
            #expect(error.serverError?.message == "query must be provided")
            #expect(error.localizedDescription.contains("query must be provided"))
        }
    }
}
