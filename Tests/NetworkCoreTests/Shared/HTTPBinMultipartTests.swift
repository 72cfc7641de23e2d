import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A form sent to `url` (`/post` of httpbin unless given).
struct FormEndpoint: Endpoint {
    var baseURL = HTTPBin.url ?? "http://127.0.0.1:1"
    var path = "/post"
    var method: HTTPMethod = .post
    let form: MultipartForm
    var task: HTTPTask { .multipart(form) }
}

@Suite(
    "Multipart forms against httpbin (real server on 127.0.0.1)",
    .enabled(if: HTTPBin.url != nil, "NETWORKCORE_HTTPBIN_URL is not set; Scripts/test sets it"))
struct HTTPBinMultipartTests {

    struct Echo: Decodable, Sendable {
        let form: [String: String]
        let files: [String: String]
        let headers: [String: String]
    }

    @Test(
        "httpbin echoes the fields and files of a streamed form exactly, and no spool file is left",
        arguments: TransportUnderTest.httpbin)
    func echoesStreamedForm(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool(.init(requestTimeout: 30))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let document = scratch.file("document.txt")
        let text = String(repeating: "NetworkCore streams forms.\r\n--not a boundary\r\n", count: 5_000)
        try Data(text.utf8).write(to: document)
        let before = spoolFiles()
        let form: MultipartForm = [
            .text("title", "Fight Club"), .text("quote", "first rule\r\nsecond rule"),
            .data("notes", Data("in memory".utf8), fileName: "notes.txt", contentType: "text/plain"),
            .file("document", document, contentType: "text/plain"),
        ]
        let log = ProgressLog()
        let response = try await pool.upload(FormEndpoint(form: form)) { log.append($0) }
        let echo = try JSONDecoder().decode(Echo.self, from: response.body)
        #expect(echo.form == ["title": "Fight Club", "quote": "first rule\r\nsecond rule"])
        #expect(echo.files == ["notes": "in memory", "document": text])
        #expect(echo.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=NetworkCore-") == true)
        #expect(log.values.last?.bytesSent == Int(echo.headers["Content-Length"] ?? ""))
        #expect(await eventually { spoolFiles() == before })
    }

    @Test("httpbin echoes a form in memory", arguments: TransportUnderTest.httpbin)
    func echoesInMemoryForm(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool(.init(requestTimeout: 30))
        let echo = try await pool.send(
            FormEndpoint(form: [.text("a", "1"), .text("b", "ü ✓")]), parser: DecodableParser<Echo>())
        #expect(echo.form == ["a": "1", "b": "ü ✓"])
        #expect(echo.files.isEmpty)
    }
}
