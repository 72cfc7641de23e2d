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

    /// What `poster --json` prints.
    struct PosterJSON: Encodable {
        let id: Int
        let title: String
        let size: String
        let file: String
        let bytes: Int
    }

    /// `rate --json`: the TMDB status, or `queued` when the server could not be reached.
    struct RatingJSON: Encodable {
        let id: Int
        let value: Double
        let queued: Bool
        let statusCode: Int?
        let statusMessage: String?
    }

    static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A download's progress on standard error: a bar redrawn in place on a terminal, otherwise a plain
/// line at each quarter (or each megabyte when the length is unknown).
final class ProgressBar: @unchecked Sendable {
    // @unchecked Sendable: `lock` guards `lastStep` and `drawn`.
    private let onTerminal: Bool
    private let lock = NSLock()
    private var lastStep = -1
    private var drawn = false
    private var last: TransferProgress?
    private var shown: TransferProgress?

    init(onTerminal: Bool) { self.onTerminal = onTerminal }

    func show(_ progress: TransferProgress) {
        let received = TransferProgress.bytes(progress.bytesReceived)
        let total = progress.bytesExpected.map { " of " + TransferProgress.bytes($0) } ?? ""
        lock.withLock {
            if onTerminal {
                let width = 30
                let filled = Int((progress.fractionCompleted ?? 0) * Double(width))
                let percent = progress.fractionCompleted.map { String(format: "%3d %%", Int($0 * 100)) } ?? "  ? %"
                let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
                FileHandle.standardError.write(Data("\r[\(bar)] \(percent)  \(received)\(total)   ".utf8))
                drawn = true
                return
            }
            let step = progress.fractionCompleted.map { Int($0 * 4) } ?? progress.bytesReceived / 1_000_000
            last = progress
            guard step > lastStep else { return }
            shown = progress
            lastStep = step
            let percent = progress.fractionCompleted.map { " (\(Int($0 * 100)) %)" } ?? ""
            standardError("downloaded \(received)\(total)\(percent)")
        }
    }

    /// Ends the bar's line on a terminal; otherwise prints the last figures if they were not.
    func finish() {
        let (drawn, last, shown) = lock.withLock { (self.drawn, self.last, self.shown) }
        if drawn { return FileHandle.standardError.write(Data("\n".utf8)) }
        if let last, last != shown {
            lock.withLock { lastStep = -1 }
            show(last)
        }
    }

}
