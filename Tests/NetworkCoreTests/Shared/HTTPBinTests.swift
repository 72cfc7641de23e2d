import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The httpbin server `Scripts/test` starts on 127.0.0.1.
enum HTTPBin {
    static let environmentKey = "NETWORKCORE_HTTPBIN_URL"
    static let url = ProcessInfo.processInfo.environment[environmentKey].flatMap { $0.isEmpty ? nil : $0 }
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"
}

/// httpbin's routes, as a user would declare them.
enum HTTPBinEndpoint: Endpoint {
    case get(Parameters)
    case postJSON(Parameters)
    case postForm(Parameters)
    case headers
    case status(Int)
    case delay(seconds: Int, timeout: TimeInterval? = nil)
    case redirect(times: Int)
    case gzip
    case bearer(token: String?)

    var baseURL: String { HTTPBin.url ?? "http://127.0.0.1:1" }

    var path: String {
        switch self {
        case .get: "get"
        case .postJSON, .postForm: "post"
        case .headers: "headers"
        case .status(let code): "status/\(code)"
        case .delay(let seconds, _): "delay/\(seconds)"
        case .redirect(let times): "redirect/\(times)"
        case .gzip: "gzip"
        case .bearer: "bearer"
        }
    }

    var method: HTTPMethod {
        switch self {
        case .postJSON, .postForm: .post
        default: .get
        }
    }

    var task: HTTPTask {
        switch self {
        case .get(let parameters): .urlParameters(parameters)
        case .postJSON(let parameters): .bodyParameters(parameters)
        case .postForm(let parameters): .bodyParameters(parameters, encoder: .form)
        default: .plain
        }
    }

    var headers: [String: String] {
        if case .bearer(let token?) = self { return ["Authorization": "Bearer \(token)"] }
        return [:]
    }

    var timeout: TimeInterval? {
        if case .delay(_, let timeout) = self { return timeout }
        return nil
    }
}

@Suite("httpbin availability")
struct HTTPBinAvailabilityTests {
    @Test("with CI=true the integration suite must not be skipped")
    func serverPresentInCI() {
        if HTTPBin.isCI {
            #expect(HTTPBin.url != nil, "CI=true but \(HTTPBin.environmentKey) is not set: run Scripts/test")
        }
    }
}

@Suite(
    "httpbin integration (real server on 127.0.0.1)",
    .enabled(
        if: HTTPBin.url != nil,
        "\(HTTPBin.environmentKey) is not set; Scripts/test starts httpbin and sets it"))
struct HTTPBinTests {

    struct Echo: Decodable, Sendable {
        let args: [String: Arg]?
        let json: [String: Arg]?
        let form: [String: Arg]?
        let headers: [String: String]?
        let url: String?
        let gzipped: Bool?
    }

