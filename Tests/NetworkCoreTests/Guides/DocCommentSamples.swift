// swift-format-ignore-file
// The samples of NetworkCore's and NetworkCoreTesting's documentation comments (`///`), each in the context its
// comment takes as given, compiled with the tests and never run. `GuideSamplesTests` checks that each source
// file shows exactly the lines between its `// DOC <path>-BEGIN` and `-END` markers.
import Foundation
import NetworkCore
import NetworkCoreTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the samples take as given.
enum DocCommentContext {
    struct MoviePage: Decodable, Sendable { let page: Int }
    struct Movie: Decodable, Sendable { let title: String }
    struct User: Decodable, Sendable { let name: String }
    struct Path: Endpoint {
        let path: String
        var baseURL: String { "https://api.example.com" }
    }
    enum Uploads: Endpoint {
        case video(URL)
        var baseURL: String { "https://api.example.com" }
        var path: String { "videos" }
        var method: HTTPMethod { .post }
        var task: HTTPTask {
            switch self {
            case .video(let file): .file(file, contentType: "video/mp4")
            }
        }
    }
    enum Images: Endpoint {
        case poster(path: String)
        var baseURL: String { "https://image.tmdb.org/t/p/w500" }
        var path: String {
            switch self {
            case .poster(let path): path
            }
        }
    }
    enum Logs: Endpoint {
        case tail
        var baseURL: String { "https://logs.example.com" }
        var path: String { "tail" }
    }
    enum Chat: Endpoint {
        case room(String)
        var baseURL: String { "wss://chat.example.com" }
        var path: String {
            switch self {
            case .room(let name): "rooms/\(name)"
            }
        }
    }
    enum Feed: Endpoint {
        case live
        var baseURL: String { "https://prices.example.com" }
        var path: String { "live" }
    }
    struct MyEndpoint: Endpoint {
        let baseURL: String
        var path: String { "movies" }
    }
    final class ProgressBar: Sendable {
        func show(_ fraction: Double) {}
    }
    static func show(_ result: Result<Response, NetworkError>) {}
    static func show(_ page: MoviePage) {}
}

// Sources/NetworkCore/Caching/CachePolicy.swift
extension DocCommentContext {
    static func cachePolicy(pool: TaskPool) async throws {
        // DOC Sources/NetworkCore/Caching/CachePolicy.swift-BEGIN
        let page = try await pool.send(Movies.nowPlaying(page: 1).caching(.networkFirst))
        print(page.source)   // .network, or .stale when the server could not be reached
        // DOC Sources/NetworkCore/Caching/CachePolicy.swift-END
    }
}

// Sources/NetworkCore/Connectivity/Connectivity.swift
extension DocCommentContext {
    static func connectivity() async {
        // DOC Sources/NetworkCore/Connectivity/Connectivity.swift-BEGIN
        let network = SystemConnectivity()
        let pool = TaskPool(configuration: .init(connectivity: network))
        for await connectivity in network.changes {
            print("network:", connectivity, "waiting:", pool.isWaitingForNetwork)
        }
        // DOC Sources/NetworkCore/Connectivity/Connectivity.swift-END
    }
}

// Sources/NetworkCore/Caching/DiskCacheStore.swift
extension DocCommentContext {
    static func diskCacheStore() throws -> TaskPool {
        // DOC Sources/NetworkCore/Caching/DiskCacheStore.swift-BEGIN
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask)[0]
        let store = try DiskCacheStore(directory: caches.appendingPathComponent("MovieDB"), byteLimit: 50 << 20)
        let pool = TaskPool(configuration: .init(cache: store))
        // DOC Sources/NetworkCore/Caching/DiskCacheStore.swift-END
        return pool
    }
}

// Sources/NetworkCore/Caching/MemoryCacheStore.swift
extension DocCommentContext {
    static func memoryCacheStore() -> TaskPool {
        // DOC Sources/NetworkCore/Caching/MemoryCacheStore.swift-BEGIN
        let pool = TaskPool(configuration: .init(cache: MemoryCacheStore(byteLimit: 10 << 20)))
        // DOC Sources/NetworkCore/Caching/MemoryCacheStore.swift-END
        return pool
    }
}

