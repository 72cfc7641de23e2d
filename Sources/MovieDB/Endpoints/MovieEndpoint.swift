import Foundation
import NetworkCore

/// TheMovieDB's movie calls.
///
/// The base URL is production's; ``TMDBConfiguration/prepare(_:session:)`` sends a case to the
/// configured environment with the credential. Each case has a fixture as its ``sampleData``.
public enum MovieEndpoint: Endpoint, Hashable {
    /// `GET movie/now_playing`.
    case nowPlaying(page: Int, language: String? = nil, region: String? = nil)
    /// `GET movie/popular`.
    case popular(page: Int, language: String? = nil, region: String? = nil)
    /// `GET movie/top_rated`.
    case topRated(page: Int, language: String? = nil, region: String? = nil)
    /// `GET movie/upcoming`.
    case upcoming(page: Int, language: String? = nil, region: String? = nil)
    /// `GET movie/{id}`: one movie's details.
    case details(id: Int, language: String? = nil)
    /// `GET movie/{id}/recommendations`.
    case recommendations(id: Int, page: Int, language: String? = nil)
    /// `GET movie/{id}/videos`: trailers, teasers, clips.
    case videos(id: Int, language: String? = nil)
    /// `GET search/movie`.
    case search(query: String, page: Int, includeAdult: Bool = false, year: Int? = nil, language: String? = nil)
    /// `POST movie/{id}/rating`: the user's rating of a movie, 0.5 to 10 in steps of 0.5. TMDB needs a
    /// session for it (``TMDBConfiguration/prepare(_:session:)``); ``MovieService/rate(id:value:session:durability:)``
    /// checks the value first.
    case rate(id: Int, value: Double)

    /// `https://api.themoviedb.org/3`.
    public var baseURL: String { TMDBEnvironment.production.baseURL }

    /// `"MovieService"`, as shown in the pool's task table.
    public var service: String { "MovieService" }

    /// The path below the base URL.
    public var path: String {
        switch self {
        case .nowPlaying: "movie/now_playing"
        case .popular: "movie/popular"
        case .topRated: "movie/top_rated"
        case .upcoming: "movie/upcoming"
        case .details(let id, _): "movie/\(id)"
        case .recommendations(let id, _, _): "movie/\(id)/recommendations"
        case .videos(let id, _): "movie/\(id)/videos"
        case .search: "search/movie"
        case .rate(let id, _): "movie/\(id)/rating"
        }
    }

    /// `POST` for ``rate(id:value:)``; `GET` for every other call.
    public var method: HTTPMethod {
        switch self {
        case .rate: .post
        default: .get
        }
    }

    /// The query parameters; `nil` options are left out.
    public var task: HTTPTask {
        switch self {
        case .nowPlaying(let page, let language, let region), .popular(let page, let language, let region),
            .topRated(let page, let language, let region), .upcoming(let page, let language, let region):
            .urlParameters(["page": page, "language": language, "region": region])
        case .details(_, let language), .videos(_, let language):
            .urlParameters(["language": language])
        case .recommendations(_, let page, let language):
            .urlParameters(["page": page, "language": language])
        case .search(let query, let page, let includeAdult, let year, let language):
            .urlParameters([
                "query": query, "page": page, "include_adult": includeAdult, "year": year, "language": language,
            ])
        case .rate(_, let value):
            .bodyParameters(["value": value])
        }
    }

    /// The bundled fixture for this call, in TMDB's format.
    public var sampleData: Data? {
        switch self {
        case .nowPlaying: TMDBFixtures.data(.nowPlaying)
        case .popular: TMDBFixtures.data(.popular)
        case .topRated: TMDBFixtures.data(.topRated)
        case .upcoming: TMDBFixtures.data(.upcoming)
        case .details: TMDBFixtures.data(.movieDetails)
        case .recommendations: TMDBFixtures.data(.recommendations)
        case .videos: TMDBFixtures.data(.videos)
        case .search: TMDBFixtures.data(.search)
        case .rate: TMDBFixtures.data(.ratingAdded)
        }
    }

    /// A readable task id, e.g. `movies.nowPlaying.page=1`, naming every argument the call has
    /// (`movies.nowPlaying.page=1.language=de-DE`), so a screen can cancel the call by id. A service
    /// runs it with its environment added (``MovieService/taskID(for:)``).
    public var taskID: String {
        func optional(_ name: String, _ value: (any CustomStringConvertible)?) -> String {
            value.map { ".\(name)=\($0)" } ?? ""
        }
        return switch self {
        case .nowPlaying(let page, let language, let region):
            "movies.nowPlaying.page=\(page)" + optional("language", language) + optional("region", region)
        case .popular(let page, let language, let region):
            "movies.popular.page=\(page)" + optional("language", language) + optional("region", region)
        case .topRated(let page, let language, let region):
            "movies.topRated.page=\(page)" + optional("language", language) + optional("region", region)
        case .upcoming(let page, let language, let region):
            "movies.upcoming.page=\(page)" + optional("language", language) + optional("region", region)
        case .details(let id, let language): "movies.details.id=\(id)" + optional("language", language)
        case .recommendations(let id, let page, let language):
            "movies.recommendations.id=\(id).page=\(page)" + optional("language", language)
        case .videos(let id, let language): "movies.videos.id=\(id)" + optional("language", language)
        case .search(let query, let page, let includeAdult, let year, let language):
            "movies.search.query=\(query).page=\(page)" + (includeAdult ? ".includeAdult=true" : "")
                + optional("year", year) + optional("language", language)
        case .rate(let id, let value): "movies.rate.id=\(id).value=\(value)"
        }
    }
}
