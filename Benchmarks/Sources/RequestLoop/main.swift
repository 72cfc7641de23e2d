// Sends N requests, one after another or K at a time, to a server through one client and does nothing
// else: a program to count what a request costs in instructions with callgrind, a count that (unlike
// time) hardly depends on how busy the machine is: three runs agree to within 0.6%.
// `Benchmarks/instructions` runs it.
//
//   RequestLoop CLIENT URL COUNT [INFLIGHT]
//                                    URL: the small payload, or the page (a path ending in page.json)
//                                    CLIENT: raw, transport or networkCore; networkCoreInspected, the
//                                    pool with a PoolInspector and a page attached (every 500th request,
//                                    the view the inspector's server sends a page, built and encoded:
//                                    at 64 in flight about 5 views a second, where the server sends at
//                                    most 4); buildRaw or build to build
//                                    the raw client's or the endpoint's request without sending it;
//                                    stubPool or stubTask to send it to a StubTransport through a pool
//                                    or from a Swift task of its own (the pool suite's send→finish);
//                                    asyncHTTPClient, asyncHTTPClientTransport or networkCoreAsyncHTTPClient:
//                                    AsyncHTTPClient used directly, AsyncHTTPClientTransport without the
//                                    pool, and the pool over it, configured as the throughput suite's;
//                                    asyncHTTPClientDelegate: the client's delegate interface, as the
//                                    transport uses it (its events on one loop), with the least a caller
//                                    needs: the body collected, handed over at the end
//                                    INFLIGHT: how many at once (1, one after another, by default)
//
// (count at 1,200 − count at 200) / 1,000 = instructions per request, start-up and warm-up cancelled.
// `main` is synchronous and waits on a semaphore: valgrind 3.19 stops with an internal error when
// `main` is `async` (dispatch's main-queue loop).
import AsyncHTTPClient
import Dispatch
import Foundation
import NIOCore
import NIOHTTP1
import NetworkCore
import NetworkCoreAsyncHTTPClient
import NetworkCoreInspector

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The fields of the benchmark's small payload that every client decodes.
struct Item: Decodable, Sendable {
    let id: Int
    let name: String
}

/// Some fields of the benchmark's TMDB-like page (its `Page` decodes more), decoded alike by every client.
struct Listing: Decodable, Sendable {
    struct Movie: Decodable, Sendable {
        let id: Int
        let title: String
        let overview: String
        let voteAverage: Double

        enum CodingKeys: String, CodingKey {
            case id, title, overview
            case voteAverage = "vote_average"
        }
    }

    let page: Int
    let results: [Movie]
}

struct FileEndpoint: Endpoint {
    let baseURL: String
    let path: String
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 3 || arguments.count == 4, let count = Int(arguments[arguments.startIndex + 2]),
    let inflight = arguments.count == 4 ? Int(arguments[arguments.startIndex + 3]) : 1, inflight > 0,
    let url = URL(string: arguments[arguments.startIndex + 1])
else {
    FileHandle.standardError.write(
        Data(
            "usage: RequestLoop raw|transport|networkCore|buildRaw|build|stubPool|stubTask|asyncHTTPClient|asyncHTTPClientDelegate|asyncHTTPClientTransport|networkCoreAsyncHTTPClient URL COUNT [INFLIGHT]\n"
                .utf8))
    exit(2)
}
let client = arguments[arguments.startIndex]
let urlString = arguments[arguments.startIndex + 1]
let base = url.deletingLastPathComponent().absoluteString
let endpoint = FileEndpoint(baseURL: base, path: url.lastPathComponent)
let headers = TaskPool.Configuration.standardHeaders
let configuration = URLSessionConfiguration.ephemeral
configuration.urlCache = nil

let session = URLSession(configuration: configuration)
let transport = URLSessionTransport(configuration: configuration)
let pool = TaskPool(configuration: .init(transport: URLSessionTransport(configuration: configuration)))
let inspector = PoolInspector()
let inspectedPool = TaskPool(
    configuration: .init(transport: URLSessionTransport(configuration: configuration), inspector: inspector))
let stub = StubTransport { _, _ in StubResponse() }
let stubPool = TaskPool(configuration: .init(transport: stub))

/// AsyncHTTPClient used directly, its transport and a pool over it, configured as the throughput suite's
/// (64 connections, the transport's decompression and read timeout, no redirects); made only when asked for.
enum AsyncHTTPClients {
    static let configuration: HTTPClient.Configuration = {
        var configuration = AsyncHTTPClientTransport.defaultConfiguration
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        configuration.redirectConfiguration = .disallow  // as the transport sets it
        return configuration
    }()
    /// The loop `asyncHTTPClientDelegate`'s events come on, as the transport's do with one request in flight.
    static let loop = HTTPClient.defaultEventLoopGroup.next()
    static let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    static let transport = AsyncHTTPClientTransport(configuration: configuration)
    static let pool = TaskPool(configuration: .init(transport: transport))
}

/// Collects an answer through the client's delegate interface and hands it over at its end. Its state is
/// touched from the one loop its events come on.
final class Collector: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = Void
    var body = Data()
    var status = 0
    let continuation: CheckedContinuation<Data, any Error>
    init(_ continuation: CheckedContinuation<Data, any Error>) { self.continuation = continuation }
    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        status = Int(head.status.code)
        return task.eventLoop.makeSucceededVoidFuture()
    }
    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        body.append(contentsOf: buffer.readableBytesView)
        return task.eventLoop.makeSucceededVoidFuture()
    }
    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) { continuation.resume(throwing: error) }
    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        guard status == 200 else { return continuation.resume(throwing: URLError(.badServerResponse)) }
        continuation.resume(returning: body)
    }
}