    /// httpbin echoes a repeated key as a list and a single one as a string.
    enum Arg: Decodable, Sendable, Equatable {
        case one(String)
        case many([String])
        case number(Double)
        case flag(Bool)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(String.self) {
                self = .one(value)
            } else if let value = try? container.decode([String].self) {
                self = .many(value)
            } else if let value = try? container.decode(Bool.self) {
                self = .flag(value)
            } else {
                self = .number(try container.decode(Double.self))
            }
        }
    }

    @Test("GET echoes every query value exactly as sent", arguments: TransportUnderTest.httpbin)
    func queryEcho(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
        let parameters: Parameters = ["q": "a b&c=d+e/f?", "name": "Amélie 東京", "ids": [1, 2], "adult": false]
        let echo = try await pool.send(HTTPBinEndpoint.get(parameters), parser: DecodableParser<Echo>())
        #expect(echo.args?["q"] == .one("a b&c=d+e/f?"))
        #expect(echo.args?["name"] == .one("Amélie 東京"))
        #expect(echo.args?["ids"] == .many(["1", "2"]))
        #expect(echo.args?["adult"] == .one("false"))
    }

    @Test("POST JSON is echoed as JSON", arguments: TransportUnderTest.httpbin)
    func postJSON(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
        let echo = try await pool.send(
            HTTPBinEndpoint.postJSON(["title": "Fight Club", "year": 1999, "seen": true]),
            parser: DecodableParser<Echo>())
        #expect(echo.json?["title"] == .one("Fight Club"))
        #expect(echo.json?["year"] == .number(1999))
        #expect(echo.json?["seen"] == .flag(true))
        #expect(echo.headers?["Content-Type"] == "application/json")
    }

    @Test("POST form is echoed as form fields", arguments: TransportUnderTest.httpbin)
    func postForm(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
        let echo = try await pool.send(
            HTTPBinEndpoint.postForm(["user": "ana maria", "note": "1+1=2 & more"]), parser: DecodableParser<Echo>())
        #expect(echo.form?["user"] == .one("ana maria"))
        #expect(echo.form?["note"] == .one("1+1=2 & more"))
        #expect(echo.headers?["Content-Type"]?.hasPrefix("application/x-www-form-urlencoded") == true)
    }

    @Test("the pool's default headers reach the server", arguments: TransportUnderTest.httpbin)
    func defaultHeaders(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
        let echo = try await pool.send(HTTPBinEndpoint.headers, parser: DecodableParser<Echo>())
        #expect(echo.headers?["User-Agent"] == "NetworkCore/\(LibraryVersion.current)")
        #expect(echo.headers?["Accept"] == "application/json")
    }

    @Test("/status/503 is an HTTP error with status 503", arguments: TransportUnderTest.httpbin)
    func status503(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
        do {
            _ = try await pool.send(HTTPBinEndpoint.status(503))
            Issue.record("503 was accepted")
        } catch {
            guard case .httpStatus(let response) = error else {
                Issue.record("expected httpStatus, got \(error)")
                return
            }
            #expect(response.statusCode == 503)
            #expect(error.statusCode == 503)
        }
    }

    /// That a cancel ends its callers without waiting for the transport is the pool state's (see
    /// `PoolStateAttemptTests`); this is the check over each transport and a real server, by the pool's clock.
    @Test(
        "/delay/3 cancelled by id ends as cancelled, long before the server answers",
        arguments: TransportUnderTest.httpbin)
    func cancelDelay(_ transport: TransportUnderTest) async throws {
        let logger = InMemoryLogger()
        let pool = transport.pool(.init(logger: logger))
        // Registered and handed to the transport when `immediately` returns.
        let caller = immediately { try await pool.send(HTTPBinEndpoint.delay(seconds: 3), id: "slow") }
        #expect(pool.cancel(id: "slow"))
        #expect(pool.activeTasks.isEmpty)
        #expect(isCancelled(await caller.result))
        // The pool ended it at the cancel, by its own clock, not when the server's 3 s answer came.
        let ended = try #require(logger.events(.cancelled).first?.duration)
        #expect(ended < 1, "ended after \(ended) s")
    }

    @Test("a 1 s request timeout on /delay/3 is a timeout error", arguments: TransportUnderTest.httpbin)
    func timeout(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
        // A timeout, not the answer the server sends at 3 s: the timer fired first. (When the caller resumes
        // on a busy machine says nothing more; it was seen at 4 s beside the other suites.)
        do {
            _ = try await pool.send(HTTPBinEndpoint.delay(seconds: 3, timeout: 1))
            Issue.record("the delayed request did not time out")
        } catch {
            #expect(error.isTimeout, "got \(error)")
            guard case .timedOut(let seconds) = error else { return }
            #expect(seconds == 1)
        }
    }

    @Test("/redirect/3 is followed to /get", arguments: TransportUnderTest.httpbin)
    func redirects(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
        let response = try await pool.send(HTTPBinEndpoint.redirect(times: 3))
        #expect(response.statusCode == 200)
        #expect(response.url?.path == "/get")
    }

    @Test("/gzip is decoded", arguments: TransportUnderTest.httpbin)
    func gzip(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
        let echo = try await pool.send(HTTPBinEndpoint.gzip, parser: DecodableParser<Echo>())
        #expect(echo.gzipped == true)
    }

    @Test("/bearer is 401 without a token and 200 with one", arguments: TransportUnderTest.httpbin)
    func bearer(_ transport: TransportUnderTest) async throws {
        let pool = transport.pool()
        do {
            _ = try await pool.send(HTTPBinEndpoint.bearer(token: nil))
            Issue.record("no token was accepted")
        } catch {
            #expect(error.statusCode == 401)
        }
        #expect(try await pool.send(HTTPBinEndpoint.bearer(token: "abc")).statusCode == 200)
    }

    @Test("100 concurrent sends give 100 results and leave no active task", arguments: TransportUnderTest.httpbin)
    func concurrent(_ transport: TransportUnderTest) async throws {
        // With the retry policy an app would have: what this checks is that each send gets its own answer
        // once and leaves the table. A transient failure of the machine (seen once in CI's ThreadSanitizer
        // run over AsyncHTTPClient: 1 of 100 sends failed) is retried, and printed, not hidden; more than
        // three fail the test.
        let logger = InMemoryLogger()
        let pool = transport.pool(
            .init(logger: logger, requestTimeout: 15, interceptors: [RetryPolicy(baseDelay: 0.05, methods: [.get])]))
        let outcomes = await withTaskGroup(of: (Int, String?).self) { group in
            for index in 0..<100 {
                group.addTask {
                    do {
                        let echo = try await pool.send(
                            HTTPBinEndpoint.get(["i": index]), parser: DecodableParser<Echo>())
                        return (index, echo.args?["i"] == .one(String(index)) ? nil : "echoed \(echo.args ?? [:])")
                    } catch {
                        return (index, "\(error)")
                    }
                }
            }
            return await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
        }
        let failures = outcomes.compactMap { index, failure in failure.map { "\(index): \($0)" } }
        #expect(outcomes.count == 100)
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        #expect(pool.activeTasks.isEmpty)
        let retried = logger.events(.retrying).map {
            "\($0.taskID): \($0.error.map { "\($0)" } ?? "status \($0.statusCode ?? 0)")"
        }
        if !retried.isEmpty { print("concurrent sends over \(transport.name) retried: \(retried)") }
        #expect(retried.count <= 3, "\(retried)")
    }
}
