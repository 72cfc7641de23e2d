import Foundation

/// A movie as TMDB lists it (now playing, popular, search results…).
///
/// Decoding is forgiving, as real TMDB data needs: `poster_path` and `backdrop_path` may be
/// `null`, `release_date` and `overview` may be empty, `vote_average` may be an integer, and
/// unknown fields are ignored. Only `id` is required.
public struct Movie: Codable, Hashable, Sendable, Identifiable, MovieArtwork {
    /// TMDB's id.
    public let id: Int
    /// The title in the requested language.
    public let title: String
    /// The title in the original language.
    public let originalTitle: String?
    /// The original language, e.g. `"en"`.
    public let originalLanguage: String?
    /// The plot summary; empty when TMDB has none.
    public let overview: String
    /// See ``MovieArtwork/posterPath``.
    public let posterPath: String?
    /// See ``MovieArtwork/backdropPath``.
    public let backdropPath: String?
    /// See ``MovieArtwork/releaseDateText``.
    public let releaseDateText: String?
    /// The average rating, 0 to 10.
    public let voteAverage: Double
    /// How many votes the average is made of.
    public let voteCount: Int
    /// TMDB's popularity score.
    public let popularity: Double
    /// The ids of the movie's genres.
    public let genreIDs: [Int]
    /// Whether the movie is for adults.
    public let adult: Bool

    /// Creates a movie.
    public init(
        id: Int, title: String, originalTitle: String? = nil, originalLanguage: String? = nil, overview: String = "",
        posterPath: String? = nil, backdropPath: String? = nil, releaseDateText: String? = nil, voteAverage: Double = 0,
        voteCount: Int = 0, popularity: Double = 0, genreIDs: [Int] = [], adult: Bool = false
    ) {
        self.id = id
        self.title = title
        self.originalTitle = originalTitle
        self.originalLanguage = originalLanguage
        self.overview = overview
        self.posterPath = posterPath
        self.backdropPath = backdropPath
        self.releaseDateText = releaseDateText
        self.voteAverage = voteAverage
        self.voteCount = voteCount
        self.popularity = popularity
        self.genreIDs = genreIDs
        self.adult = adult
    }

    enum CodingKeys: String, CodingKey {
        case id, title, overview, popularity, adult
        case originalTitle = "original_title"
        case originalLanguage = "original_language"
        case posterPath = "poster_path"
        case backdropPath = "backdrop_path"
        case releaseDateText = "release_date"
        case voteAverage = "vote_average"
        case voteCount = "vote_count"
        case genreIDs = "genre_ids"
    }

    /// Decodes TMDB's JSON; only `id` is required.
    public init(from decoder: any Decoder) throws {
        let fields = try MovieFields(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = fields.id
        title = fields.title
        originalTitle = fields.originalTitle
        overview = fields.overview
        posterPath = fields.posterPath
        backdropPath = fields.backdropPath
        releaseDateText = fields.releaseDateText
        voteAverage = fields.voteAverage
        voteCount = fields.voteCount
        originalLanguage = container.nonEmptyString(forKey: .originalLanguage)
        popularity = container.lenient(Double.self, forKey: .popularity) ?? 0
        genreIDs = container.lenient([Int].self, forKey: .genreIDs) ?? []
        adult = container.lenient(Bool.self, forKey: .adult) ?? false
    }
}
