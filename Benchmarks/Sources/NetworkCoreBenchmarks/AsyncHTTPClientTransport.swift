import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A NetworkCore transport over async-http-client (SwiftNIO): shows that the `Transport`
/// protocol carries another engine, with the root package keeping no dependencies.
struct AsyncHTTPClientTransport: Transport {
    let client: HTTPClient
    let timeout: TimeAmount

    func send(_ request: URLRequest, context: TransportContext) async throws -> (Data, HTTPURLResponse) {
        guard let url = request.url else { throw URLError(.badURL) }
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = NIOHTTP1.HTTPMethod(rawValue: request.httpMethod ?? "GET")
        for (name, value) in request.allHTTPHeaderFields ?? [:] { outgoing.headers.add(name: name, value: value) }
        if let body = request.httpBody { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(outgoing, timeout: timeout)
        context.didReceiveResponse()
        let buffer = try await response.body.collect(upTo: 64 << 20)
        let body = Data(buffer.readableBytesView)
        context.didReceive(bytes: body.count)
        var headers: [String: String] = [:]
        for header in response.headers { headers[header.name] = header.value }
        guard
            let http = HTTPURLResponse(
                url: url, statusCode: Int(response.status.code), httpVersion: "HTTP/1.1", headerFields: headers)
        else { throw URLError(.badServerResponse) }
        return (body, http)
    }
}
