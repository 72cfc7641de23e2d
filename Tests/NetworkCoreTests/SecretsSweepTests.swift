import Foundation
import NetworkCoreTesting
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One sweep over every surface NetworkCore writes to, after real requests over URLSession that carry an
/// API key in the query, a bearer token, a cookie, and a password in a form body, to a server that echoes
/// them back when it fails: none of the four may appear anywhere.
@Suite("Secrets: no credential on any surface")
struct SecretsSweepTests {
    static let apiKey = "KEY-sweep-7f3a"
    static let bearer = "TOKEN-sweep-9b2c"
    static let cookie = "COOKIE-sweep-4d1e"
    static let password = "PASS-sweep-6a8f"
    static let secrets = [apiKey, bearer, cookie, password]

    struct Call: Endpoint {
        let baseURL: String
        let path: String
        let method: HTTPMethod
        var task: HTTPTask {
            method == .post
                ? .parameters(
                    url: ["api_key": SecretsSweepTests.apiKey],
                    body: ["username": "ann", "password": SecretsSweepTests.password], bodyEncoder: FormBodyEncoder())
                : .urlParameters(["api_key": SecretsSweepTests.apiKey, "page": 1])
        }
        var headers: [String: String] {
            ["Authorization": "Bearer \(SecretsSweepTests.bearer)", "Cookie": "session=\(SecretsSweepTests.cookie)"]
        }
    }

    /// Text written by a logger, from any thread.
    final class Written: @unchecked Sendable {  // `lock` guards `text`.
        private let lock = NSLock()
        private var text = ""
        func add(_ line: String) {
            lock.lock()
            text += line + "\n"
            lock.unlock()
        }
        var all: String {
            lock.lock()
            defer { lock.unlock() }
            return text
        }
    }

