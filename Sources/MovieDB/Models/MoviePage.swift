/// One page of a movie list, as TMDB sends it.
///
/// A movie that cannot be decoded at all (no `id`) is left out and counted in
/// ``skippedResults`` instead of failing the whole page.
public struct MoviePage: Codable, Hashable, Sendable {
    /// The dates a now-playing or upcoming list covers, as TMDB sends them (`"2026-12-02"`).
    public struct DateRange: Codable, Hashable, Sendable {
        /// The latest date.
        public let maximum: String
        /// The earliest date.
        public let minimum: String
    }

    /// The page number, from 1.
    public let page: Int
    /// The movies on this page.
    public let results: [Movie]
    /// How many pages there are.
    public let totalPages: Int
    /// How many movies there are on all pages.
    public let totalResults: Int
    /// The dates covered, for now playing and upcoming; `nil` elsewhere.
    public let dates: DateRange?
    /// How many entries of `results` could not be decoded and were left out.
    public let skippedResults: Int

    /// Creates a page.
    public init(page: Int, results: [Movie], totalPages: Int, totalResults: Int, dates: DateRange? = nil) {
        self.page = page
        self.results = results
        self.totalPages = totalPages
        self.totalResults = totalResults
        self.dates = dates
        skippedResults = 0
    }

    enum CodingKeys: String, CodingKey {
        case page, results, dates
        case totalPages = "total_pages"
        case totalResults = "total_results"
    }

    /// Decodes TMDB's JSON, keeping every movie that decodes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        page = try container.decode(Int.self, forKey: .page)
        let list = try container.decodeIfPresent(LossyList<Movie>.self, forKey: .results)
        results = list?.elements ?? []
        skippedResults = list?.skipped ?? 0
        totalPages = container.lenient(Int.self, forKey: .totalPages) ?? page
        totalResults = container.lenient(Int.self, forKey: .totalResults) ?? results.count
        dates = container.lenient(DateRange.self, forKey: .dates)
    }

    /// Encodes TMDB's format.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(page, forKey: .page)
        try container.encode(results, forKey: .results)
        try container.encode(totalPages, forKey: .totalPages)
        try container.encode(totalResults, forKey: .totalResults)
        try container.encodeIfPresent(dates, forKey: .dates)
    }
}
