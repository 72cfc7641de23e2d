import Foundation
import LoopbackServer
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

/// Splits a `multipart/form-data` body at `boundary` into its parts' header blocks and contents.
func multipartParts(_ body: Data, boundary: String) -> [(headers: String, content: Data)]? {
    let delimiter = Data("--\(boundary)".utf8)
    var parts: [(String, Data)] = []
    guard body.starts(with: delimiter) else { return nil }
    var rest = body[(body.startIndex + delimiter.count)...]
    while true {
        if rest.starts(with: Data("--\r\n".utf8)) { return rest.count == 4 ? parts : nil }
        guard rest.starts(with: Data("\r\n".utf8)), let blank = rest.range(of: Data("\r\n\r\n".utf8)) else {
            return nil
        }
        let headers = String(decoding: rest[(rest.startIndex + 2)..<blank.lowerBound], as: UTF8.self)
        guard let next = rest.range(of: Data("\r\n".utf8) + delimiter, in: blank.upperBound..<rest.endIndex) else {
            return nil
        }
        parts.append((headers, Data(rest[blank.upperBound..<next.lowerBound])))
        rest = rest[next.upperBound...]
    }
}

@Suite("Multipart forms: encoding, boundaries, bad input, streaming from files", .timeLimit(.minutes(1)))
struct MultipartTests {
    let pool = TaskPool(configuration: .init(transport: DrivenTransport()))

