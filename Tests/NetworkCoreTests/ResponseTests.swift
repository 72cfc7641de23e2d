import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A reader for a server that, like TheMovieDB, states `status_code`, `status_message` and a `success`
/// flag that may be `false` on a 2xx.
let flaggingReader = JSONStatusReader(
    codeKeys: ["status_code", "code"], messageKeys: ["status_message", "message"], successKey: "success")

/// Counts how often the body is actually parsed for a server status.
final class CountingReader: ServerStatusReader, @unchecked Sendable {  // `parses` is a thread-safe Counter.
    let base = flaggingReader
    let parses = Counter()

    func status(in body: Data) -> ServerStatus? {
        parses.increment()
        return base.status(in: body)
    }

    func mayDescribeFailure(_ body: Data) -> Bool { base.mayDescribeFailure(body) }
}

@Suite("Responses and errors")
struct ResponseTests {
    func pool(
        reader: any ServerStatusReader = flaggingReader, validation: Validation = .default,
        _ responder: @escaping StubTransport.Responder
    ) -> TaskPool {
        TaskPool(
            configuration: .init(
                transport: StubTransport(responder: responder), validation: validation, statusReader: reader))
    }

    func failure(_ pool: TaskPool, _ endpoint: some Endpoint = TestEndpoint()) async -> NetworkError? {
        do {
            _ = try await pool.send(endpoint)
            return nil
        } catch {
            return error
        }
    }