// Sources/NetworkCore/Encoding/MultipartForm.swift
extension DocCommentContext {
    struct VideoUpload: Endpoint {
        let png: Data
        let videoURL: URL
        var baseURL: String { "https://api.example.com" }
        var path: String { "videos" }
        var method: HTTPMethod { .post }
        // DOC Sources/NetworkCore/Encoding/MultipartForm.swift-BEGIN
        var task: HTTPTask {
            .multipart([
                .text("title", "Fight Club"),
                .data("thumbnail", png, fileName: "thumb.png", contentType: "image/png"),
                .file("video", videoURL, contentType: "video/mp4"),
            ])
        }
        // DOC Sources/NetworkCore/Encoding/MultipartForm.swift-END
    }
}

// Sources/NetworkCore/Encoding/ParameterValue.swift
extension DocCommentContext {
    static func parameterValues(page: Int, year: Int?) -> Parameters {
        // DOC Sources/NetworkCore/Encoding/ParameterValue.swift-BEGIN
        let parameters: Parameters = ["query": "star wars", "page": page, "year": year /* Int? */]
        // DOC Sources/NetworkCore/Encoding/ParameterValue.swift-END
        return parameters
    }
}

// Sources/NetworkCore/Endpoint/Endpoint.swift
enum EndpointDocSample {
    // DOC Sources/NetworkCore/Endpoint/Endpoint.swift-BEGIN
    enum Movies: Endpoint {
        case nowPlaying(page: Int)
        case details(id: Int)

        var baseURL: String { "https://api.themoviedb.org/3" }
        var path: String {
            switch self {
            case .nowPlaying: "movie/now_playing"
            case .details(let id): "movie/\(id)"
            }
        }
        var task: HTTPTask {
            switch self {
            case .nowPlaying(let page): .urlParameters(["page": page])
            case .details: .plain
            }
        }
    }
    // DOC Sources/NetworkCore/Endpoint/Endpoint.swift-END
}

// Sources/NetworkCore/Endpoint/HTTPMethod.swift
extension DocCommentContext {
    static func httpMethods() -> [HTTPMethod] {
        // DOC Sources/NetworkCore/Endpoint/HTTPMethod.swift-BEGIN
        let method: HTTPMethod = .get
        let custom = HTTPMethod(rawValue: "PURGE")
        // DOC Sources/NetworkCore/Endpoint/HTTPMethod.swift-END
        return [method, custom]
    }
}

// Sources/NetworkCore/Endpoint/HTTPTask.swift
extension DocCommentContext {
    enum Calls: Endpoint {
        case nowPlaying(page: Int)
        case login(String, String)
        case upload(Data)
        var baseURL: String { "https://api.example.com" }
        var path: String { "calls" }
        // DOC Sources/NetworkCore/Endpoint/HTTPTask.swift-BEGIN
        var task: HTTPTask {
            switch self {
            case .nowPlaying(let page): .urlParameters(["page": page])
            case .login(let user, let password): .bodyParameters(["username": user, "password": password])
            case .upload(let data): .data(data, contentType: "image/png")
            }
        }
        // DOC Sources/NetworkCore/Endpoint/HTTPTask.swift-END
    }
}

// Sources/NetworkCore/Endpoint/ModifiedEndpoint.swift
extension DocCommentContext {
    static func modifiedEndpoint(key: String) -> some Endpoint {
        // DOC Sources/NetworkCore/Endpoint/ModifiedEndpoint.swift-BEGIN
        let endpoint = Movies.nowPlaying(page: 1)
            .with(baseURL: "http://127.0.0.1:8080/3")
            .addingQuery(["api_key": key])
            .addingHeaders(["Accept-Language": "de"])
        // DOC Sources/NetworkCore/Endpoint/ModifiedEndpoint.swift-END
        return endpoint
    }
}

