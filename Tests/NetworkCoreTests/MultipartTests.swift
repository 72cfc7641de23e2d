import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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
            let content: Data = tricky + random + tricky
            let form: MultipartForm = [
                .text("say \"hi\"", "line 1\r\nline 2"),
                .data("r\(round)", content, fileName: "\"q\".bin"),
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
            #expect(parts.last?.content == content)
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
