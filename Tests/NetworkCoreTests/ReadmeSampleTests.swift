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
    @Test("the README's example is the one this file compiles")
    func readmeMatches() throws {
        let shown = try #require(try DocSamples.blocks(inPage: "README.md").first).filter { $0 != "import NetworkCore" }
        let compiled = try #require(try DocSamples.compiled(in: #filePath, marker: "README"))
        #expect(compiled.count >= 10)
        #expect(shown == compiled)
    }
}