// Sources/NetworkCore/Interceptors/Authenticator.swift
enum AuthenticatorDocSample {
    struct Token: Sendable {
        let value: String
        let expiresAt: Date
    }
    protocol TokenService: Sendable {
        func refresh(_ token: Token?) async throws -> Token
    }
    // DOC Sources/NetworkCore/Interceptors/Authenticator.swift-BEGIN
    struct BearerAuthenticator: Authenticator {
        let tokens: TokenService
        func apply(_ credential: Token, to request: inout URLRequest) {
            request.setValue("Bearer \(credential.value)", forHTTPHeaderField: "Authorization")
        }
        func isRequest(_ request: URLRequest, authenticatedWith credential: Token) -> Bool {
            request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.value)"
        }
        func refresh(_ credential: Token?) async throws -> Token { try await tokens.refresh(credential) }
        func isExpired(_ credential: Token) -> Bool { credential.expiresAt <= Date() }
    }
    // DOC Sources/NetworkCore/Interceptors/Authenticator.swift-END
}

// Sources/NetworkCore/Interceptors/AuthenticationInterceptor.swift
extension AuthenticatorDocSample {
    static func interceptor(tokens: any TokenService, saved: Token?) -> TaskPool {
        // DOC Sources/NetworkCore/Interceptors/AuthenticationInterceptor.swift-BEGIN
        let auth = AuthenticationInterceptor(authenticator: BearerAuthenticator(tokens: tokens), credential: saved)
        let pool = TaskPool(configuration: .init(interceptors: [auth, RetryPolicy()]))
        // DOC Sources/NetworkCore/Interceptors/AuthenticationInterceptor.swift-END
        return pool
    }
}

// Sources/NetworkCore/Interceptors/RequestInterceptor.swift
struct RequestInterceptorDocSample {
    // DOC Sources/NetworkCore/Interceptors/RequestInterceptor.swift-BEGIN
    struct Signer: RequestInterceptor {
        func adapt(_ request: URLRequest, context: AttemptContext) async throws -> URLRequest {
            var signed = request
            signed.setValue(signature(of: request), forHTTPHeaderField: "X-Signature")
            return signed
        }
    }
    let pool = TaskPool(configuration: .init(interceptors: [Signer(), RetryPolicy()]))
    // DOC Sources/NetworkCore/Interceptors/RequestInterceptor.swift-END
}

extension RequestInterceptorDocSample.Signer {
    func signature(of request: URLRequest) -> String { "signed" }
}

// Sources/NetworkCore/Interceptors/RetryPolicy.swift
extension DocCommentContext {
    static func retryPolicy() -> TaskPool {
        // DOC Sources/NetworkCore/Interceptors/RetryPolicy.swift-BEGIN
        let pool = TaskPool(configuration: .init(interceptors: [RetryPolicy(maximumAttempts: 4, baseDelay: 0.2)]))
        // DOC Sources/NetworkCore/Interceptors/RetryPolicy.swift-END
        return pool
    }
}

// Sources/NetworkCore/Logging/HARRecorder.swift
extension DocCommentContext {
    static func harRecorder() throws -> TaskPool {
        // DOC Sources/NetworkCore/Logging/HARRecorder.swift-BEGIN
        let recorder = HARRecorder()
        let pool = TaskPool(configuration: .init(transport: RecordingTransport(URLSessionTransport(), recorder: recorder)))
        // … send through the pool …
        try recorder.write(to: URL(fileURLWithPath: "session.har"))
        // DOC Sources/NetworkCore/Logging/HARRecorder.swift-END
        return pool
    }

    static func harRecorderWithCache() -> TaskPool {
        // DOC Sources/NetworkCore/Logging/HARRecorder.swift-BEGIN
        let recorder = HARRecorder()
        let pool = TaskPool(
            configuration: .init(
                transport: RecordingTransport(URLSessionTransport(), recorder: recorder), logger: recorder,
                cache: MemoryCacheStore()))
        // DOC Sources/NetworkCore/Logging/HARRecorder.swift-END
        return pool
    }
}

// Sources/NetworkCore/Logging/InMemoryLogger.swift
extension DocCommentContext {
    static func inMemoryLogger() -> TaskPool {
        // DOC Sources/NetworkCore/Logging/InMemoryLogger.swift-BEGIN
        let logger = InMemoryLogger()
        let pool = TaskPool(configuration: .init(logger: logger))
        // … send through the pool …
        #expect(logger.events(.retrying).count == 2)
        // DOC Sources/NetworkCore/Logging/InMemoryLogger.swift-END
        return pool
    }
}

