import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Credentials stay hidden where a call fails, too: errors, their dumps, log lines, HAR comments.
@Suite("Secrets on error paths")
struct SecretsOnErrorPathsTests {
    static let token = "SECRET-token/AbC+123=="
    static let key = "KEY-4f2a9b"

    /// Collects the lines a console logger writes.
    final class Lines: @unchecked Sendable {  // `lock` guards `lines`.
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: String { lock.withLock { lines.joined(separator: "\n") } }
    }

    @Test("a server that echoes the token in its message: description, localizedDescription and the log line hide it")
    func echoedToken() async throws {
        let lines = Lines()
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { request, _ in
                    let echoed = request.value(forHTTPHeaderField: "Authorization") ?? "-"
                    return .json(#"{"message": "Invalid token: \#(echoed)"}"#, statusCode: 401)
                }, logger: ConsoleLogger { lines.append($0) }))
        do {
            _ = try await pool.send(TestEndpoint(headers: ["Authorization": "Bearer \(Self.token)"]))
            Issue.record("a 401 succeeded")
        } catch {
            let texts = [
                error.description, error.localizedDescription, String(describing: error.serverError), lines.all,
            ]
            for text in texts {
                #expect(!text.contains("AbC+123"), "\(text)")
            }
            #expect(error.serverError?.message == "Invalid token: <redacted>")
            #expect(lines.all.contains("Invalid token: <redacted>"))
            // The raw message is still there for who asks for it explicitly.
            #expect(error.response?.serverMessage?.contains(Self.token) == true)
        }
    }

    @Test("dump of an HTTP-status error shows neither Authorization nor Cookie nor the key in the URL")
    func dumpOfError() async throws {
        let pool = TaskPool(configuration: .init(transport: StubTransport { _, _ in .json("{}", statusCode: 500) }))
        do {
            _ = try await pool.send(
                TestEndpoint(
                    task: .urlParameters(["api_key": Self.key]),
                    headers: ["Authorization": "Bearer \(Self.token)", "Cookie": "sid=COOKIE-99z"]))
            Issue.record("a 500 succeeded")
        } catch {
            var dumped = ""
            dump(error, to: &dumped)
            #expect(!dumped.contains("AbC+123"), "\(dumped)")
            #expect(!dumped.contains("COOKIE-99z"))
            #expect(!dumped.contains(Self.key))
            #expect(dumped.contains("500"))
            var response = ""
            dump(try #require(error.response), to: &response)
            #expect(!response.contains("COOKIE-99z") && !response.contains(Self.key) && !response.contains("AbC+123"))
        }
    }

    @Test("a failed request's HAR comment carries no key, even where the error names the full URL")
    func harComment() throws {
        let recorder = HARRecorder()
        let url = URL(string: "https://api.example.com/v1/items?api_key=\(Self.key)&page=1")!
        let error = URLError(.timedOut, userInfo: [NSURLErrorFailingURLErrorKey: url])
        recorder.record(
            URLRequest(url: url), response: nil, body: nil, error: error, startedAt: Date(), wait: 0, receive: 0)
        let comment = try #require(recorder.har.log.entries.first?.comment)
        #expect(comment.hasPrefix("no response: "))
        #expect(!comment.contains(Self.key), "\(comment)")
        #expect(!(String(data: try recorder.data(), encoding: .utf8) ?? "").contains(Self.key))
    }

    @Test("scrubbing finds a secret written JSON-escaped or percent-encoded")
    func escapedForms() {
        let secrets: Set<String> = [Self.token]
        let redactor = Redactor.default
        for text in [
            #"{"t": "SECRET-token\/AbC+123=="}"#, #"{"t": "SECRET-token\u002FAbC+123=="}"#,
            "t=SECRET%2Dtoken%2FAbC%2B123%3D%3D", "SECRET-token/AbC+123==",
        ] {
            #expect(!redactor.scrub(text, secrets: secrets).contains("AbC"), "\(text)")
        }
    }

    @Test("a URL's fragment loses its credentials in redaction (#access_token=…), as the redirected event shows")
    func fragments() {
        let redactor = Redactor.default
        #expect(
            redactor.redact("https://app.example/cb#access_token=tok123&state=xyz&token_type=bearer")
                == "https://app.example/cb#access_token=<redacted>&state=xyz&token_type=<redacted>")
        #expect(redactor.redact("https://app.example/page#section-2") == "https://app.example/page#section-2")
    }
}
