/// One movie in full, from `movie/{id}`.
public struct MovieDetails: Codable, Hashable, Sendable, Identifiable, MovieArtwork {
    /// A genre: `{"id": 18, "name": "Drama"}`.
    public struct Genre: Codable, Hashable, Sendable, Identifiable {
        /// TMDB's genre id.
        public let id: Int
        /// The genre's name in the requested language.
        public let name: String
    }

    /// A production company.
    public struct Company: Codable, Hashable, Sendable, Identifiable {
        /// TMDB's company id.
        public let id: Int
        /// The company's name.
        public let name: String
        /// The country code, e.g. `"US"`; `nil` when unknown.
        public let originCountry: String?

        enum CodingKeys: String, CodingKey {
            case id, name
            case originCountry = "origin_country"
        }

        /// Decodes TMDB's JSON; an empty `origin_country` becomes `nil`.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            name = container.lenient(String.self, forKey: .name) ?? ""
            originCountry = container.nonEmptyString(forKey: .originCountry)
        }
    }

    /// TMDB's id.
    public let id: Int
    /// The title in the requested language.
    public let title: String
    /// The title in the original language.
    public let originalTitle: String?
    /// The plot summary; empty when TMDB has none.
    public let overview: String
    /// The tagline; `nil` when empty.
    public let tagline: String?
    /// The release status, e.g. `"Released"`, `"Post Production"`.
    public let status: String?
    /// The running time in minutes; `nil` when unknown (TMDB sends `0` or `null`).
    public let runtime: Int?
    /// The budget in US dollars; `0` when unknown.
    public let budget: Int
    /// The revenue in US dollars; `0` when unknown.
    public let revenue: Int
    /// The IMDb id, e.g. `"tt0137523"`.
    public let imdbID: String?
    /// The official site.
    public let homepage: String?
    /// The genres.
    public let genres: [Genre]
    /// The production companies.
    public let productionCompanies: [Company]
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

    enum CodingKeys: String, CodingKey {
        case id, title, overview, tagline, status, runtime, budget, revenue, homepage, genres
        case originalTitle = "original_title"
        case imdbID = "imdb_id"
        case productionCompanies = "production_companies"
        case posterPath = "poster_path"
        case backdropPath = "backdrop_path"
        case releaseDateText = "release_date"
        case voteAverage = "vote_average"
        case voteCount = "vote_count"
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
        tagline = container.nonEmptyString(forKey: .tagline)
        status = container.nonEmptyString(forKey: .status)
        runtime = container.lenient(Int.self, forKey: .runtime).flatMap { $0 > 0 ? $0 : nil }
        budget = container.lenient(Int.self, forKey: .budget) ?? 0
        revenue = container.lenient(Int.self, forKey: .revenue) ?? 0
        imdbID = container.nonEmptyString(forKey: .imdbID)
        homepage = container.nonEmptyString(forKey: .homepage)
        genres = container.lenient(LossyList<Genre>.self, forKey: .genres)?.elements ?? []
        productionCompanies = container.lenient(LossyList<Company>.self, forKey: .productionCompanies)?.elements ?? []
    }
}
