import Foundation
import NetworkCore
import Testing

@testable import MovieDB

@Suite("TMDB fixtures and models")
struct FixtureTests {
    func decode<T: Decodable & Sendable>(_ name: TMDBFixtures.Name, as type: T.Type = T.self) throws -> T {
        try DecodableParser<T>().parse(try #require(TMDBFixtures.data(name)))
    }

    @Test("every fixture is bundled and is a JSON object", arguments: TMDBFixtures.Name.allCases)
    func bundled(name: TMDBFixtures.Name) throws {
        let data = try #require(TMDBFixtures.data(name))
        #expect(try JSONSerialization.jsonObject(with: data) is [String: Any])
    }

    @Test("now playing decodes messy data: null posters, empty dates, integer ratings, unknown fields, a bad entry")
    func nowPlaying() throws {
        let page: MoviePage = try decode(.nowPlaying)
        #expect(page.page == 1)
        #expect(page.results.count == 5)
        #expect(page.skippedResults == 1)
        #expect(page.totalResults == 5)
        #expect(page.dates == MoviePage.DateRange(maximum: "2026-12-02", minimum: "2026-10-21"))
        let harbor = try #require(page.results.first)
        #expect(harbor.voteAverage == 7.0)
        #expect(harbor.releaseYear == 2026)
        let quiet = try #require(page.results.first { $0.id == 1184918 })
        #expect(quiet.posterPath == nil)
        #expect(quiet.posterURL() == nil)
        #expect(quiet.backdropURL() == nil)
        #expect(quiet.releaseDateText == nil)
        #expect(quiet.releaseDate == nil)
        #expect(quiet.overview == "")
        let spirited = try #require(page.results.first { $0.id == 129 })
        #expect(spirited.originalTitle == "千と千尋の神隠し")
        #expect(spirited.originalLanguage == "ja")
    }

    @Test("helpers give full image URLs and dates")
    func helpers() throws {
        let page: MoviePage = try decode(.popular)
        let fight = try #require(page.results.first { $0.id == 550 })
        #expect(fight.posterURL()?.absoluteString == "https://image.tmdb.org/t/p/w500/pB8BM7pdSp6B6Ih7QZ4DrQ3PmJK.jpg")
        #expect(
            fight.posterURL(size: .w92)?.absoluteString
                == "https://image.tmdb.org/t/p/w92/pB8BM7pdSp6B6Ih7QZ4DrQ3PmJK.jpg")
        #expect(
            fight.posterURL(size: .original, imageBaseURL: "http://img.local/t")?.absoluteString
                == "http://img.local/t/original/pB8BM7pdSp6B6Ih7QZ4DrQ3PmJK.jpg")
        #expect(fight.releaseDate == Date(timeIntervalSince1970: 939_945_600))  // 1999-10-15 00:00 UTC
        #expect(fight.releaseYear == 1999)
    }

    @Test(
        "dates: TMDB's two formats; empty and malformed give nil",
        arguments: [
            ("1999-10-15", 939_945_600.0), ("2016-08-26 17:04:39 UTC", 1_472_231_079.0), ("", nil), ("1999-13-01", nil),
            ("soon", nil), ("1999", nil),
        ])
    func dates(text: String, seconds: Double?) {
        #expect(TMDBDate.parse(text) == seconds.map { Date(timeIntervalSince1970: $0) })
    }

    @Test("a movie needs only an id; everything else has a safe default")
    func minimalMovie() throws {
        let movie = try DecodableParser<Movie>().parse(
            Data(#"{"id": 1, "title": null, "vote_average": "n/a", "genre_ids": null, "poster_path": ""}"#.utf8))
        #expect(movie == Movie(id: 1, title: ""))
        let failure = #expect(throws: DecodingFailure.self) {
            try DecodableParser<Movie>().parse(Data(#"{"title": "x"}"#.utf8))
        }
        #expect(failure?.path == "id")
    }

    @Test("details decode in full")
    func details() throws {
        let movie: MovieDetails = try decode(.movieDetails)
        #expect(movie.id == 550)
        #expect(movie.title == "Fight Club")
        #expect(movie.genres.map(\.name) == ["Drama", "Thriller", "Comedy"])
        #expect(movie.runtime == 139)
        #expect(movie.budget == 63_000_000)
        #expect(movie.revenue == 100_853_753)
        #expect(movie.imdbID == "tt0137523")
        #expect(movie.status == "Released")
        #expect(movie.tagline == "Mischief. Mayhem. Soap.")
        #expect(movie.productionCompanies.count == 3)
        #expect(movie.productionCompanies[2].originCountry == nil)
    }

    @Test("videos decode; official trailers come first")
    func videos() throws {
        let list: VideoList = try decode(.videos)
        #expect(list.id == 550)
        #expect(list.results.count == 3)
        #expect(
            list.trailersFirst.map(\.name) == [
                "Fight Club | #TBT Trailer | 20th Century FOX", "Fan trailer", "Behind the scenes",
            ])
        #expect(list.results[0].watchURL?.absoluteString == "https://www.youtube.com/watch?v=BdJKm16Co6M")
        #expect(list.results[2].publishedAt == nil)
    }

    @Test("auth models decode, with expiry dates")
    func auth() throws {
        let token: RequestToken = try decode(.newToken)
        #expect(token.requestToken == "ff5c7eeb5a8870efe3cd7fc5c282cffd26800ecd")
        #expect(token.expiresAt == TMDBDate.parse("2026-11-22 18:04:39 UTC"))
        let session: Session = try decode(.newSession)
        #expect(session.sessionID == "79191836ddaa0da3df76a5ffef6f07ad6ab0c641")
        let guest: GuestSession = try decode(.guestSession)
        #expect(guest.guestSessionID == "1ce82ec1223641636ad4a60b07de3581")
        #expect(guest.expiresAt != nil)
        #expect(try SuccessParser().parse(try #require(TMDBFixtures.data(.deleteSession))))
        #expect(throws: DecodingFailure.self) { try SuccessParser().parse(Data("[]".utf8)) }
        #expect(throws: DecodingFailure.self) { try SuccessParser().parse(Data(#"{"success": "yes"}"#.utf8)) }
    }

    @Test(
        "error fixtures carry TMDB's codes",
        arguments: [
            (TMDBFixtures.Name.invalidAPIKey, 7), (.noPermission, 3), (.notFound, 34), (.invalidLogin, 30),
            (.sessionDenied, 17),
            (.rateLimited, 25),
            (.invalidPage, 22), (.missingLogin, 26),
        ])
    func errorFixtures(name: TMDBFixtures.Name, code: Int) throws {
        let data = try #require(TMDBFixtures.data(name))
        let status = try #require(JSONStatusReader.tmdb.status(in: data))
        #expect(status.code == code)
        #expect(status.success == false)
        #expect(status.message?.isEmpty == false)
    }

    @Test("a page round-trips through its encoder in TMDB's format")
    func roundTrip() throws {
        let page: MoviePage = try decode(.upcoming)
        let again = try DecodableParser<MoviePage>().parse(try JSONEncoder().encode(page))
        #expect(again == page)
    }
}