    @Test("an error status carries the server's own code and message")
    func httpStatusWithServerError() async throws {
        let body =
            #"{"success": false, "status_code": 7, "status_message": "Invalid API key: You must be granted a valid key."}"#
        let pool = pool { _, _ in .json(body, statusCode: 401) }
        let error = try #require(await failure(pool, TestEndpoint(task: .urlParameters(["api_key": "KEY-123"]))))
        guard case .httpStatus(let response) = error else {
            Issue.record("expected httpStatus, got \(error)")
            return
        }
        #expect(response.statusCode == 401)
        #expect(error.statusCode == 401)
        #expect(
            error.serverError
                == ResponseError(
                    statusCode: 401, code: 7, message: "Invalid API key: You must be granted a valid key.",
                    body: Data(body.utf8)))
        #expect(response.serverCode == 7)
        let message = error.localizedDescription
        #expect(message.contains("401"))
        #expect(message.contains("server code 7"))
        #expect(message.contains("Invalid API key"))
        #expect(!message.contains("KEY-123"))
        #expect(message.contains("api_key=<redacted>"))
    }

    @Test("an error status with a body that is not JSON still says what happened")
    func httpStatusHTML() async throws {
        let pool = pool { _, _ in StubResponse(statusCode: 503, body: Data("<html>down</html>".utf8)) }
        let error = try #require(await failure(pool))
        #expect(error.statusCode == 503)
        #expect(error.serverError?.code == nil)
        #expect(error.serverError?.message == nil)
        #expect(error.serverError?.body == Data("<html>down</html>".utf8))
        #expect(error.localizedDescription.contains("HTTP 503"))
    }

    @Test("a 2xx whose body says it failed is a server refusal")
    func successfulError() async throws {
        let pool = pool { _, _ in
            .json(#"{"success": false, "status_code": 30, "status_message": "Invalid username and/or password."}"#)
        }
        let error = try #require(await failure(pool))
        guard case .serverRefused(let response) = error else {
            Issue.record("expected serverRefused, got \(error)")
            return
        }
        #expect(response.statusCode == 200)
        #expect(error.serverError?.code == 30)
        #expect(error.localizedDescription.contains("refused"))
    }

    @Test("a 2xx with success true, or no success flag, is accepted")
    func successTrue() async throws {
        let pool = pool { request, _ in
            request.url!.path.hasSuffix("flag")
                ? .json(#"{"success": true, "status_code": 1, "status_message": "Success."}"#)
                : .json(#"{"results": []}"#)
        }
        let flagged = try await pool.send(TestEndpoint(path: "flag"))
        #expect(flagged.serverCode == 1)
        #expect(flagged.serverMessage == "Success.")
        let plain = try await pool.send(TestEndpoint(path: "plain"))
        #expect(plain.serverStatus == nil)
    }

    @Test("refusal detection can be turned off, and accepted statuses chosen")
    func customValidation() async throws {
        let refusing = pool(validation: Validation(detectsServerRefusal: false)) { _, _ in .json(#"{"success": false}"#)
        }
        #expect(try await refusing.send(TestEndpoint()).statusCode == 200)
        let notFoundIsFine = pool(validation: Validation(acceptableStatusCodes: Set(200...299).union([404]))) { _, _ in
            .json("{}", statusCode: 404)
        }
        #expect(try await notFoundIsFine.send(TestEndpoint()).statusCode == 404)
        let strict = pool(validation: Validation(acceptableStatusCodes: [200])) { _, _ in .json("{}", statusCode: 204) }
        #expect(await failure(strict)?.statusCode == 204)
    }

    @Test("the body is parsed for a status at most once, and not at all for a plain success")
    func lazyStatus() async throws {
        let reader = CountingReader()
        let pool = pool(reader: reader) { request, _ in
            request.url!.path.hasSuffix("error")
                ? .json(#"{"status_code": 34}"#, statusCode: 404) : .json(#"{"results": [1, 2]}"#)
        }
        let response = try await pool.send(TestEndpoint(path: "ok"))
        #expect(reader.parses.count == 0)
        #expect(response.serverCode == nil)
        #expect(response.serverMessage == nil)
        #expect(reader.parses.count == 1)
        let error = try #require(await failure(pool, TestEndpoint(path: "error")))
        #expect(error.serverError?.code == 34)
        #expect(error.serverError?.code == 34)
        #expect(error.response?.serverCode == 34)
        #expect(reader.parses.count == 2)
    }

    @Test(
        "transport errors map to the case that says what happened",
        arguments: [
            (URLError(.notConnectedToInternet) as any Error, "transport"),
            (URLError(.timedOut) as any Error, "timedOut"),
            (URLError(.cancelled) as any Error, "cancelled"),
            (CancellationError() as any Error, "cancelled"),
            (StubError.noSampleData(url: "x") as any Error, "transport"),
        ])
    func transportErrors(error: any Error, expected: String) async throws {
        let pool = TaskPool(configuration: .init(transport: StubTransport.failing(with: error), requestTimeout: 7))
        let failure = try #require(await failure(pool))
        switch (failure, expected) {
        case (.transport(let underlying), "transport"):
            #expect(String(describing: underlying) == String(describing: error))
        case (.timedOut(let seconds), "timedOut"):
            #expect(seconds == 7)
            #expect(failure.isTimeout)
            #expect(failure.localizedDescription == "The server did not answer within 7 s.")
        case (.cancelled, "cancelled"):
            #expect(failure.isCancelled)
        default:
            Issue.record("\(error) became \(failure), expected \(expected)")
        }
    }

    @Test("a transport URLError is kept and reachable")
    func keepsURLError() async throws {
        let pool = TaskPool(
            configuration: .init(transport: StubTransport.failing(with: URLError(.cannotConnectToHost))))
        let failure = try #require(await failure(pool))
        #expect(failure.urlError?.code == .cannotConnectToHost)
        #expect(failure.statusCode == nil)
        #expect(failure.localizedDescription.hasPrefix("The request failed:"))
    }

    @Test("every error case has a readable message")
    func messages() {
        let cases: [NetworkError] = [
            .invalidEndpoint(url: "https://h.com/x?token=abc", reason: "bad"), .encodingFailed(reason: "nan"),
            .transport(URLError(.networkConnectionLost)), .timedOut(seconds: 1.5), .cancelled,
            .decodingFailed(DecodingFailure(type: "Movie", path: "results[0].id", reason: "expected Int")),
            .duplicateTask(id: "a"),
        ]
        let messages = cases.map(\.localizedDescription)
        #expect(messages[0] == "Invalid endpoint https://h.com/x?token=<redacted>: bad.")
        #expect(messages[3] == "The server did not answer within 1.5 s.")
        #expect(messages[4] == "The request was cancelled.")
        #expect(messages[5] == "Could not decode the response: Movie at results[0].id: expected Int.")
        #expect(messages[6] == "A task with id 'a' is already running.")
        #expect(Set(messages).count == cases.count)
        #expect(cases.map(\.description) == messages)
    }

    @Test("response headers are read case-insensitively")
    func headers() async throws {
        let pool = pool { _, _ in StubResponse(statusCode: 200, headers: ["X-Request-Id": "r1"], body: Data()) }
        let response = try await pool.send(TestEndpoint())
        #expect(response.header("x-request-id") == "r1")
        #expect(response.headers["X-Request-Id"] == "r1")
        #expect(response.duration >= 0)
    }

    @Test(
        "the status reader ignores bodies that are not JSON objects",
        arguments: ["", "[1,2]", "<html>", "{bad json", "null", "{\"unrelated\": 1}", "\u{FF}\u{FE}"])
    func readerIgnoresOtherBodies(body: String) {
        #expect(JSONStatusReader().status(in: Data(body.utf8)) == nil)
    }

    @Test("the default reader reads common error shapes, and no success flag: a success body is never read")
    func readerShapes() {
        let reader = JSONStatusReader()
        #expect(reader.status(in: Data(#"{"code": 5, "message": "m"}"#.utf8)) == ServerStatus(code: 5, message: "m"))
        #expect(reader.status(in: Data(#"{"code": "12", "error": "e"}"#.utf8)) == ServerStatus(code: 12, message: "e"))
        #expect(
            reader.status(in: Data(#"{"errors": ["page must be less than or equal to 500", "x"]}"#.utf8))
                == ServerStatus(message: "page must be less than or equal to 500; x"))
        #expect(reader.status(in: Data(#" {"success": false}"#.utf8)) == nil)
        #expect(reader.status(in: Data(#"{"status_code": 7, "status_message": "TMDB's"}"#.utf8)) == nil)
        #expect(reader.status(in: Data(#"{"code": {"nested": 1}, "message": 3}"#.utf8)) == nil)
        #expect(!reader.mayDescribeFailure(Data(#"{"success":false}"#.utf8)))
        #expect(flaggingReader.status(in: Data(#" {"success": false}"#.utf8)) == ServerStatus(success: false))
        #expect(flaggingReader.mayDescribeFailure(Data(#"{"success":false}"#.utf8)))
        #expect(!flaggingReader.mayDescribeFailure(Data(#"{"results": []}"#.utf8)))
    }

    @Test("a 2xx that says it failed passes with the default reader: the core reads no server's conventions")
    func defaultReaderReadsNoSuccessFlag() async throws {
        let body = #"{"success": false, "status_code": 30, "status_message": "Invalid username and/or password."}"#
        let pool = TaskPool(configuration: .init(transport: StubTransport { _, _ in .json(body) }))
        let response = try await pool.send(TestEndpoint())
        #expect(response.statusCode == 200)
        #expect(!response.isServerRefusal)
    }

    @Test("setting successKey after the reader is made takes effect: a refusal is not let through")
    func successKeySetLater() async throws {
        var reader = JSONStatusReader()
        reader.successKey = "ok"
        #expect(reader.mayDescribeFailure(Data(#"{"ok": false}"#.utf8)))
        let pool = pool(reader: reader) { _, _ in .json(#"{"ok": false, "message": "nope"}"#) }
        let error = try #require(await failure(pool))
        guard case .serverRefused = error else {
            Issue.record("expected serverRefused, got \(error)")
            return
        }
        #expect(error.serverError?.message == "nope")
        reader.successKey = nil
        #expect(!reader.mayDescribeFailure(Data(#"{"ok": false}"#.utf8)))
    }

    @Test("an endpoint's own reader wins over the pool's")
    func endpointReader() async throws {
        let pool = TaskPool(
            configuration: .init(transport: StubTransport { _, _ in .json(#"{"status_code": 7}"#, statusCode: 401) }))
        let plain = try #require(await failure(pool))
        #expect(plain.serverError?.code == nil)
        let read = try #require(await failure(pool, TestEndpoint().reading(status: flaggingReader)))
        #expect(read.serverError?.code == 7)
    }

    @Test("sample data answers from the endpoint, and its absence is a clear error")
    func sampleData() async throws {
        let pool = TaskPool(configuration: .init(transport: StubTransport.sampleData()))
        let response = try await pool.send(TestEndpoint(sampleData: Data(#"{"id": 1}"#.utf8)))
        #expect(response.body == Data(#"{"id": 1}"#.utf8))
        let failure = try #require(await failure(pool, TestEndpoint()))
        guard case .transport(let error) = failure, let stubError = error as? StubError else {
            Issue.record("expected a StubError, got \(failure)")
            return
        }
        #expect(stubError == .noSampleData(url: "https://api.example.com/v1/items"))
        #expect(
            failure.localizedDescription
                == "The request failed: StubTransport.sampleData has no answer for https://api.example.com/v1/items: its endpoint's sampleData is nil."
        )
    }
}
