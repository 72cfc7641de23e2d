import Foundation
// GUIDE-BEGIN
import NetworkCore

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
// GUIDE-END

/// The README's example, compiled with the tests (never run: it would call TheMovieDB). `Movies` is also
/// the endpoint the DocC catalog's sample assumes. `GuideSamplesTests` checks that README.md shows exactly
/// the lines between the markers.
func readmeExample() async throws {
    // GUIDE-BEGIN
    let pool = TaskPool()  // made and injected: there is no shared instance
    pool.send(Movies.nowPlaying(page: 1), id: "now-playing") { result in print(result) }
    print(pool.debugDescription)  // a row per task: id, service, method, URL (key redacted), state, ms, bytes
    pool.cancel(id: "now-playing")  // from anywhere; the completion gets .failure(.cancelled)

    let response = try await pool.send(Movies.nowPlaying(page: 2))
    print(response.statusCode, response.body.count, pool.activeTasks.isEmpty)
    // GUIDE-END
}
