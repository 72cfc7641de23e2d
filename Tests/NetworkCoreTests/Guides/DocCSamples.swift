// swift-format-ignore-file
// The samples are shown in a guide as written here (GuideSamplesTests), so they keep its layout.
import Foundation
import NetworkCore

/// The sample of the DocC catalog's landing page (Sources/NetworkCore/NetworkCore.docc/NetworkCore.md), in
/// the context the page gives it (compiled, never run). `GuideSamplesTests` checks that the page shows
/// exactly the lines between the markers.
enum DocCSamples {
    // What the page assumes: an endpoint enum (the README's `Movies`) and a model.
    struct MoviePage: Decodable { let page: Int }

    static func send() async throws -> MoviePage {
        // GUIDE-BEGIN
        let pool = TaskPool()
        let page = try await pool.send(Movies.nowPlaying(page: 1), parser: DecodableParser<MoviePage>(), id: "now-playing")
        // GUIDE-END
        return page
    }
}
