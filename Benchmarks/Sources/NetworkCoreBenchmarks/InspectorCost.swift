// The inspector suite: what a PoolInspector keeps (its history's memory, against its setting) and what a
// page's view costs to build and encode, as the inspector's server does each time it sends one.
import Foundation
import NetworkCore
import NetworkCoreInspector

/// 20,000 sends through a stub that answers 256 KiB, to a pool with an inspector keeping 100 and then
/// 1,000 tasks (64 KiB previews), and to one without: the bytes still allocated afterwards, by glibc's
/// count. Then the view with 64 tasks running and 100 kept: built and encoded, time a view.
func inspectorCost(_ options: Options) async -> [Row] {
    let sends = 20_000
    let body = Data(repeating: UInt8(ascii: "x"), count: 256 << 10)
    let stub = StubTransport { _, _ in StubResponse(headers: ["Content-Type": "text/plain"], body: body) }
    let endpoint = FileEndpoint(baseURL: "https://inspected.stub.example", path: "item")
    print("\n## Inspector: history memory after \(sends) answers of 256 KiB; a page's view\n")
    print("history limit  preview limit  bytes kept after  bytes kept without  kept per task  bound per task")

    /// The bytes still allocated after the sends, the pool (alike with and without an inspector) included.
    func kept(_ inspector: PoolInspector?) async -> Int {
        let before = allocatedBytes()
        let pool = TaskPool(
            configuration: .init(
                transport: stub, maximumConcurrentTasks: 64, maximumTasksPerHost: 64, inspector: inspector))
        for batch in 0..<(sends / 64) {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<64 { group.addTask { _ = try? await pool.send(endpoint, id: "i\(batch)-\(index)") } }
            }
        }
        await letTasksSettle(100)
        return withExtendedLifetime(pool) { allocatedBytes() - before }
    }
    var rows: [Row] = []
    let baseline = await kept(nil)
    for limit in [100, 1_000] {
        let inspector = PoolInspector(historyLimit: limit, bodyPreviewLimit: 64 << 10)
        let bytes = await kept(inspector)
        precondition(inspector.inspection.recent.count == limit)
        let perTask = Double(bytes - baseline) / Double(limit)
        // What the setting allows a kept task: its preview, plus 8 KiB for heads, timings and the rest.
        let bound = Double((64 << 10) + (8 << 10))
        print(
            padded(String(limit), 15) + padded("64 KiB", 15) + padded(String(bytes), 18)
                + padded(String(baseline), 20) + padded(fmt(perTask), 15) + fmt(bound))
        rows.append(
            Row(
                suite: "inspector", client: "history \(limit)", payload: nil, inflight: nil, rps: nil, p50_us: nil,
                p99_us: nil, cpu_us_per_req: nil, rps_ratio_vs_urlsession: nil, cpu_ratio_vs_urlsession: nil,
                detail: [
                    "bytes_kept": Double(bytes), "bytes_without": Double(baseline), "bytes_per_kept_task": perTask,
                ]))
        withExtendedLifetime(inspector) {}
    }

    // A page's view: 64 tasks running (a stub that waits), 100 kept.
    let inspector = PoolInspector(historyLimit: 100)
    let quick = TaskPool(
        configuration: .init(transport: StubTransport { _, _ in .json(#"{"ok": true}"#) }, inspector: inspector))
    for index in 0..<100 { _ = try? await quick.send(endpoint, id: "done-\(index)") }
    let slow = TaskPool(
        configuration: .init(
            transport: StubTransport(delay: 600) { _, _ in .json("{}") }, maximumTasksPerHost: 64, inspector: inspector)
    )
    for index in 0..<64 { slow.send(endpoint, id: "running-\(index)") { _ in } }
    await letTasksSettle(200)
    // As the server writes it for a page (`InspectorServer.view()`), and with `JSONEncoder` for comparison.
    guard let server = try? await InspectorServer.start(inspector: inspector) else {
        print("the inspector's server did not start")
        return rows
    }
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .millisecondsSince1970
    var written: [Double] = []
    var encoded: [Double] = []
    var size = 0
    for _ in 0..<50 {
        var start = now()
        size = server.view().count
        written.append(Double(now() - start) / 1000)
        start = now()
        _ = try? encoder.encode(inspector.inspection)
        encoded.append(Double(now() - start) / 1000)
    }
    try? await server.stop()
    _ = slow.cancelAll()
    print(
        "\na page's view of 64 running and 100 kept tasks (\(size) bytes): \(fmt(median(written))) µs as the server writes it, \(fmt(median(encoded))) µs with JSONEncoder"
    )
    rows.append(
        Row(
            suite: "inspector", client: "view", payload: nil, inflight: 64, rps: nil, p50_us: median(written),
            p99_us: nil, cpu_us_per_req: nil, rps_ratio_vs_urlsession: nil, cpu_ratio_vs_urlsession: nil,
            detail: ["view_bytes": Double(size), "json_encoder_us": median(encoded)]))
    return rows
}