// Sources/NetworkCore/Logging/InspectedTask.swift
extension DocCommentContext {
    static func inspectedTasks(inspector: PoolInspector) {
        // DOC Sources/NetworkCore/Logging/InspectedTask.swift-BEGIN
        for task in inspector.inspection.recent where task.state == .failed {
            print(task.id, task.error ?? "", task.timings.total ?? 0)
        }
        // DOC Sources/NetworkCore/Logging/InspectedTask.swift-END
    }
}

// Sources/NetworkCore/Logging/NetworkLogger.swift
extension DocCommentContext {
    static func combinedLogger() -> TaskPool {
        // DOC Sources/NetworkCore/Logging/NetworkLogger.swift-BEGIN
        let logger = CombinedLogger([ConsoleLogger(minimumLevel: .warning), InMemoryLogger()])
        let pool = TaskPool(configuration: .init(logger: logger))
        // DOC Sources/NetworkCore/Logging/NetworkLogger.swift-END
        return pool
    }
}

// Sources/NetworkCore/Logging/PoolInspector.swift
extension DocCommentContext {
    static func poolInspector() -> TaskPool {
        // DOC Sources/NetworkCore/Logging/PoolInspector.swift-BEGIN
        let inspector = PoolInspector(historyLimit: 200)
        let pool = TaskPool(configuration: .init(inspector: inspector))
        // … send through the pool …
        for task in inspector.inspection.active { print(task.id, task.phase ?? "", task.elapsed) }
        if let failed = inspector.inspection.recent.first(where: { $0.state == .failed }) {
            print(inspector.task(id: failed.id)?.details?.cURL ?? "")
        }
        // DOC Sources/NetworkCore/Logging/PoolInspector.swift-END
        return pool
    }
}

// Sources/NetworkCore/Logging/Redactor.swift
extension DocCommentContext {
    static func redactedURL() -> String {
        // DOC Sources/NetworkCore/Logging/Redactor.swift-BEGIN
        let shown = Redactor.default.redact("https://api.example.com/a?api_key=abc&page=1")
        // "https://api.example.com/a?api_key=<redacted>&page=1"
        // DOC Sources/NetworkCore/Logging/Redactor.swift-END
        return shown
    }

    static func redactedHeader() -> String {
        // DOC Sources/NetworkCore/Logging/Redactor.swift-BEGIN
        let shown = Redactor.default.redact(headerValue: "/next?api_key=abc#access_token=xyz", named: "Location")
        // "/next?api_key=<redacted>#access_token=<redacted>"
        // DOC Sources/NetworkCore/Logging/Redactor.swift-END
        return shown
    }
}

// Sources/NetworkCore/Parsing/DecodableParser.swift
extension DocCommentContext {
    static func decodableParsers(myDecoder: JSONDecoder) {
        // DOC Sources/NetworkCore/Parsing/DecodableParser.swift-BEGIN
        let page = DecodableParser<MoviePage>()                     // the whole body
        let movies = DecodableParser<[Movie]>(keyPath: "results")   // just the "results" array
        let user = DecodableParser<User>(keyPath: "data.user", decoder: myDecoder)
        // DOC Sources/NetworkCore/Parsing/DecodableParser.swift-END
        _ = (page, movies, user)
    }
}

// Sources/NetworkCore/Parsing/JSONParser.swift
enum JSONParserDocSample {
    // DOC Sources/NetworkCore/Parsing/JSONParser.swift-BEGIN
    struct LineCountParser: JSONParser {
        func parse(_ data: Data) throws -> Int {
            String(decoding: data, as: UTF8.self).split(separator: "\n").count
        }
    }
    // DOC Sources/NetworkCore/Parsing/JSONParser.swift-END
}

// Sources/NetworkCore/Pool/DataTask.swift
extension DocCommentContext {
    static func progressUpdates(of task: DataTask, bar: ProgressBar) async {
        // DOC Sources/NetworkCore/Pool/DataTask.swift-BEGIN
        for await progress in task.progressUpdates { bar.show(progress.fractionCompleted ?? 0) }
        // DOC Sources/NetworkCore/Pool/DataTask.swift-END
    }
}

