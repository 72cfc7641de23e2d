import Foundation
import NetworkCore
import Testing

/// The README's example, compiled with the tests (never run: it would call TheMovieDB).
/// `readmeMatches` checks that README.md shows exactly these lines.
func readmeExample() async throws {
    // README-BEGIN
    enum Movies: Endpoint {
        case nowPlaying(page: Int)
        var baseURL: String { "https://api.themoviedb.org/3" }
        var path: String { "movie/now_playing" }
        var task: HTTPTask {
            switch self {
            case .nowPlaying(let page): .urlParameters(["page": page, "api_key": "YOUR_KEY"])
            }
        }
    }

    let pool = TaskPool()  // made and injected: there is no shared instance
    pool.send(Movies.nowPlaying(page: 1), id: "now-playing") { result in print(result) }
    print(pool.debugDescription)  // a row per task: id, service, method, URL (key redacted), state, ms, bytes
    pool.cancel(id: "now-playing")  // from anywhere; the completion gets .failure(.cancelled)

    let response = try await pool.send(Movies.nowPlaying(page: 2))
    print(response.statusCode, response.body.count, pool.activeTasks.isEmpty)
    // README-END
}

@Suite("README")
struct ReadmeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func lines(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    @Test("the README's example is the one this file compiles")
    func readmeMatches() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let blockStart = try #require(readme.range(of: "```swift\n"))
        let blockEnd = try #require(readme[blockStart.upperBound...].range(of: "```"))
        let shown = Self.lines(readme[blockStart.upperBound..<blockEnd.lowerBound]).filter {
            $0 != "import NetworkCore"
        }

        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let begin = try #require(source.range(of: "// README-BEGIN\n"))
        let end = try #require(source.range(of: "// README-END"))
        let compiled = Self.lines(source[begin.upperBound..<end.lowerBound])

        #expect(compiled.count >= 10)
        #expect(shown == compiled)
    }
}
