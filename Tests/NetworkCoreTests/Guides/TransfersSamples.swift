// swift-format-ignore-file
// The samples are shown in Docs/Transfers.md as written here (GuideSamplesTests), so they keep its layout.
import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The samples of Docs/Transfers.md, compiled with the tests (never run: they name a server that does
/// not exist). `GuideSamplesTests` checks that the guide's Swift blocks show exactly these lines.
func transfersGuide() async throws {
    // GUIDE-BEGIN
    enum Files: Endpoint {
        case report(id: Int)
        case upload(URL)
        case logs
        case prices

        var baseURL: String { "https://files.example.com" }
        var path: String {
            switch self {
            case .report(let id): "reports/\(id).pdf"
            case .upload: "uploads"
            case .logs: "logs/tail"
            case .prices: "prices/live"
            }
        }
        var method: HTTPMethod {
            if case .upload = self { return .post }
            return .get
        }
        var task: HTTPTask {
            if case .upload(let file) = self { return .file(file, contentType: "application/pdf") }
            return .plain
        }
    }

    // Retries resume a cut download, and reconnect a dropped event stream.
    let pool = TaskPool(configuration: .init(interceptors: [RetryPolicy()]))

    let destination = FileManager.default.temporaryDirectory.appendingPathComponent("report.pdf")
    let downloaded = try await pool.download(Files.report(id: 7), to: destination, id: "report-7")
    print(downloaded.statusCode, downloaded.fileURL?.path ?? "")

    let uploaded = try await pool.send(Files.upload(destination), id: "upload")
    print(uploaded.statusCode)

    let chunkedUploads = TaskPool(configuration: .init(transport: URLSessionTransport(fileUploads: .chunked)))
    let sent = try await chunkedUploads.send(Files.upload(destination), id: "upload-chunked")
    print(sent.statusCode)

    struct Profile: Endpoint {
        let name: String
        let avatar: URL
        var baseURL: String { "https://files.example.com" }
        var path: String { "profile" }
        var method: HTTPMethod { .post }
        var task: HTTPTask {
            .multipart([
                .text("name", name),
                .data("settings", Data(#"{"theme":"dark"}"#.utf8), fileName: "settings.json", contentType: "application/json"),
                .file("avatar", avatar, contentType: "image/png"),
            ])
        }
    }

    let profile = try await pool.send(Profile(name: "Tyler", avatar: destination), id: "profile")
    print(profile.statusCode)

    let report = FileManager.default.temporaryDirectory.appendingPathComponent("report-8.pdf")
    try await pool.download(Files.report(id: 8), to: report, id: "report-8") { progress in
        if let fraction = progress.fractionCompleted { print("\(Int(fraction * 100)) %") }
    }

    try await pool.upload(Files.upload(report), id: "upload-8") { progress in
        print("sent \(progress.bytesSent) of \(progress.bytesToSend ?? 0)")
    }

    // Anyone else follows a running task by its id.
    if let task = pool.task(id: "report-8") {
        for await progress in task.progressUpdates {
            print(progress.bytesReceived, progress.bytesPerSecond)
        }
    }

    let stream = try await pool.stream(Files.logs)
    for try await line in stream.lines where line.contains("ERROR") {
        print(line)
    }

    let events = try await pool.events(Files.prices, id: "prices")
    for try await event in events where event.event == "price" {
        print(event.data, event.id ?? "")
    }
    pool.cancel(id: "prices")  // ends the stream: the loop above throws NetworkError.cancelled

    struct Echo: Transport {
        func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
            AsyncTransfer(reportingTo: events) { events in
                let head = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: nil, headerFields: nil)!
                guard events.receive(head: head) else { return }
                events.receive(body: request.httpBody ?? Data())
            }
        }
    }

    struct Canned: Transport {
        func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
            AsyncTransfer(reportingTo: events) { events in
                let head = ResponseHead(statusCode: 200, fields: [("Content-Type", "application/json")], url: request.url)
                guard events.receive(head: head) else { return }
                events.receive(body: Data("{}".utf8))
            }
        }
    }
    // GUIDE-END
}