// Sources/NetworkCore/Pool/TaskPool+Completion.swift
extension DocCommentContext {
    static func completion(pool: TaskPool) {
        // DOC Sources/NetworkCore/Pool/TaskPool+Completion.swift-BEGIN
        pool.send(Movies.nowPlaying(page: 1), id: "now-playing") { result in
            DispatchQueue.main.async { show(result) }
        }
        // DOC Sources/NetworkCore/Pool/TaskPool+Completion.swift-END
    }
}

// Sources/NetworkCore/Pool/TaskPool.swift
extension DocCommentContext {
    static func taskPool() async throws -> MoviePage {
        // DOC Sources/NetworkCore/Pool/TaskPool.swift-BEGIN
        let pool = TaskPool()
        let page = try await pool.send(Movies.nowPlaying(page: 1), parser: DecodableParser<MoviePage>(), id: "now-playing")
        pool.cancel(id: "now-playing")     // from anywhere, e.g. when a screen goes away
        print(pool.activeTasks)            // what is in flight, oldest first
        // DOC Sources/NetworkCore/Pool/TaskPool.swift-END
        return page
    }

    static func upload(pool: TaskPool, file: URL) async throws {
        // DOC Sources/NetworkCore/Pool/TaskPool.swift-BEGIN
        try await pool.upload(Uploads.video(file), id: "upload") { progress in
            print("sent", progress.bytesSent, "of", progress.bytesToSend ?? -1)
        }
        // DOC Sources/NetworkCore/Pool/TaskPool.swift-END
    }
}

// Sources/NetworkCore/Pool/TaskSnapshot.swift
extension DocCommentContext {
    static func snapshots(pool: TaskPool) {
        // DOC Sources/NetworkCore/Pool/TaskSnapshot.swift-BEGIN
        for row in pool.activeTaskSnapshots where row.elapsed > 5 { print("slow:", row.id, row.phase) }
        // DOC Sources/NetworkCore/Pool/TaskSnapshot.swift-END
    }
}

// Sources/NetworkCore/Pool/TransferProgress.swift
extension DocCommentContext {
    static func transferProgress(pool: TaskPool, endpoint: some Endpoint, file: URL) async throws {
        // DOC Sources/NetworkCore/Pool/TransferProgress.swift-BEGIN
        try await pool.download(endpoint, to: file, id: "poster") { progress in
            print(progress.fractionCompleted.map { "\(Int($0 * 100)) %" } ?? "\(progress.bytesReceived) bytes")
        }
        // Elsewhere, while it runs: `for await progress in pool.task(id: "poster")?.progressUpdates …`
        // DOC Sources/NetworkCore/Pool/TransferProgress.swift-END
    }
}

// Sources/NetworkCore/Response/NetworkError.swift
extension DocCommentContext {
    static func networkError(pool: TaskPool) async {
        // DOC Sources/NetworkCore/Response/NetworkError.swift-BEGIN
        do {
            let page = try await pool.send(Movies.nowPlaying(page: 1), parser: DecodableParser<MoviePage>())
            show(page)
        } catch where error.isCancelled {
            // the screen went away
        } catch {
            print(error.serverError?.message ?? error.localizedDescription)
        }
        // DOC Sources/NetworkCore/Response/NetworkError.swift-END
    }
}

// Sources/NetworkCore/Response/ServerStatus.swift
extension DocCommentContext {
    static func statusReader() -> JSONStatusReader {
        // DOC Sources/NetworkCore/Response/ServerStatus.swift-BEGIN
        let tmdb = JSONStatusReader(codeKeys: ["status_code"], messageKeys: ["status_message", "errors"], successKey: "success")
        // DOC Sources/NetworkCore/Response/ServerStatus.swift-END
        return tmdb
    }
}

// Sources/NetworkCore/Testing/HARReplayTransport.swift
extension DocCommentContext {
    static func harReplay(recording: URL) throws -> TaskPool {
        // DOC Sources/NetworkCore/Testing/HARReplayTransport.swift-BEGIN
        let pool = TaskPool(configuration: .init(transport: try HARReplayTransport(contentsOf: recording)))
        // DOC Sources/NetworkCore/Testing/HARReplayTransport.swift-END
        return pool
    }
}

