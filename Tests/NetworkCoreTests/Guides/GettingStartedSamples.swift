// swift-format-ignore-file
// The samples are shown in a guide as written here (GuideSamplesTests), so they keep its layout.
import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The samples of Docs/GettingStarted.md, each in the context the page gives it (compiled, never run: they
/// name servers that do not answer here). `GuideSamplesTests` checks that the page shows exactly the lines
/// between the markers, in this order.
enum GettingStartedSamples {
    // What the page's samples assume: the models a page of movies decodes into, a credential.
    struct MoviePage: Decodable { let page: Int }
    struct Movie: Decodable { let title: String }
    struct Token: Sendable { let value: String }
    struct TokenAuthenticator: Authenticator {
        func apply(_ credential: Token, to request: inout URLRequest) {
            request.setValue("Bearer \(credential.value)", forHTTPHeaderField: "Authorization")
        }
        func isRequest(_ request: URLRequest, authenticatedWith credential: Token) -> Bool {
            request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.value)"
        }
        func refresh(_ credential: Token?) async throws -> Token { Token(value: "renewed") }
        func isExpired(_ credential: Token) -> Bool { false }
    }

    // GUIDE-BEGIN
    enum Movies: Endpoint {
        case nowPlaying(page: Int, language: String?)
        case rate(id: Int, value: Double)

        var baseURL: String { "https://api.themoviedb.org/3" }
        var path: String {
            switch self {
            case .nowPlaying: "movie/now_playing"
            case .rate(let id, _): "movie/\(id)/rating"
            }
        }
        var method: HTTPMethod {
            switch self {
            case .nowPlaying: .get
            case .rate: .post
            }
        }
        var task: HTTPTask {
            switch self {
            case .nowPlaying(let page, let language): .urlParameters(["page": page, "language": language])
            case .rate(_, let value): .bodyParameters(["value": value])
            }
        }
    }
    // GUIDE-END

    static func prepare(key: String, token: String) -> some Endpoint {
        // GUIDE-BEGIN
        let prepared = Movies.nowPlaying(page: 1, language: nil)
            .with(baseURL: "http://127.0.0.1:8080/3")
            .addingQuery(["api_key": key])
            .addingHeaders(["Authorization": "Bearer \(token)"])
        // GUIDE-END
        return prepared
    }

    static func send() async throws {
        // GUIDE-BEGIN
        let pool = TaskPool(configuration: .init(
            transport: URLSessionTransport(),      // the default
            logger: ConsoleLogger(),               // one line per event, to stderr
            duplicatePolicy: .join,                // the default
            requestTimeout: 30
        ))

        let response = try await pool.send(Movies.nowPlaying(page: 1, language: nil), id: "now-playing")
        let page = try await pool.send(Movies.nowPlaying(page: 1, language: nil), parser: DecodableParser<MoviePage>())
        let movies = try await pool.send(Movies.nowPlaying(page: 1, language: nil), parser: DecodableParser<[Movie]>(keyPath: "results"))
        // GUIDE-END
        print(response.statusCode, page.page, movies.count)
    }

    static func complete(pool: TaskPool, render: @escaping @Sendable (Result<MoviePage, NetworkError>) -> Void) {
        // GUIDE-BEGIN
        pool.send(Movies.nowPlaying(page: 1, language: nil), parser: DecodableParser<MoviePage>(), id: "now-playing") { result in
            DispatchQueue.main.async { render(result) }
        }
        // GUIDE-END
    }

    static func track(pool: TaskPool) {
        // GUIDE-BEGIN
        let state = pool.task(id: "now-playing")?.state   // .running, O(1)
        let running = pool.activeTasks                    // running tasks, oldest first
        print(pool.debugDescription)                      // the same as a table; pool.activeTaskSnapshots as data
        pool.cancel(id: "now-playing")                    // O(1); its callers get .cancelled at once
        pool.cancelAll()
        // GUIDE-END
        print(state as Any, running.count)
    }

    static func retries(myAuthenticator: TokenAuthenticator, saved: Token) -> TaskPool {
        // GUIDE-BEGIN
        let pool = TaskPool(configuration: .init(
            resourceTimeout: 30,                                   // the whole task, retries included
            interceptors: [AuthenticationInterceptor(authenticator: myAuthenticator, credential: saved),
                           RetryPolicy()]))                        // backoff with jitter, Retry-After
        // GUIDE-END
        return pool
    }

    static func statusReader() -> some Endpoint {
        // GUIDE-BEGIN
        let tmdbStyle = JSONStatusReader(codeKeys: ["status_code"], messageKeys: ["status_message", "errors"], successKey: "success")
        let endpoint = Movies.nowPlaying(page: 1, language: nil).reading(status: tmdbStyle)
        // GUIDE-END
        return endpoint
    }

    static func untrustedServer() -> TaskPool {
        // GUIDE-BEGIN
        let untrusted = TaskPool(configuration: .init(
            transport: URLSessionTransport(configuration: .ephemeral), resourceTimeout: 10,
            maximumResponseBytes: 256 << 10))
        // GUIDE-END
        return untrusted
    }

    // GUIDE-BEGIN
    struct CountParser: JSONParser {
        func parse(_ data: Data) throws -> Int { Int(String(decoding: data, as: UTF8.self)) ?? 0 }
    }
    // GUIDE-END

    static func stubs() -> [TaskPool] {
        // GUIDE-BEGIN
        let pool = TaskPool(configuration: .init(transport: StubTransport { request, context in
            .json(#"{"page": 1, "results": []}"#)
        }))
        let offline = TaskPool(configuration: .init(transport: StubTransport.sampleData(delay: 0.1)))   // from Endpoint.sampleData
        let down = TaskPool(configuration: .init(transport: StubTransport.failing(with: URLError(.notConnectedToInternet))))
        // GUIDE-END
        return [pool, offline, down]
    }
}
