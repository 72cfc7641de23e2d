import Foundation
import Testing

@testable import NetworkCore

struct Movie: Decodable, Sendable, Equatable {
    let id: Int
    let title: String
}

/// A hand-written parser for an odd payload: `"id|title"` lines.
struct PipeMoviesParser: JSONParser {
    struct Malformed: Error, CustomStringConvertible {
        let line: Int
        var description: String { "line \(line) is not 'id|title'" }
    }

    func parse(_ data: Data) throws -> [Movie] {
        try String(decoding: data, as: UTF8.self).split(separator: "\n").enumerated().map { index, line in
            let fields = line.split(separator: "|", maxSplits: 1)
            guard fields.count == 2, let id = Int(fields[0]) else { throw Malformed(line: index + 1) }
            return Movie(id: id, title: String(fields[1]))
        }
    }
}

@Suite("Parsers")
struct ParserTests {
    let page = Data(
        #"{"page": 1, "results": [{"id": 1, "title": "A"}, {"id": 2, "title": "B"}], "data": {"items": {"first": {"id": 3, "title": "C"}}}}"#
            .utf8)

    @Test("decodes the whole body")
    func wholeBody() throws {
        struct Page: Decodable, Sendable {
            let page: Int
            let results: [Movie]
        }
        let decoded = try DecodableParser<Page>().parse(page)
        #expect(decoded.page == 1)
        #expect(decoded.results == [Movie(id: 1, title: "A"), Movie(id: 2, title: "B")])
    }

    @Test("decodes at a key path", arguments: [("results", 2), ("data.items.first", 1)])
    func keyPath(path: String, count: Int) throws {
        if count == 2 {
            #expect(try DecodableParser<[Movie]>(keyPath: path).parse(page).map(\.id) == [1, 2])
        } else {
            #expect(try DecodableParser<Movie>(keyPath: path).parse(page) == Movie(id: 3, title: "C"))
        }
    }

    @Test("a missing key path names the key that is missing")
    func missingKeyPath() {
        let failure = #expect(throws: DecodingFailure.self) {
            try DecodableParser<[Movie]>(keyPath: "data.nope").parse(page)
        }
        #expect(failure?.path == "data.nope")
        #expect(failure?.type == "Array<Movie>")
    }

    @Test("a type mismatch names its coding path")
    func typeMismatch() {
        let body = Data(#"{"results": [{"id": 1, "title": "A"}, {"id": "two", "title": "B"}]}"#.utf8)
        let failure = #expect(throws: DecodingFailure.self) {
            try DecodableParser<[Movie]>(keyPath: "results").parse(body)
        }
        #expect(failure?.path == "results[1].id")
        #expect(failure?.reason.contains("Int") == true)
        #expect(failure?.description.hasPrefix("Array<Movie> at results[1].id:") == true)
    }

    @Test(
        "null where a value is required, and invalid JSON, are typed failures",
        arguments: [
            (#"{"id": null, "title": "A"}"#, "id"), ("{truncated", ""), ("", ""), ("<html>502</html>", ""),
        ])
    func invalid(body: String, path: String) {
        let failure = #expect(throws: DecodingFailure.self) { try DecodableParser<Movie>().parse(Data(body.utf8)) }
        #expect(failure?.path == path)
        #expect(failure?.type == "Movie")
    }

    @Test("the given decoder's settings are used with a key path, and the decoder is left unchanged")
    func decoderSettings() throws {
        struct Person: Decodable, Sendable { let firstName: String }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let parser = DecodableParser<Person>(keyPath: "person", decoder: decoder)
        #expect(try parser.parse(Data(#"{"person": {"first_name": "Ana"}}"#.utf8)).firstName == "Ana")
        #expect(decoder.userInfo.isEmpty)
    }

    @Test("a hand-written parser works through the pool, its errors arrive as decodingFailed")
    func handWritten() async throws {
        let pool = TaskPool.stubbed { request, _ in
            StubResponse(body: Data((request.url!.path.hasSuffix("bad") ? "1|A\nnope" : "1|A\n2|B|C").utf8))
        }
        let movies = try await pool.send(TestEndpoint(path: "good"), parser: PipeMoviesParser())
        #expect(movies == [Movie(id: 1, title: "A"), Movie(id: 2, title: "B|C")])
        let failure = try #require(await decodingFailure(pool, TestEndpoint(path: "bad"), PipeMoviesParser()))
        #expect(failure.reason == "line 2 is not 'id|title'")
        #expect(failure.type == "Array<Movie>")
    }

    @Test("a DecodableParser failure through the pool keeps its path")
    func poolDecodingFailure() async throws {
        let pool = TaskPool.stubbed { _, _ in .json(#"{"results": [{"id": 1}]}"#) }
        let failure = try #require(
            await decodingFailure(pool, TestEndpoint(), DecodableParser<[Movie]>(keyPath: "results")))
        #expect(failure.path == "results[0].title")
    }

    /// The decoding failure a send ends with; records an issue for any other outcome.
    func decodingFailure(
        _ pool: TaskPool, _ endpoint: TestEndpoint, _ parser: some JSONParser
    ) async
        -> DecodingFailure?
    {
        do {
            _ = try await pool.send(endpoint, parser: parser)
            Issue.record("the body parsed")
        } catch {
            if case .decodingFailed(let failure) = error { return failure }
            Issue.record("expected decodingFailed, got \(error)")
        }
        return nil
    }
}
