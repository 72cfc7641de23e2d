import Foundation

/// The bundled TMDB responses, in TMDB's exact format, that back offline mode and the tests.
public enum TMDBFixtures {
    /// A bundled response.
    public enum Name: String, CaseIterable, Sendable {
        /// `movie/now_playing`, page 1: with `dates`, a movie without artwork or release date,
        /// an integer `vote_average`, unknown fields, and one entry without an id.
        case nowPlaying = "now_playing"
        /// `movie/popular`, page 1.
        case popular
        /// `movie/top_rated`, page 1.
        case topRated = "top_rated"
        /// `movie/upcoming`, page 1, with `dates`.
        case upcoming
        /// `movie/550`: Fight Club in full.
        case movieDetails = "movie_550"
        /// `movie/550/recommendations`, page 1.
        case recommendations = "recommendations_550"
        /// `movie/550/videos`.
        case videos = "movie_550_videos"
        /// `search/movie?query=fight`.
        case search = "search_movie"
        /// `authentication/token/new`.
        case newToken = "token_new"
        /// `authentication/token/validate_with_login`.
        case validatedToken = "token_validated"
        /// `authentication/session/new`.
        case newSession = "session_new"
        /// `DELETE authentication/session`.
        case deleteSession = "session_deleted"
        /// `authentication/guest_session/new`.
        case guestSession = "guest_session_new"
        /// `POST movie/{id}/rating`: 201, status code 1.
        case ratingAdded = "rating_added"
        /// 422, `{"errors": ["query must be provided"]}`: TMDB's shape for a rejected parameter.
        case validationError = "error_validation"
        /// 401, status code 7.
        case invalidAPIKey = "error_invalid_api_key"
        /// 401, status code 3.
        case noPermission = "error_no_permission"
        /// 404, status code 34.
        case notFound = "error_not_found"
        /// 401, status code 30.
        case invalidLogin = "error_invalid_login"
        /// 401, status code 17.
        case sessionDenied = "error_session_denied"
        /// 429, status code 25.
        case rateLimited = "error_rate_limited"
        /// 400, status code 22.
        case invalidPage = "error_invalid_page"
        /// 400, status code 26.
        case missingLogin = "error_missing_login"
    }

    /// The image the offline stand-in answers for every poster and backdrop: a 500 × 750 JPEG, made by
    /// `Scripts/make-offline-poster.py`; `nil` if the resource bundle is missing.
    public static var poster: Data? {
        guard let url = Bundle.module.url(forResource: "poster", withExtension: "jpg", subdirectory: "Fixtures")
        else { return nil }
        return try? Data(contentsOf: url)
    }

    /// The bytes of a fixture, or `nil` if the resource bundle is missing.
    public static func data(_ name: Name) -> Data? {
        guard let url = Bundle.module.url(forResource: name.rawValue, withExtension: "json", subdirectory: "Fixtures")
        else { return nil }
        return try? Data(contentsOf: url)
    }
}
