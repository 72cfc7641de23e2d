import Foundation
import MovieDB
import NetworkCore

/// How the playground prints results: readable text, or JSON with `--json`.
enum Render {
    // MARK: Text

    static func table(_ page: MoviePage, title: String) -> String {
        var text = "\(title), page \(page.page) of \(page.totalPages) (\(page.totalResults) movies)"
        if let dates = page.dates { text += ", \(dates.minimum) to \(dates.maximum)" }
        guard !page.results.isEmpty else { return text + "\n  (no movies on this page)" }
        let rows = page.results.enumerated().map { index, movie in
            [
                String(index + 1), movie.title, movie.releaseYear.map(String.init) ?? "-",
                String(format: "%.1f", movie.voteAverage), movie.posterPath == nil ? "no" : "yes",
            ]
        }
        text += "\n" + indented(TextTable.render(header: ["#", "Title", "Year", "Rating", "Poster"], rows: rows))
        if page.skippedResults > 0 {
            text +=
                "\n  (\(page.skippedResults) entr\(page.skippedResults == 1 ? "y" : "ies") in the response could not be read and \(page.skippedResults == 1 ? "was" : "were") left out)"
        }
        return text
    }

    static func details(_ movie: MovieDetails) -> String {
        var lines = [
            "\(movie.title) (\(movie.releaseYear.map(String.init) ?? "unreleased"))"
                + (movie.tagline.map { " - \($0)" } ?? "")
        ]
        var facts = [String(format: "rating %.1f (%d votes)", movie.voteAverage, movie.voteCount)]
        if let runtime = movie.runtime { facts.append("\(runtime) min") }
        if let status = movie.status { facts.append(status) }
        if !movie.genres.isEmpty { facts.append(movie.genres.map(\.name).joined(separator: ", ")) }
        lines.append(facts.joined(separator: " · "))
        var money: [String] = []
        if movie.budget > 0 { money.append("budget $\(grouped(movie.budget))") }
        if movie.revenue > 0 { money.append("revenue $\(grouped(movie.revenue))") }
        if let imdb = movie.imdbID { money.append("IMDb \(imdb)") }
        if !money.isEmpty { lines.append(money.joined(separator: " · ")) }
        lines.append("poster: " + (movie.posterURL()?.absoluteString ?? "none"))
        if !movie.overview.isEmpty { lines.append(movie.overview) }
        return lines.joined(separator: "\n")
    }

    static func videos(_ list: VideoList) -> String {
        guard !list.results.isEmpty else { return "No videos for movie \(list.id)." }
        let rows = list.trailersFirst.map { [$0.type, $0.name, $0.watchURL?.absoluteString ?? "\($0.site) \($0.key)"] }
        return "Videos for movie \(list.id):\n"
            + indented(TextTable.render(header: ["Type", "Name", "Watch"], rows: rows))
    }

    static func login(_ session: Session, username: String) -> String {
        "Logged in as \(username); session id ending …\(session.sessionID.suffix(4)) (use --json to see it)."
    }

    /// One line for stderr that says what went wrong, with TMDB's own code and message when it sent them.
    static func error(_ error: NetworkError) -> String {
        if let server = error.serverError, server.code != nil || server.message != nil {
            var line = "error: TMDB"
            if let code = server.code { line += " status_code \(code)" }
            // A message without a code is TMDB's other shape, `{"errors": […]}`, its messages joined by "; ".
            if let message = server.message {
                line += server.code == nil ? ": \"\(message)\"" : ": status_message \"\(message)\""
            }
            return line + " (HTTP \(server.statusCode))"
        }
        return "error: \(error.localizedDescription)"
    }

    /// Every line indented by two spaces.
    static func indented(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n")
    }

    private static func grouped(_ number: Int) -> String {
        let digits = Array(String(number))
        return digits.enumerated().map { index, digit in
            index > 0 && (digits.count - index) % 3 == 0 ? ",\(digit)" : String(digit)
        }.joined()
    }

    // MARK: JSON

    /// `{"page":…,"total_pages":…,"total_results":…,"movies":[{"id":…,"title":…,"release_date":…,"vote_average":…,"poster_url":…}]}`.
    struct PageJSON: Encodable {
        struct MovieJSON: Encodable {
            let movie: Movie

            enum CodingKeys: String, CodingKey {
                case id, title
                case releaseDate = "release_date"
                case voteAverage = "vote_average"
                case posterURL = "poster_url"
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(movie.id, forKey: .id)
                try container.encode(movie.title, forKey: .title)
                try container.encode(movie.releaseDateText, forKey: .releaseDate)
                try container.encode(movie.voteAverage, forKey: .voteAverage)
                try container.encode(movie.posterURL()?.absoluteString, forKey: .posterURL)
            }
        }

        let page: MoviePage

        enum CodingKeys: String, CodingKey {
            case page, movies
            case totalPages = "total_pages"
            case totalResults = "total_results"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(page.page, forKey: .page)
            try container.encode(page.totalPages, forKey: .totalPages)
            try container.encode(page.totalResults, forKey: .totalResults)
            try container.encode(page.results.map(MovieJSON.init), forKey: .movies)
        }
    }

    static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
