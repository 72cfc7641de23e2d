/// The fields every TMDB movie object has, decoded leniently once for ``Movie`` and ``MovieDetails``.
struct MovieFields: Decodable {
    let id: Int
    let title: String
    let originalTitle: String?
    let overview: String
    let posterPath: String?
    let backdropPath: String?
    let releaseDateText: String?
    let voteAverage: Double
    let voteCount: Int

    enum CodingKeys: String, CodingKey {
        case id, title, overview
        case originalTitle = "original_title"
        case posterPath = "poster_path"
        case backdropPath = "backdrop_path"
        case releaseDateText = "release_date"
        case voteAverage = "vote_average"
        case voteCount = "vote_count"
    }

    /// Only `id` is required; a missing title falls back to the original title.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        originalTitle = container.nonEmptyString(forKey: .originalTitle)
        title = container.nonEmptyString(forKey: .title) ?? originalTitle ?? ""
        overview = container.lenient(String.self, forKey: .overview) ?? ""
        posterPath = container.nonEmptyString(forKey: .posterPath)
        backdropPath = container.nonEmptyString(forKey: .backdropPath)
        releaseDateText = container.nonEmptyString(forKey: .releaseDateText)
        voteAverage = container.lenient(Double.self, forKey: .voteAverage) ?? 0
        voteCount = container.lenient(Int.self, forKey: .voteCount) ?? 0
    }
}