// Sources/NetworkCore/Testing/StubTransport.swift
extension DocCommentContext {
    static func stubs() -> TaskPool {
        // DOC Sources/NetworkCore/Testing/StubTransport.swift-BEGIN
        let stub = StubTransport { request, _ in .json(#"{"id": 1}"#) }
        let offline = StubTransport.sampleData(delay: 0.05)
        let broken = StubTransport.failing(with: URLError(.notConnectedToInternet))
        let pool = TaskPool(configuration: .init(transport: stub))
        // DOC Sources/NetworkCore/Testing/StubTransport.swift-END
        _ = (offline, broken)
        return pool
    }
}

// Sources/NetworkCore/Pool/Kinds/Stream/ResponseStream.swift
extension DocCommentContext {
    static func responseStream(pool: TaskPool) async throws {
        // DOC Sources/NetworkCore/Pool/Kinds/Stream/ResponseStream.swift-BEGIN
        let stream = try await pool.stream(Logs.tail)
        for try await line in stream.lines { print(line) }
        // DOC Sources/NetworkCore/Pool/Kinds/Stream/ResponseStream.swift-END
    }
}

// Sources/NetworkCore/Pool/Kinds/Download/TaskPool+Download.swift
extension DocCommentContext {
    static func download(pool: TaskPool) async throws {
        // DOC Sources/NetworkCore/Pool/Kinds/Download/TaskPool+Download.swift-BEGIN
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("poster.jpg")
        try await pool.download(Images.poster(path: "/abc.jpg"), to: file) { progress in
            print(progress.bytesReceived, "of", progress.bytesExpected ?? -1)
        }
        // DOC Sources/NetworkCore/Pool/Kinds/Download/TaskPool+Download.swift-END
    }
}

// Sources/NetworkCore/Pool/Kinds/Stream/TaskPool+Stream.swift
extension DocCommentContext {
    static func serverSentEvents(pool: TaskPool) async throws {
        // DOC Sources/NetworkCore/Pool/Kinds/Stream/TaskPool+Stream.swift-BEGIN
        for try await event in try await pool.events(Feed.live) where event.event == "price" {
            print(event.data)
        }
        // DOC Sources/NetworkCore/Pool/Kinds/Stream/TaskPool+Stream.swift-END
    }
}

// Sources/NetworkCore/Transport/RedirectPolicy.swift
extension DocCommentContext {
    static func followRedirect(events: TransportEvents, request: URLRequest, hops: Int, location: URL?) {
        // DOC Sources/NetworkCore/Transport/RedirectPolicy.swift-BEGIN
        if let next = events.context.redirectPolicy.request(forHop: hops + 1, after: request, statusCode: 302, to: location) {
            events.redirected(statusCode: 302, to: next.url)
        }
        // DOC Sources/NetworkCore/Transport/RedirectPolicy.swift-END
    }
}

// Sources/NetworkCore/Transport/ResponseHead.swift
extension DocCommentContext {
    static func responseHead() -> String? {
        // DOC Sources/NetworkCore/Transport/ResponseHead.swift-BEGIN
        let head = ResponseHead(
            statusCode: 200, fields: [("Content-Type", "application/json"), ("Set-Cookie", "a=1"), ("set-cookie", "b=2")],
            url: URL(string: "https://example.com/movies"))
        let cookies = head.value(forHTTPHeaderField: "SET-COOKIE")  // "a=1, b=2"
        // DOC Sources/NetworkCore/Transport/ResponseHead.swift-END
        return cookies
    }
}

// Sources/NetworkCore/Transport/Transport.swift
enum TransportDocSample {
    // DOC Sources/NetworkCore/Transport/Transport.swift-BEGIN
    struct Canned: Transport {
        func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
            AsyncTransfer(reportingTo: events) { events in
                events.receive(head: HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: nil, headerFields: nil)!)
                events.receive(body: Data("{}".utf8))
            }
        }
    }
    // DOC Sources/NetworkCore/Transport/Transport.swift-END
}

