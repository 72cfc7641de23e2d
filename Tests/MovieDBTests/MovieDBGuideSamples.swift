// swift-format-ignore-file
// The samples are shown in a guide as written here (GuideSamplesTests), so they keep its layout.
import Foundation
import MovieDB
import NetworkCore

/// The samples of Docs/MovieDB.md, each in the context the page gives it (compiled, never run: they would
/// call TheMovieDB). `GuideSamplesTests` checks that the page shows exactly the lines between the markers.
enum MovieDBGuideSamples {
    static func configure(key: String) -> TMDBConfiguration {
        // GUIDE-BEGIN
        let configuration = TMDBConfiguration(
            environment: .production,                      // or .staging(baseURL:), .qa(baseURL:), .custom(baseURL:)
            credential: .apiKey(key),                      // or .readAccessToken(token)
            language: "de-DE", region: "DE")
        // GUIDE-END
        return configuration
    }

    static func endpoints() {
        // GUIDE-BEGIN
        let calls: [MovieEndpoint] = [
            .nowPlaying(page: 1),
            .nowPlaying(page: 2, language: "de-DE", region: "DE"),
            .details(id: 550),
            .search(query: "fight club", page: 1, year: 1999),
        ]
        for call in calls {
            // movie/now_playing movies.nowPlaying.page=1 …, movie/550 movies.details.id=550 …
            print(call.path, call.taskID, call.sampleData?.count ?? 0)
        }
        // GUIDE-END
    }

    static func services(configuration: TMDBConfiguration, name: String, password: String) async throws {
        // GUIDE-BEGIN
        let pool = TaskPool()
        let movies = MovieService(pool: pool, configuration: configuration)
        let page = try await movies.nowPlaying(page: 1)
        let fightClub = try await movies.details(id: 550)

        // A screen going away:
        pool.cancel(id: movies.taskID(for: .nowPlaying(page: 1)))

        let auth = AuthService(pool: pool, configuration: configuration, store: InMemorySessionStore())
        let session = try await auth.login(username: name, password: password)   // token → validate → session
        try await auth.logout()
        // GUIDE-END
        print(page, fightClub, session)
    }

    static func offline() -> MovieService {
        // GUIDE-BEGIN
        let offline = TaskPool(configuration: .init(transport: OfflineTMDB().transport(delay: 0.05)))
        let movies = MovieService(pool: offline, configuration: .init(credential: .apiKey(OfflineTMDB.apiKey)))
        // GUIDE-END
        return movies
    }
}
