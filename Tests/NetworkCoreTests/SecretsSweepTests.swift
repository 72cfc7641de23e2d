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
}
