// swift-format-ignore-file
// The samples of MovieDB's documentation comments (`///`), each in the context its comment takes as given,
// compiled with the tests and never run. `GuideSamplesTests` checks that each source file shows exactly the
// lines between its `// DOC <path>-BEGIN` and `-END` markers.
import Foundation
import MovieDB
import NetworkCore

/// What the samples take as given.
enum MovieDBDocCommentContext {
    /// A TMDB endpoint of the app's own.
    enum MyEndpoint: Endpoint {
        case rate(id: Int, value: Double)
        var baseURL: String { "https://api.themoviedb.org/3" }
        var path: String {
            switch self {
            case .rate(let id, _): "movie/\(id)/rating"
            }
        }
        var method: HTTPMethod { .post }
        var task: HTTPTask {
            switch self {
            case .rate(_, let value): .bodyParameters(["value": value])
            }
        }
    }
    /// The app's own token service.
    protocol Backend: Sendable {
        func freshTMDBToken() async throws -> String
    }
}

// Sources/MovieDB/Configuration/TMDBConfiguration.swift
extension MovieDBDocCommentContext {
    static func prepare(pool: TaskPool, configuration: TMDBConfiguration, session: TMDBSession?) async throws
        -> Response
    {
        // DOC Sources/MovieDB/Configuration/TMDBConfiguration.swift-BEGIN
        let rated = try await pool.send(configuration.prepare(MyEndpoint.rate(id: 550, value: 8), session: session))
        // DOC Sources/MovieDB/Configuration/TMDBConfiguration.swift-END
        return rated
    }
}

// Sources/MovieDB/Configuration/TMDBCredentialInterceptor.swift
extension MovieDBDocCommentContext {
    static func credentialInterceptor(key: String, sessionID: String, pendingWrites: URL) throws -> TaskPool {
        // DOC Sources/MovieDB/Configuration/TMDBCredentialInterceptor.swift-BEGIN
        let configuration = TMDBConfiguration(credential: .apiKey(key))
        let pool = TaskPool(
            configuration: .init(
                interceptors: [configuration.credentials(session: .user(sessionID: sessionID))],
                durableStore: try DurableStore(directory: pendingWrites)))
        // DOC Sources/MovieDB/Configuration/TMDBCredentialInterceptor.swift-END
        return pool
    }
}

// Sources/MovieDB/Configuration/TMDBEnvironment.swift
extension MovieDBDocCommentContext {
    static func environments() -> [TMDBEnvironment] {
        // DOC Sources/MovieDB/Configuration/TMDBEnvironment.swift-BEGIN
        let live = TMDBEnvironment.production
        let local = TMDBEnvironment.custom(baseURL: "http://127.0.0.1:8080/3")
        // DOC Sources/MovieDB/Configuration/TMDBEnvironment.swift-END
        return [live, local]
    }
}

// Sources/MovieDB/Configuration/TMDBTokenAuthenticator.swift
extension MovieDBDocCommentContext {
    static func tokenAuthenticator(backend: any Backend, savedToken: String?) -> MovieService {
        // DOC Sources/MovieDB/Configuration/TMDBTokenAuthenticator.swift-BEGIN
        let auth = AuthenticationInterceptor(
            authenticator: TMDBTokenAuthenticator { try await backend.freshTMDBToken() }, credential: savedToken)
        let pool = TaskPool(configuration: .init(interceptors: [auth]))
        let movies = MovieService(pool: pool, configuration: .init(credential: nil))
        // DOC Sources/MovieDB/Configuration/TMDBTokenAuthenticator.swift-END
        return movies
    }
}

// Sources/MovieDB/Services/AuthService.swift
extension MovieDBDocCommentContext {
    static func authService(pool: TaskPool, configuration: TMDBConfiguration) async throws {
        // DOC Sources/MovieDB/Services/AuthService.swift-BEGIN
        let auth = AuthService(pool: pool, configuration: configuration)
        let session = try await auth.login(username: "ana", password: "…")   // token → validate → session
        try await auth.logout()
        // DOC Sources/MovieDB/Services/AuthService.swift-END
        _ = session
    }
}

// Sources/MovieDB/Services/MovieService.swift
extension MovieDBDocCommentContext {
    static func movieService(pool: TaskPool, key: String) async throws {
        // DOC Sources/MovieDB/Services/MovieService.swift-BEGIN
        let movies = MovieService(pool: pool, configuration: .init(credential: .apiKey(key)))
        let page = try await movies.nowPlaying(page: 1)
        pool.cancel(id: movies.taskID(for: .nowPlaying(page: 1)))   // "movies.nowPlaying.page=1 production#…"
        // DOC Sources/MovieDB/Services/MovieService.swift-END
        _ = page
    }

    static func rate(configuration: TMDBConfiguration, session: TMDBSession, store: DurableStore) async throws {
        // DOC Sources/MovieDB/Services/MovieService.swift-BEGIN
        let pool = TaskPool(
            configuration: .init(interceptors: [configuration.credentials(session: session)], durableStore: store))
        try await MovieService(pool: pool, configuration: configuration)
            .rate(id: 550, value: 8.5, session: session, durability: Durability(expiry: 7 * 86_400))
        // DOC Sources/MovieDB/Services/MovieService.swift-END
    }

    static func poster(movies: MovieService, file: URL) async throws {
        // DOC Sources/MovieDB/Services/MovieService.swift-BEGIN
        let fightClub = try await movies.details(id: 550)
        try await movies.downloadPoster(of: fightClub, to: file) { print($0.fractionCompleted ?? 0) }
        // DOC Sources/MovieDB/Services/MovieService.swift-END
    }
}
