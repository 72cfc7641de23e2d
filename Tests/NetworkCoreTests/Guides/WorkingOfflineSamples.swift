import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The samples of Docs/WorkingOffline.md, compiled with the tests (never run: they name a server that does
/// not exist). `GuideSamplesTests` checks that the guide's Swift blocks show exactly these lines.
func workingOfflineGuide() async throws {
    // GUIDE-BEGIN
    struct NowPlaying: Endpoint {
        let page: Int
        var baseURL: String { "https://api.example.com/3" }
        var path: String { "movie/now_playing" }
        var task: HTTPTask { .urlParameters(["page": page]) }
        // The wait for the network counts: after two minutes the send fails as deadlineExceeded.
        var resourceTimeout: TimeInterval? { 120 }
    }

    let network = SystemConnectivity()
    let pool = TaskPool(configuration: .init(connectivity: network))

    // Sent in a tunnel, it waits for the network, then leaves.
    let page = try await pool.send(NowPlaying(page: 1))
    print(page.statusCode)
    // GUIDE-END

    // GUIDE-BEGIN
    Task {
        for await connectivity in network.changes {
            print("network:", connectivity)  // online, offline, constrained
        }
    }
    // GUIDE-END

    // GUIDE-BEGIN
    let switchboard = ManualConnectivity(.offline)
    let test = TaskPool(
        configuration: .init(transport: StubTransport { _, _ in .json("{}") }, connectivity: switchboard))
    test.send(NowPlaying(page: 1), id: "page 1") { result in print(result) }
    print(test.isWaitingForNetwork, test.task(id: "page 1")?.phase ?? .ended)  // true waiting for network
    switchboard.set(.online)  // the send leaves now
    // GUIDE-END

    // GUIDE-BEGIN
    struct Rate: Endpoint {
        let movie: Int
        let value: Double
        var baseURL: String { "https://api.example.com/3" }
        var path: String { "movie/\(movie)/rating" }
        var method: HTTPMethod { .post }
        var task: HTTPTask { .bodyParameters(["value": value]) }
    }

    let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
    let writes = try DurableStore(directory: support.appendingPathComponent("PendingWrites"))
    let app = TaskPool(
        configuration: .init(
            connectivity: network, durableStore: writes,
            durableOutcomes: { outcome in
                // A write sent again after a restart has no caller but this.
                let status = (try? outcome.result.get().statusCode) ?? 0
                print(outcome.id, outcome.restored ? "restored" : "", status, outcome.kept ? "kept" : "done")
            }))

    // Stored before it is sent; sent again by the next launch if the app dies first.
    app.send(Rate(movie: 550, value: 8.5).durable(for: 7 * 86_400), id: "rate 550") { _ in }

    // Back in the foreground: what was kept while the server could not be reached goes again.
    app.sendKeptWrites()
    // GUIDE-END
}
