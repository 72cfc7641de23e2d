import Foundation
import NetworkCore
import NetworkCoreTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A client of one TCP connection to 127.0.0.1, for checking what a MockServer sends, byte for byte.
private final class RawConnection {
    let socket: Int32

    init(port: UInt16) throws {
        #if os(Linux)
            socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard socket >= 0, connected else { throw URLError(.cannotConnectToHost) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)  // a bound against a hang, not a measurement
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(socket) }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        #if os(Linux)
            _ = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, 0) }
        #else
            _ = bytes.withUnsafeBytes { Darwin.send(socket, $0.baseAddress, $0.count, 0) }
        #endif
    }

    /// Everything received until the server closes the connection, `count` bytes have come, or the
    /// 5 s receive timeout passes; and whether the server closed it.
    func receive(upTo count: Int = 1 << 20) -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while received.count < count {
            let read = recv(socket, &chunk, min(chunk.count, count - received.count), 0)
            if read == 0 { return (String(decoding: received, as: UTF8.self), true) }
            if read < 0 { break }
            received += chunk[0..<read]
        }
        return (String(decoding: received, as: UTF8.self), false)
    }
}

@Suite("MockServer on the wire: what it sends, byte for byte")
struct MockServerWireTests {
    static func reply(_ request: RecordedRequest) -> MockResponse {
        let path = request.url?.path ?? ""
        let response = StubResponse(body: Data("body of \(path)".utf8))
        return path == "/cut" ? MockResponse(response, faults: [.cutMidBody]) : MockResponse(response)
    }

    /// One response to `path` as the server sends it for `reply`, head and body (or its first `bodyBytes`).
    static func response(_ path: String, connection: String, bodyBytes: Int? = nil) -> String {
        let body = "body of \(path)"
        return "HTTP/1.1 200 Ok\r\nContent-Length: \(body.utf8.count)\r\nConnection: \(connection)\r\n\r\n"
            + String(body.prefix(bodyBytes ?? body.count))
    }

