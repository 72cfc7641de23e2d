import Foundation
import NetworkCore
import NetworkCoreInspector
import Testing

/// The samples of Docs/LiveInspector.md, compiled with the tests; `GuideSamplesTests` (root package) checks
/// that the guide's Swift blocks show exactly these lines. The first runs in `samplesRun`.
func inspectorGuide() async throws {
    // GUIDE-BEGIN
    let inspector = PoolInspector(historyLimit: 200)
    let pool = TaskPool(configuration: .init(inspector: inspector))
    let server = try await InspectorServer.start(inspector: inspector)
    print("inspector:", server.url)
    let quiet = try await InspectorServer.start(
        inspector: inspector,
        configuration: .init(port: 9_090, allowsCancel: false, refreshInterval: 0.5))
    try await quiet.stop()
    for task in inspector.inspection.active where task.elapsed > 5 {
        print("slow:", task.id, task.phase ?? "", task.progress?.bytesReceived ?? 0)
    }
    if let failed = inspector.inspection.recent.first(where: { $0.state == .failed }) {
        print(inspector.task(id: failed.id)?.details?.cURL ?? "")
    }
    for await event in inspector.events() where event.kind == .retrying {
        print("retrying", event.taskID, event.timings?.attempts.count ?? 0)
    }
    // GUIDE-END
    _ = pool
    try await server.stop()
}

@Suite("The live inspector's guide")
struct InspectorGuideTests {
    @Test("the guide's first sample serves a pool, and the address it prints answers with the page")
    func firstSampleRuns() async throws {
        let inspector = PoolInspector(historyLimit: 200)
        let pool = TaskPool(configuration: .init(inspector: inspector))
        let server = try await InspectorServer.start(inspector: inspector)
        let token = try #require(
            URLComponents(url: server.url, resolvingAgainstBaseURL: false)?.queryItems?.first?.value)
        let page = try await pool.send(
            InspectorCall(baseURL: "http://127.0.0.1:\(server.port)", path: "/", query: ["token": token]), id: "page")
        #expect(String(decoding: page.body, as: UTF8.self).hasPrefix("<!DOCTYPE html>"))
        // The pool is watched: the inspector kept the request it just sent, its token redacted.
        let kept = try #require(inspector.inspection.recent.first)
        #expect(kept.id == "page")
        #expect(kept.url == "http://127.0.0.1:\(server.port)/?token=<redacted>")
        try await server.stop()
    }
}