    @Test("logs at every level, events, the task table, cURL, HAR, errors, the inspector and cache files")
    func sweep() async throws {
        let console = Written()
        let table = Written()
        let memory = InMemoryLogger()
        let recorder = HARRecorder()
        let inspector = PoolInspector()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-sweep-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = try DiskCacheStore(directory: folder)
        let box = PoolBox()
        let server = try MockServer { request in
            // The task table while the request is in flight.
            if let pool = box.pool { table.add(pool.debugDescription) }
            guard request.httpMethod == "POST" else {
                return MockResponse(
                    headers: ["Content-Type": "application/json", "Cache-Control": "max-age=600"],
                    body: Data(#"{"page": 1, "results": []}"#.utf8))
            }
            // A failure that echoes everything it was sent, as a debugging server might.
            let echo: [String: Any] = [
                "message": "denied", "url": request.url?.absoluteString ?? "",
                "headers": request.allHTTPHeaderFields ?? [:],
                "form": String(decoding: request.httpBody ?? Data(), as: UTF8.self),
            ]
            return MockResponse(
                statusCode: 500, headers: ["Content-Type": "application/json"],
                body: (try? JSONSerialization.data(withJSONObject: echo)) ?? Data())
        }
        defer { server.stop() }
        let pool = TaskPool(
            configuration: .init(
                transport: RecordingTransport(URLSessionTransport(configuration: .ephemeral), recorder: recorder),
                logger: CombinedLogger([ConsoleLogger(minimumLevel: .debug, write: console.add), memory]),
                cache: cache, inspector: inspector))
        box.pool = pool

        let get = Call(baseURL: server.baseURL, path: "items", method: .get)
        _ = try await pool.send(get, id: "get")
        _ = try await pool.send(get, id: "get again")  // from the cache
        var errorTexts: [String] = []
        do {
            _ = try await pool.send(Call(baseURL: server.baseURL, path: "login", method: .post), id: "post")
            Issue.record("the 500 was accepted")
        } catch {
            var dumped = ""
            dump(error, to: &dumped)
            errorTexts = [error.description, error.localizedDescription, dumped, String(describing: error.serverError)]
        }

        let encoder = JSONEncoder()
        let cacheFiles = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        #expect(!cacheFiles.isEmpty)
        let surfaces: [(String, String)] =
            [
                ("console log", console.all), ("task table", table.all),
                ("events", memory.events.map { "\($0.url) \($0.error.map(String.init(describing:)) ?? "")" }.joined()),
                ("cURL", try get.urlRequest(defaultHeaders: [:]).cURLDescription()),
                ("HAR", String(decoding: try recorder.data(), as: UTF8.self)),
                ("inspection", String(decoding: try encoder.encode(inspector.inspection), as: UTF8.self)),
                ("inspector details", String(decoding: try encoder.encode(inspector.task(id: "post")), as: UTF8.self)),
                ("inspector HAR", String(decoding: try encoder.encode(inspector.har), as: UTF8.self)),
            ] + errorTexts.map { ("error", $0) }
            + (try cacheFiles.map { ("cache file", String(decoding: try Data(contentsOf: $0), as: UTF8.self)) })
        for (surface, text) in surfaces {
            #expect(!text.isEmpty, "\(surface) is empty")
            for secret in Self.secrets {
                #expect(!text.contains(secret), "\(surface) shows \(secret)")
            }
        }
        // The surfaces did see the requests: what they hide, they show as hidden.
        #expect(table.all.contains("api_key=<redacted>"))
        #expect(console.all.contains("api_key=<redacted>"))
        #expect(memory.events.count == 6)
        #expect(inspector.task(id: "post")?.details?.requestBody == "password=<redacted>&username=ann")
    }

    /// A redirect chain whose `Location`s carry a key, a token in the fragment and credentials in user
    /// information, whose answers carry more URLs with secrets (`Link`, `Refresh`, `Content-Location`) and echo
    /// the request's bearer token in headers of their own; the request sends a `Referer` with secrets too.
    enum Chain {
        static let bearer = "TOKEN-chain-1f0e"
        static let startKey = "KEY-chain-start-2a1b"
        static let hopKey = "KEY-chain-hop-3c2d"
        static let fragmentToken = "TOKEN-chain-fragment-4e3f"
        static let linkSession = "SESSION-chain-link-5a4b"
        static let linkPassword = "PASS-chain-link-6c5d"
        static let refreshToken = "TOKEN-chain-refresh-7e6f"
        static let userInfoPassword = "PASS-chain-userinfo-8a7b"
        static let finalKey = "KEY-chain-final-9c8d"
        static let contentLocationKey = "KEY-chain-content-0e9f"
        static let refererSession = "SESSION-chain-referer-1b0a"
        static let refererToken = "TOKEN-chain-referer-2d1c"
        static let all = [
            bearer, startKey, hopKey, fragmentToken, linkSession, linkPassword, refreshToken, userInfoPassword,
            finalKey, contentLocationKey, refererSession, refererToken,
        ]

        struct Start: Endpoint {
            let baseURL: String
            var path: String { "start" }
            var method: HTTPMethod { .get }
            var task: HTTPTask { .urlParameters(["api_key": Chain.startKey]) }
            var headers: [String: String] {
                [
                    "Authorization": "Bearer \(Chain.bearer)",
                    "Referer":
                        "https://app.example/page?session_id=\(Chain.refererSession)#access_token=\(Chain.refererToken)",
                ]
            }
        }

        /// The server's answers: two redirects, then a failure.
        static func answer(_ request: RecordedRequest, base: String) -> MockResponse {
            let port = base.split(separator: ":").last.map(String.init) ?? ""
            switch request.path {
            case "/start":
                return MockResponse(
                    statusCode: 302,
                    headers: [
                        "Location": "/hop?api_key=\(hopKey)&page=1#access_token=\(fragmentToken)",
                        "Link":
                            "<http://ann:\(linkPassword)@127.0.0.1:\(port)/x?session_id=\(linkSession)>; rel=\"next\"",
                        "Refresh": "0; url=/r?token=\(refreshToken)",
                        "X-Echo": "Bearer \(bearer)",
                    ])
            case "/hop":
                return MockResponse(
                    statusCode: 307,
                    headers: ["Location": "http://ann:\(userInfoPassword)@127.0.0.1:\(port)/final?key=\(finalKey)"])
            default:
                return MockResponse(
                    statusCode: 500,
                    headers: [
                        "Content-Type": "application/json", "Content-Location": "/final?api_key=\(contentLocationKey)",
                        "X-Request-Token": bearer,
                    ],
                    body: Data(#"{"status_message": "denied"}"#.utf8))
            }
        }
    }

    @Test("a redirect chain with secrets in its Locations and headers: none on any surface")
    func redirectChain() async throws {
        let console = Written()
        let memory = InMemoryLogger()
        let recorder = HARRecorder()
        let inspector = PoolInspector()
        let base = Locked("")
        let server = try MockServer { request in Chain.answer(request, base: base.withLock { $0 }) }
        defer { server.stop() }
        base.withLock { $0 = server.baseURL }
        let pool = TaskPool(
            configuration: .init(
                transport: RecordingTransport(URLSessionTransport(configuration: .ephemeral), recorder: recorder),
                logger: CombinedLogger([ConsoleLogger(minimumLevel: .debug, write: console.add), memory]),
                inspector: inspector))
        let start = Chain.Start(baseURL: server.baseURL)
        let error = await #expect(throws: NetworkError.self) { try await pool.send(start, id: "chain") }
        let failure = try #require(error)
        #expect(failure.statusCode == 500)
        var dumped = ""
        dump(failure, to: &dumped)
        let finalRequest = try #require(failure.response?.request)
        let entries = recorder.har.log.entries
        #expect(entries.map(\.response.status) == [302, 307, 500])

        let encoder = JSONEncoder()
        let surfaces: [(String, String)] = [
            ("console log", console.all),
            (
                "events",
                memory.events.map {
                    "\($0.url) \($0.redirectURL ?? "") \($0.error.map(String.init(describing:)) ?? "")"
                }.joined()
            ),
            ("cURL", try start.urlRequest(defaultHeaders: [:]).cURLDescription()),
            ("cURL of the last hop", finalRequest.cURLDescription()),
            ("HAR", String(decoding: try recorder.data(), as: UTF8.self)),
            ("inspection", String(decoding: try encoder.encode(inspector.inspection), as: UTF8.self)),
            ("inspector details", String(decoding: try encoder.encode(inspector.task(id: "chain")), as: UTF8.self)),
            ("inspector HAR", String(decoding: try encoder.encode(inspector.har), as: UTF8.self)),
            ("error", failure.description), ("error", failure.localizedDescription), ("error dump", dumped),
            ("server error", String(describing: failure.serverError)),
        ]
        for (surface, text) in surfaces {
            #expect(!text.isEmpty, "\(surface) is empty")
            for secret in Chain.all {
                #expect(!text.contains(secret), "\(surface) shows \(secret)")
            }
        }
        // What the surfaces hide, they show as hidden, in place.
        #expect(entries[0].response.redirectURL == "/hop?api_key=<redacted>&page=1#access_token=<redacted>")
        let firstHeaders = Dictionary(uniqueKeysWithValues: entries[0].response.headers.map { ($0.name, $0.value) })
        #expect(
            firstHeaders["Link"]
                == "<http://ann:<redacted>@127.0.0.1:\(server.port)/x?session_id=<redacted>>; rel=\"next\"")
        #expect(firstHeaders["Refresh"] == "0; url=/r?token=<redacted>")
        #expect(firstHeaders["X-Echo"] == "<redacted>")  // the whole `Authorization` value, as the request sent it
        #expect(
            entries[1].response.redirectURL == "http://ann:<redacted>@127.0.0.1:\(server.port)/final?key=<redacted>")
        let redirects = memory.events.filter { $0.kind == .redirected }.compactMap(\.redirectURL)
        #expect(redirects.count == 2)
        #expect(redirects.allSatisfy { $0.contains("<redacted>") })
        let details = try #require(inspector.task(id: "chain")?.details)
        #expect(details.responseHeaders.first { $0.name == "X-Request-Token" }?.value == "<redacted>")
        #expect(
            details.responseHeaders.first { $0.name == "Content-Location" }?.value == "/final?api_key=<redacted>")
        #expect(
            details.requestHeaders.first { $0.name == "Referer" }?.value
                == "https://app.example/page?session_id=<redacted>#access_token=<redacted>")
    }
}
