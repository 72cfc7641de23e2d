import Foundation
import HTTPTypes
import NetworkCore
import OpenAPIRuntime

/// A swift-openapi-runtime `ClientTransport` that sends a generated client's operations through a
/// ``NetworkCore/TaskPool``: each call is a task of the pool, under the operation's id, in the task
/// table, cancellable by id, adapted and retried by the pool's interceptors (credential refresh,
/// `RetryPolicy`), logged, traced and bounded by the pool's deadlines.
///
/// ```swift
/// let pool = TaskPool(configuration: .init(transport: AsyncHTTPClientTransport(), interceptors: [RetryPolicy()]))
/// let client = Client(serverURL: try Servers.Server1.url(), transport: TaskPoolClientTransport(pool: pool))
/// let pet = try await client.getPet(path: .init(petId: 7)).ok.body.json
/// ```
///
/// Every status the server answers goes back to the generated client, which maps it to the
/// operation's documented outputs (a `404` to `.notFound`); the pool's validation and its reading of
/// the server's own error codes do not apply. Failures without an answer (no connection, a timeout,
/// a cancel) throw the pool's ``NetworkCore/NetworkError``, which the generated client wraps in its
/// `ClientError`. A request body is read whole before the task starts, up to
/// ``maximumRequestBytes``; the response's body is the one the pool read, up to its
/// `maximumResponseBytes`.
public struct TaskPoolClientTransport: ClientTransport {
    /// The pool operations are sent through.
    public let pool: TaskPool
    /// The largest request body sent; a larger one throws before anything is sent.
    public let maximumRequestBytes: Int

    /// Creates a transport that sends through `pool`.
    public init(pool: TaskPool, maximumRequestBytes: Int = 32 << 20) {
        self.pool = pool
        self.maximumRequestBytes = maximumRequestBytes
    }

    /// Sends `request` as a task of the pool whose id is `operationID` (the pool tells concurrent calls
    /// of one operation apart, or joins identical ones, as its duplicate policy says).
    public func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let bytes: Data?
        if let body {
            do {
                bytes = try await Data(collecting: body, upTo: maximumRequestBytes)
            } catch {
                throw NetworkError.encodingFailed(
                    reason:
                        "the request body of \(operationID) is over \(maximumRequestBytes) bytes, or failed: \(error)")
            }
        } else {
            bytes = nil
        }
        let endpoint = try OperationEndpoint(request, body: bytes, baseURL: baseURL, operationID: operationID)
        let response: Response
        do {
            response = try await pool.send(endpoint, id: operationID)
        } catch {
            switch error {
            case .httpStatus(let answered), .serverRefused(let answered): response = answered
            default: throw error
            }
        }
        return (Self.httpResponse(of: response), response.body.isEmpty ? nil : HTTPBody(response.body))
    }

    /// The pool's response as swift-http-types' response: its status and every header field.
    static func httpResponse(of response: Response) -> HTTPResponse {
        var fields = HTTPFields()
        for (name, value) in response.headers {
            guard let name = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: name, value: value))
        }
        return HTTPResponse(status: .init(code: response.statusCode), headerFields: fields)
    }
}

/// One operation's request as an endpoint of the pool: its path and query as the generated client
/// encoded them, its method, headers and body; every status is an answer; the service is the
/// operation's id.
struct OperationEndpoint: Endpoint {
    let baseURL: String
    let path: String
    let method: NetworkCore.HTTPMethod
    let headers: [String: String]
    let task: HTTPTask
    let service: String
    var statusReader: (any ServerStatusReader)? { NoServerStatus() }

    init(_ request: HTTPRequest, body: Data?, baseURL: URL, operationID: String) throws(NetworkError) {
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        path = request.path ?? "/"
        method = NetworkCore.HTTPMethod(rawValue: request.method.rawValue)
        var headers: [String: String] = [:]
        for field in request.headerFields {
            let name = field.name.canonicalName
            headers[name] = headers[name].map { $0 + ", " + field.value } ?? field.value
        }
        let contentType = headers.removeValue(forKey: "content-type")
        self.headers = headers
        if let body, !body.isEmpty {
            task = .data(body, contentType: contentType ?? "application/octet-stream")
        } else {
            task = .plain
        }
        service = operationID
    }
}

/// A reader that finds no status in any body: a generated client reads its outputs itself.
struct NoServerStatus: ServerStatusReader {
    func status(in body: Data) -> ServerStatus? { nil }
    func mayDescribeFailure(_ body: Data) -> Bool { false }
}