    @Test("kept alive: requests sent together on one connection are each answered, in order, on it")
    func keepsAlive() throws {
        let server = try MockServer(recordsRequests: true, keepsAlive: true, handler: Self.reply)
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        // Both requests in one write: the server must keep the bytes after the first request for the second.
        connection.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nxyz")
        let expected = Self.response("/a", connection: "keep-alive") + Self.response("/b", connection: "keep-alive")
        let answer = connection.receive(upTo: expected.utf8.count)
        #expect(answer.text == expected)
        #expect(!answer.closed)
        #expect(server.requests.map { $0.url?.path } == ["/a", "/b"])
        #expect(server.requests.last?.httpBody == Data("xyz".utf8))

        // A third request on the same connection; then a fault that cuts it off mid-body and closes it.
        connection.send("GET /c HTTP/1.1\r\nHost: x\r\n\r\nGET /cut HTTP/1.1\r\nHost: x\r\n\r\n")
        let rest = connection.receive()
        #expect(
            rest.text
                == Self.response("/c", connection: "keep-alive")
                + Self.response("/cut", connection: "close", bodyBytes: 6))
        #expect(rest.closed)
        #expect(server.requests.count == 4)
    }

    @Test("kept alive: stopping the server ends a connection waiting for its next request")
    func stopEndsIdleConnections() throws {
        let server = try MockServer(keepsAlive: true, handler: Self.reply)
        let connection = try RawConnection(port: server.port)
        connection.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        let expected = Self.response("/a", connection: "keep-alive")
        #expect(connection.receive(upTo: expected.utf8.count).text == expected)
        let started = Date()
        server.stop()
        let after = connection.receive()
        #expect(after.closed && after.text.isEmpty, "\(after)")
        #expect(Date().timeIntervalSince(started) < 4, "the connection stayed open until the client's timeout")
    }

    @Test("not kept alive (the default): one request, then the connection closes")
    func closesByDefault() throws {
        let server = try MockServer(handler: Self.reply)
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        connection.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        let answer = connection.receive()
        #expect(answer.text == Self.response("/a", connection: "close"))
        #expect(answer.closed)
        #expect(server.requests.count == 1)
    }

    /// What the server sends for `response` to one `GET /x`, until it closes the connection.
    static func wire(_ response: MockResponse) throws -> (text: String, closed: Bool) {
        let server = try MockServer { _ in response }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        connection.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
        return connection.receive()
    }

    @Test("chunked framing, server-sent events, a cut, a huge header and a malformed head, byte for byte")
    func framingAndFaults() throws {
        let chunked = try Self.wire(MockResponse.text("abcdefg").chunked(pieceSize: 3))
        #expect(
            chunked.text
                == "HTTP/1.1 200 Ok\r\nContent-Type: text/plain; charset=utf-8\r\nTransfer-Encoding: chunked\r\n"
                + "Connection: close\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n1\r\ng\r\n0\r\n\r\n")
        let events = try Self.wire(.serverSentEvents(["a", "b\nc"], interval: 0))
        #expect(events.text.hasSuffix("\r\n\r\n9\r\ndata: a\n\n\r\n11\r\ndata: b\ndata: c\n\n\r\n0\r\n\r\n"))
        let cut = try Self.wire(MockResponse(body: Data("0123456789".utf8), faults: [.cut(afterBodyBytes: 4)]))
        #expect(cut.closed && cut.text.hasSuffix("Content-Length: 10\r\nConnection: close\r\n\r\n0123"))
        let padded = try Self.wire(MockResponse.status(204).with(.hugeHeader(bytes: 70_000)))
        #expect(padded.text.contains("X-Mock-Padding: \(String(repeating: "a", count: 70_000))\r\n"))
        let malformed = try Self.wire(.fault(.malformedHead))
        #expect(malformed.closed && !malformed.text.hasPrefix("HTTP/1.1 2"))
        let closed = try Self.wire(.fault(.closeBeforeAnswer))
        #expect(closed.closed && closed.text.isEmpty)
        let reset = try Self.wire(.fault(.reset))
        #expect(!reset.closed && reset.text.isEmpty)  // the read fails with ECONNRESET instead of seeing a close
    }

    @Test("a body until the close, with or without a Transfer-Encoding; Connection options after the server's own")
    func untilCloseAndConnectionOptions() throws {
        let plain = try Self.wire(MockResponse(body: Data("abc".utf8), framing: .untilClose(transferEncoding: nil)))
        #expect(plain.closed && plain.text == "HTTP/1.1 200 Ok\r\nConnection: close\r\n\r\nabc")
        let coded = try Self.wire(
            MockResponse(
                headers: ["Content-Length": "99"], body: Data("abc".utf8),
                framing: .untilClose(transferEncoding: "x-custom")))
        #expect(
            coded.closed
                && coded.text == "HTTP/1.1 200 Ok\r\nTransfer-Encoding: x-custom\r\nConnection: close\r\n\r\nabc")
        let options = try Self.wire(MockResponse(headers: ["Connection": "keep-alive, x-a,X-B"], body: Data("d".utf8)))
        #expect(options.text == "HTTP/1.1 200 Ok\r\nContent-Length: 1\r\nConnection: close, x-a, X-B\r\n\r\nd")
    }

    @Test("a route's literal segment matches its percent-encoded form; a :name segment is decoded")
    func encodedPaths() throws {
        let server = try MockServer()
        defer { server.stop() }
        try server.route(.get, "/tag/sci fi", respond: .text("literal"))
        try server.route(.get, "/tag/:name/*") { .text("name=\($0.parameters["name"] ?? "-")") }
        for (path, body) in [("/tag/sci%20fi", "literal"), ("/tag/a%2Fb/x/y", "name=a/b")] {
            let connection = try RawConnection(port: server.port)
            connection.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(connection.receive().text.hasSuffix("\r\n\r\n\(body)"))
        }
        #expect(server.unansweredRequests.isEmpty && server.count(.get, "/tag/*") == 2)
    }

    @Test("takeRequest: a cancelled caller gets CancellationError, whether it was waiting or not yet")
    func takeRequestCancelled() async throws {
        let server = try MockServer()
        defer { server.stop() }
        let waiting = Task { try await server.takeRequest(timeout: 60) }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await server.takeRequest(timeout: 60)
        }
        await #expect(throws: CancellationError.self) { try await early.value }
    }

    @Test("a server nobody references any more stops, and its port takes connections no more")
    func releasedServerStops() throws {
        weak var released: MockServer?
        var port: UInt16 = 0
        do {
            let server = try MockServer()
            (released, port) = (server, server.port)
        }
        #expect(released == nil)
        #expect(throws: URLError.self) { try RawConnection(port: port) }
    }

    @Test("stopped: connections are refused, and the port is no other server's until this one is released")
    func stoppedKeepsItsPort() async throws {
        var server: MockServer? = try MockServer(handler: Self.reply)
        let port = try #require(server?.port)
        server?.stop()
        #expect(throws: URLError.self) { try RawConnection(port: port) }
        // Bound by the stopped server (not listening), the port cannot be bound again without sharing it.
        #expect(Self.bindsWithoutSharing(port: port) == false)
        // Released once its accepting thread, which holds it, has seen the stop.
        server = nil
        #expect(await eventually(within: 5) { Self.bindsWithoutSharing(port: port) })
    }

    /// Whether a socket without `SO_REUSEADDR` can bind 127.0.0.1:`port` (then it is closed again).
    static func bindsWithoutSharing(port: UInt16) -> Bool {
        #if os(Linux)
            let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