// Sources/NetworkCore/Transport/TransportControl.swift
enum TransportControlDocSample {
    protocol MyClient: Sendable {
        func fetch(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
    }
    struct MyTransport: Transport {
        let myClient: any MyClient
        // DOC Sources/NetworkCore/Transport/TransportControl.swift-BEGIN
        func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
            AsyncTransfer(reportingTo: events) { events in
                let (bytes, response) = try await myClient.fetch(request)
                guard events.receive(head: response) else { return }
                events.receive(body: bytes)
            }
        }
        // DOC Sources/NetworkCore/Transport/TransportControl.swift-END
    }
}

// Sources/NetworkCore/Transport/URLSession/URLSessionTransport.swift
extension DocCommentContext {
    static func urlSessionTransport() -> TaskPool {
        // DOC Sources/NetworkCore/Transport/URLSession/URLSessionTransport.swift-BEGIN
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 16
        let pool = TaskPool(configuration: .init(transport: URLSessionTransport(configuration: configuration)))
        // DOC Sources/NetworkCore/Transport/URLSession/URLSessionTransport.swift-END
        return pool
    }
}

// Sources/NetworkCoreTesting/MockResponse.swift
extension DocCommentContext {
    static func mockResponses() -> [MockResponse] {
        // DOC Sources/NetworkCoreTesting/MockResponse.swift-BEGIN
        let page = MockResponse.json(#"{"page": 1, "results": []}"#)
        let missing = MockResponse.json(#"{"status_code": 34}"#, statusCode: 404)
        let cut = MockResponse.json(#"{"page": 1}"#).with(.cut(afterBodyBytes: 4))
        let refused = MockResponse.fault(.reset)
        // DOC Sources/NetworkCoreTesting/MockResponse.swift-END
        return [page, missing, cut, refused]
    }
}

// Sources/NetworkCoreTesting/MockServer.swift
extension DocCommentContext {
    static func mockServer() async throws {
        // DOC Sources/NetworkCoreTesting/MockServer.swift-BEGIN
        let server = try await MockServer.start()
        defer { server.stop() }
        server.enqueue(.json(#"{"page": 1, "results": []}"#))
        let pool = TaskPool()
        _ = try await pool.send(MyEndpoint(baseURL: server.baseURL))
        let request = try await server.takeRequest()
        #expect(request.matches(.get, "/movies"))
        // DOC Sources/NetworkCoreTesting/MockServer.swift-END
    }

    static func scopedMockServer() async throws {
        // DOC Sources/NetworkCoreTesting/MockServer.swift-BEGIN
        try await withMockServer { server in
            server.enqueue(.json("{}"))
            // … send requests to server.baseURL …
        }
        // DOC Sources/NetworkCoreTesting/MockServer.swift-END
    }
}

// Sources/NetworkCoreTesting/RecordedRequest.swift
extension DocCommentContext {
    static func recordedRequest(server: MockServer) async throws {
        // DOC Sources/NetworkCoreTesting/RecordedRequest.swift-BEGIN
        let request = try await server.takeRequest()
        #expect(request.matches(.get, "/3/movie/now_playing"))
        #expect(request.query["page"] == "1")
        #expect(request.hasHeader("Authorization", "Bearer token"))
        // DOC Sources/NetworkCoreTesting/RecordedRequest.swift-END
    }
}

// Sources/NetworkCore/Pool/Kinds/Socket/WebSocket.swift
extension DocCommentContext {
    static func webSocketReading(pool: TaskPool) async throws {
        // DOC Sources/NetworkCore/Pool/Kinds/Socket/WebSocket.swift-BEGIN
        let socket = try await pool.webSocket(Chat.room("swift"))
        try await socket.send("hello")
        for try await message in socket {
            if case .text(let text) = message { print(text) }
        }
        // DOC Sources/NetworkCore/Pool/Kinds/Socket/WebSocket.swift-END
    }
}

// Sources/NetworkCore/Pool/Kinds/Socket/TaskPool+WebSocket.swift
extension DocCommentContext {
    static func webSocketOpening(pool: TaskPool) async throws {
        // DOC Sources/NetworkCore/Pool/Kinds/Socket/TaskPool+WebSocket.swift-BEGIN
        let socket = try await pool.webSocket(Chat.room("swift"), id: "chat")
        try await socket.send("hello")
        pool.cancel(id: "chat")  // a close frame, 1001 going away
        // DOC Sources/NetworkCore/Pool/Kinds/Socket/TaskPool+WebSocket.swift-END
    }
}

// Sources/NetworkCore/Pool/Kinds/Socket/SocketActivity.swift
extension DocCommentContext {
    static func socketActivity(pool: TaskPool) {
        // DOC Sources/NetworkCore/Pool/Kinds/Socket/SocketActivity.swift-BEGIN
        for row in pool.activeTaskSnapshots { if let socket = row.socket { print(row.id, socket.summary) } }
        // DOC Sources/NetworkCore/Pool/Kinds/Socket/SocketActivity.swift-END
    }
}

// Sources/NetworkCore/Pool/Kinds/Socket/WebSocketReconnection.swift
extension DocCommentContext {
    static func webSocketReconnection() {
        // DOC Sources/NetworkCore/Pool/Kinds/Socket/WebSocketReconnection.swift-BEGIN
        let options = WebSocketOptions(reconnection: WebSocketReconnection(maximumAttempts: 8, maximumDelay: 60))
        // DOC Sources/NetworkCore/Pool/Kinds/Socket/WebSocketReconnection.swift-END
        _ = options
    }
}

// Sources/NetworkCore/Transport/WebSocket/WebSocketCloseCode.swift
extension DocCommentContext {
    static func webSocketCloseCode(socket: WebSocket) async throws {
        // DOC Sources/NetworkCore/Transport/WebSocket/WebSocketCloseCode.swift-BEGIN
        await socket.close(.normalClosure, reason: "done")
        if socket.closeCode == .goingAway { print("the server is restarting") }
        // DOC Sources/NetworkCore/Transport/WebSocket/WebSocketCloseCode.swift-END
    }
}

// Sources/NetworkCore/Transport/WebSocket/WebSocketCompression.swift
extension DocCommentContext {
    static func webSocketCompression() {
        // DOC Sources/NetworkCore/Transport/WebSocket/WebSocketCompression.swift-BEGIN
        let options = WebSocketOptions(compression: WebSocketCompression(clientContextTakeover: false))
        // DOC Sources/NetworkCore/Transport/WebSocket/WebSocketCompression.swift-END
        _ = options
    }
}

// Sources/NetworkCore/Transport/WebSocket/WebSocketOptions.swift
extension DocCommentContext {
    static func webSocketOptions(pool: TaskPool) async throws {
        // DOC Sources/NetworkCore/Transport/WebSocket/WebSocketOptions.swift-BEGIN
        let socket = try await pool.webSocket(Chat.room("swift"), options: .init(subprotocols: ["chat.v2"], pingInterval: 15))
        print(socket.subprotocol ?? "no subprotocol")
        // DOC Sources/NetworkCore/Transport/WebSocket/WebSocketOptions.swift-END
    }
}

// Sources/NetworkCore/Transport/WebSocket/WebSocketError.swift
extension DocCommentContext {
    static func webSocketError(socket: WebSocket) async throws {
        // DOC Sources/NetworkCore/Transport/WebSocket/WebSocketError.swift-BEGIN
        do {
            for try await message in socket { print(message) }
        } catch NetworkError.transport(let error as WebSocketError) {
            print("the socket failed:", error)
        }
        // DOC Sources/NetworkCore/Transport/WebSocket/WebSocketError.swift-END
    }
}

// Sources/NetworkCore/Transport/Pinning/CertificatePins.swift
extension DocCommentContext {
    static func certificatePins(transport: any Transport) throws {
        // DOC Sources/NetworkCore/Transport/Pinning/CertificatePins.swift-BEGIN
        let pins = try CertificatePins([
            "api.example.com": ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "sha256/BAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQ="],
        ])
        let pool = TaskPool(configuration: .init(transport: transport, pins: pins))  // NIOTransport, say
        // DOC Sources/NetworkCore/Transport/Pinning/CertificatePins.swift-END
        _ = pool
    }
}