    @Test("a form without files is one body in memory: the same form gives the same bytes and the same id")
    func inMemory() throws {
        let form: MultipartForm = [
            .text("title", "Fight Club"),
            .data("blob", Data([0, 13, 10, 45, 45, 255]), fileName: "b.bin", contentType: "application/x-test"),
        ]
        let request = try FormEndpoint(form: form).urlRequest()
        let contentType = try #require(request.value(forHTTPHeaderField: "Content-Type"))
        #expect(contentType.hasPrefix("multipart/form-data; boundary=NetworkCore-"))
        let boundary = String(contentType.dropFirst("multipart/form-data; boundary=".count))
        let body = try #require(request.httpBody)
        var expected = Data(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nFight Club\r\n".utf8)
        expected += Data(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"b.bin\"\r\nContent-Type: application/x-test\r\n\r\n"
                .utf8)
        expected += Data([0, 13, 10, 45, 45, 255]) + Data("\r\n--\(boundary)--\r\n".utf8)
        #expect(body == expected)
        #expect(try FormEndpoint(form: form).urlRequest().httpBody == body)
        #expect(try pool.taskID(for: FormEndpoint(form: form)) == pool.taskID(for: FormEndpoint(form: form)))
    }

    @Test(
        "a part name, file name or content type with CR, LF or NUL fails typed, before anything is sent",
        arguments: [
            MultipartForm.Part.text("a\r\nX-Injected: 1", "v"), .text("a\nb", "v"), .text("a\0b", "v"),
            .data("file", Data(), fileName: "x\r.txt"), .data("file", Data(), contentType: "text/plain\r\nX: 1"),
        ])
    func lineBreaks(part: MultipartForm.Part) async throws {
        let transport = DrivenTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        do {
            _ = try await pool.send(FormEndpoint(form: [part]))
            Issue.record("sent")
        } catch {
            guard case .encodingFailed(let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(reason.contains("line break"))
        }
        #expect(transport.count == 0)
    }

    @Test("quotes in names are escaped as browsers do, and any content round-trips, boundary-like lines included")
    func anyContent() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<50 {
            let tricky = Data("\r\n--NetworkCore-\r\n--\r\n".utf8)
            let random = Data((0..<Int.random(in: 0..<300, using: &generator)).map { _ in UInt8.random(in: 0...255) })
            let form: MultipartForm = [
                .text("say \"hi\"", "line 1\r\nline 2"),
                .data("r\(round)", tricky + random + tricky, fileName: "\"q\".bin"),
            ]
            let request = try FormEndpoint(form: form).urlRequest()
            let contentType = try #require(request.value(forHTTPHeaderField: "Content-Type"))
            let boundary = String(contentType.dropFirst("multipart/form-data; boundary=".count))
            let body = try #require(request.httpBody)
            let parts = try #require(multipartParts(body, boundary: boundary))
            #expect(parts.count == 2)
            #expect(parts.first?.headers == "Content-Disposition: form-data; name=\"say %22hi%22\"")
            #expect(parts.first?.content == Data("line 1\r\nline 2".utf8))
            #expect(parts.last?.headers.contains("filename=\"%22q%22.bin\"") == true)
            #expect(parts.last?.content == tricky + random + tricky)
        }
    }

    @Test("a form with files streams in pieces no larger than asked, the files read as they are reached")
    func streamsFromFiles() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let big = scratch.file("big.bin")
        let small = scratch.file("small.txt")
        try alphabet(300_000).write(to: big)
        try Data("small".utf8).write(to: small)
        let form: MultipartForm = [
            .text("caption", "two files"), .file("big", big),
            .file("small", small, fileName: "renamed.txt", contentType: "text/plain"),
        ]
        let request = try FormEndpoint(form: form).urlRequest()
        #expect(request.httpBody == nil)
        guard case .form(let encoding) = try FormEndpoint(form: form).upload(for: request) else {
            Issue.record("not streamed")
            return
        }
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(encoding.length))
        var body = Data()
        var largest = 0
        for try await chunk in encoding.chunks(chunkSize: 10_000) {
            largest = max(largest, chunk.count)
            body += chunk
        }
        #expect(largest == 10_000)
        #expect(body.count == encoding.length)
        let parts = try #require(multipartParts(body, boundary: encoding.boundary))
        #expect(parts.map(\.content) == [Data("two files".utf8), alphabet(300_000), Data("small".utf8)])
        #expect(parts[1].headers.contains("filename=\"big.bin\"\r\nContent-Type: application/octet-stream"))
        #expect(parts[2].headers.contains("filename=\"renamed.txt\"\r\nContent-Type: text/plain"))
    }

    @Test("a file that changes size after the request was made fails the body typed")
    func fileChanged() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("f.txt")
        try Data("twelve bytes".utf8).write(to: file)
        let form: MultipartForm = [.file("f", file)]
        let request = try FormEndpoint(form: form).urlRequest()
        guard case .form(let encoding) = try FormEndpoint(form: form).upload(for: request) else {
            Issue.record("not streamed")
            return
        }
        try Data("now it is longer".utf8).write(to: file)
        do {
            for try await _ in encoding.chunks() {}
            Issue.record("read a changed file")
        } catch let error as NetworkError {
            guard case .fileAccessFailed(let path, let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(path == file.path)
            #expect(reason.contains("changed size"))
        }
        // Made again for the next attempt, the request no longer matches the file.
        #expect(throws: NetworkError.self) { try FormEndpoint(form: form).upload(for: request) }
    }

    @Test("a missing file or a directory in a form fails typed before anything is sent")
    func badFiles() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let transport = DrivenTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        for (url, reason) in [(scratch.file("missing"), "no such file"), (scratch.url, "a directory, not a file")] {
            do {
                _ = try await pool.send(FormEndpoint(form: [.text("a", "b"), .file("f", url)]))
                Issue.record("sent")
            } catch {
                guard case .fileAccessFailed(let path, let why) = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(path == url.path)
                #expect(why == reason)
            }
        }
        #expect(transport.count == 0)
    }
}

@Suite(
    "Multipart forms against httpbin (real server on 127.0.0.1)",
    .enabled(if: HTTPBin.url != nil, "NETWORKCORE_HTTPBIN_URL is not set; Scripts/test sets it"))
struct HTTPBinMultipartTests {
    let pool = TaskPool(configuration: .init(requestTimeout: 30))

    struct Echo: Decodable, Sendable {
        let form: [String: String]
        let files: [String: String]
        let headers: [String: String]
    }

    @Test("httpbin echoes the fields and files of a streamed form exactly, and no spool file is left")
    func echoesStreamedForm() async throws {
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

    @Test("httpbin echoes a form in memory")
    func echoesInMemoryForm() async throws {
        let echo = try await pool.send(
            FormEndpoint(form: [.text("a", "1"), .text("b", "ü ✓")]), parser: DecodableParser<Echo>())
        #expect(echo.form == ["a": "1", "b": "ü ✓"])
        #expect(echo.files.isEmpty)
    }
}

/// The spool files of stream uploads now in the temporary directory.
func spoolFiles() -> Set<String> {
    let names =
        (try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? []
    return Set(names.filter { $0.hasPrefix(".networkcore-upload-") })
}
