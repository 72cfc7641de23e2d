/// Where a TMDB client sends its requests: a value, so any base URL can be used.
///
/// ```swift
/// let live = TMDBEnvironment.production
/// let local = TMDBEnvironment.custom(baseURL: "http://127.0.0.1:8080/3")
/// ```
public struct TMDBEnvironment: Hashable, Sendable {
    /// A name for logs and the playground, e.g. `"production"`.
    public let name: String
    /// The API base URL, including the version: `"https://api.themoviedb.org/3"`.
    public let baseURL: String
    /// Where images are served from; a poster URL is this, a size, and the poster path.
    public let imageBaseURL: String

    /// Creates an environment.
    public init(name: String, baseURL: String, imageBaseURL: String = TMDBEnvironment.productionImageBaseURL) {
        self.name = name
        self.baseURL = baseURL
        self.imageBaseURL = imageBaseURL
    }

    /// TMDB's image server.
    public static let productionImageBaseURL = "https://image.tmdb.org/t/p/"

    /// TheMovieDB's public API.
    public static let production = TMDBEnvironment(name: "production", baseURL: "https://api.themoviedb.org/3")

    /// A staging server of yours (TMDB has no public one), e.g. a proxy in front of TMDB.
    public static func staging(baseURL: String) -> TMDBEnvironment {
        TMDBEnvironment(name: "staging", baseURL: baseURL)
    }

    /// A QA server of yours.
    public static func qa(baseURL: String) -> TMDBEnvironment { TMDBEnvironment(name: "qa", baseURL: baseURL) }

    /// Any other server that speaks TMDB's API, such as a local fixture server.
    public static func custom(baseURL: String) -> TMDBEnvironment { TMDBEnvironment(name: "custom", baseURL: baseURL) }
}