/// The page (`….page.json`) or the small payload, decoded into what every client decodes.
let isPage = urlString.hasSuffix("page.json")

func decode(_ data: Data) throws {
    if isPage {
        _ = try JSONDecoder().decode(Listing.self, from: data)
    } else {
        _ = try JSONDecoder().decode(Item.self, from: data)
    }
}

func call(_ index: Int) async throws {
    switch client {
    case "raw":  // as the benchmark's raw client: the URL parsed for each request
        var request = URLRequest(url: URL(string: urlString)!)
        request.allHTTPHeaderFields = headers
        let (data, response) = try await session.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
        try decode(data)
    case "transport":
        let request = try endpoint.urlRequest(defaultHeaders: headers)
        let (data, response) = try await transport.send(request, context: TransportContext(taskID: "t"))
        guard response.statusCode == 200 else { throw URLError(.badServerResponse) }
        try decode(data)
    case "networkCore":
        if isPage {
            _ = try await pool.send(endpoint, parser: DecodableParser<Listing>(), id: "r\(index)")
        } else {
            _ = try await pool.send(endpoint, parser: DecodableParser<Item>(), id: "r\(index)")
        }
    case "networkCoreInspected":
        if isPage {
            _ = try await inspectedPool.send(endpoint, parser: DecodableParser<Listing>(), id: "r\(index)")
        } else {
            _ = try await inspectedPool.send(endpoint, parser: DecodableParser<Item>(), id: "r\(index)")
        }
        if index % 500 == 499 { attachedPage() }
    case "asyncHTTPClient":  // the request the transport sends (the pool's headers, `Accept-Encoding`), directly
        var request = HTTPClientRequest(url: urlString)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.headers.add(name: "Accept-Encoding", value: "gzip, deflate")
        let response = try await AsyncHTTPClients.client.execute(request, timeout: .seconds(60))
        guard response.status == .ok else { throw URLError(.badServerResponse) }
        try decode(Data(try await response.body.collect(upTo: 32 << 20).readableBytesView))
    case "asyncHTTPClientDelegate":  // the same request through the delegate interface, its events on one loop
        var headers = HTTPHeaders()
        for (name, value) in TaskPool.Configuration.standardHeaders { headers.add(name: name, value: value) }
        headers.add(name: "Accept-Encoding", value: "gzip, deflate")
        let request = try HTTPClient.Request(url: urlString, method: .GET, headers: headers)
        let data = try await withCheckedThrowingContinuation { continuation in
            let collector = Collector(continuation)
            _ = AsyncHTTPClients.client.execute(
                request: request, delegate: collector, eventLoop: .delegate(on: AsyncHTTPClients.loop))
        }
        try decode(data)
    case "asyncHTTPClientTransport":
        let request = try endpoint.urlRequest(defaultHeaders: headers)
        let context = TransportContext(taskID: "t")
        let (data, response) = try await AsyncHTTPClients.transport.send(request, context: context)
        guard response.statusCode == 200 else { throw URLError(.badServerResponse) }
        try decode(data)
    case "networkCoreAsyncHTTPClient":
        if isPage {
            _ = try await AsyncHTTPClients.pool.send(endpoint, parser: DecodableParser<Listing>(), id: "r\(index)")
        } else {
            _ = try await AsyncHTTPClients.pool.send(endpoint, parser: DecodableParser<Item>(), id: "r\(index)")
        }
    case "stubPool":  // the pool suite's send→finish: a send with a handler, to a transport that answers at once
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            stubPool.send(endpoint, id: "s\(index)") { _ in continuation.resume() }
        }
    case "stubTask":  // the same without the pool: the request built, a Swift task that calls the transport
        let request = try endpoint.urlRequest(defaultHeaders: headers)
        await Task { _ = try? await stub.send(request, context: TransportContext(taskID: "s\(index)")) }.value
    case "buildRaw":  // the raw client's request, built and not sent
        var request = URLRequest(url: URL(string: urlString)!)
        request.allHTTPHeaderFields = headers
        guard request.url != nil else { throw URLError(.badURL) }
    case "build":  // the endpoint's request, built and not sent (its headers checked, as a pool's are not)
        let request = try endpoint.urlRequest(defaultHeaders: headers)
        guard request.url != nil else { throw URLError(.badURL) }
    default:
        FileHandle.standardError.write(Data("unknown client \(client)\n".utf8))
        exit(2)
    }
}

/// The inspector's server, listening, for `networkCoreInspected`; made before the requests.
nonisolated(unsafe) var inspectorServer: InspectorServer?

/// What the inspector's server does for a page each time it sends it a view: the view built and written
/// as JSON (`InspectorServer.view()`, what each `inspection` event carries), the socket's write aside.
func attachedPage() {
    guard let view = inspectorServer?.view(), view.count > 2, inspector.changeCount > 0 else {
        FileHandle.standardError.write(Data("the inspector's view is empty\n".utf8))
        exit(1)
    }
}

let done = DispatchSemaphore(value: 0)
Task.detached {
    do {
        if client == "networkCoreInspected" { inspectorServer = try await InspectorServer.start(inspector: inspector) }
        if inflight == 1 {
            for index in 0..<count { try await call(index) }
        } else {
            // At most `inflight` requests at once: a new one starts as each ends.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<count {
                    if index >= inflight { try await group.next() }
                    group.addTask { try await call(index) }
                }
                try await group.waitForAll()
            }
        }
    } catch {
        FileHandle.standardError.write(Data("request failed: \(error)\n".utf8))
        exit(1)
    }
    done.signal()
}
done.wait()
print("\(client): \(count) requests")
