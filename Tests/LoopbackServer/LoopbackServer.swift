import Foundation
import NetworkCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A small HTTP/1.1 server on 127.0.0.1 for integration tests.
///
/// It listens on a free port (on 127.0.0.1, or on ::1), serves each connection on its own thread (one request, then
/// `Connection: close`; or, with `keepsAlive`, every request the client sends on it), and answers with a
/// handler that sees the request as a `URLRequest`. It only ever binds to the loopback address. Stop it
/// with ``stop()``.
public final class LoopbackServer: @unchecked Sendable {
    // @unchecked Sendable: `stopped` and `received` are guarded by `lock`; the rest is immutable.
    /// Answers one request.
    public typealias Handler = @Sendable (URLRequest) -> StubResponse
    /// Answers one request, possibly with a fault.
    public typealias FaultHandler = @Sendable (URLRequest) -> Reply

    /// What the server does with one request.
    public enum Reply: Sendable {
        /// Sends the response.
        case respond(StubResponse)
        /// Sends the headers (with the full `Content-Length`) and half the body, then closes the connection.
        case closeMidBody(StubResponse)
        /// Waits, then sends the response.
        case delayed(TimeInterval, StubResponse)
        /// Sends the headers at once, then the body in `pieces` parts with `interval` seconds between them.
        case trickled(StubResponse, pieces: Int, interval: TimeInterval)
        /// Answers nothing, and waits (a minute at most) for the client to close or reset the connection;
        /// calls `closed` when it does.
        case heldUntilClosed(closed: @Sendable () -> Void)
        /// Sends the headers and the first `bytes` of the body, then waits (a minute at most) until `release`
        /// is signalled and sends the rest; if it is not signalled in time, closes the connection there.
        case partThenHeld(StubResponse, bytes: Int, release: DispatchSemaphore)
    }

    /// The port it listens on.
    public let port: UInt16
    private let listener: Int32
    private let handler: FaultHandler
    private let lock = NSLock()
    private var stopped = false
    private var received: [URLRequest] = []
    private var clients: Set<Int32> = []
    /// After ``stop()``: a socket bound to the port, not listening (see there), or -1.
    private var placeholder: Int32 = -1
    private let recordsRequests: Bool
    private let keepsAlive: Bool
    private let ipv6: Bool
    private let bodyReadPause: TimeInterval

    /// Why the server could not start.
    public struct StartError: Error, CustomStringConvertible {
        /// The call that failed and its `errno`.
        public let description: String
    }

    /// Starts listening on 127.0.0.1 at a free port.
    public convenience init(handler: @escaping Handler) throws {
        try self.init(port: 0) { .respond(handler($0)) }
    }

    /// Starts listening on 127.0.0.1 at `port` (0 for a free one), answering with faults where the handler says.
    /// `recordsRequests: false` keeps no log of requests, for long load runs. `keepsAlive: true` serves
    /// further requests on a connection after a response (all but `closeMidBody`'s), as most servers do.
    /// `ipv6: true` listens on `::1` instead of 127.0.0.1. `bodyReadPause`: seconds to wait before each
    /// read of a request body (16 KB at most), for a client that uploads to a slow server.
    public init(
        port requestedPort: UInt16 = 0, recordsRequests: Bool = true, keepsAlive: Bool = false, ipv6: Bool = false,
        bodyReadPause: TimeInterval = 0, faults handler: @escaping FaultHandler
    ) throws {
        self.bodyReadPause = bodyReadPause
        self.recordsRequests = recordsRequests
        self.keepsAlive = keepsAlive
        self.ipv6 = ipv6
        let fd = Self.makeSocket(ipv6: ipv6)
        guard fd >= 0, let boundPort = Self.bindLoopback(fd, port: requestedPort, ipv6: ipv6, listening: true) else {
            let error = errno
            if fd >= 0 { close(fd) }
            throw StartError(description: "bind/listen on \(ipv6 ? "::1" : "127.0.0.1"): errno \(error)")
        }
        port = boundPort
        listener = fd
        self.handler = handler
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit {
        stop()
        if placeholder >= 0 { close(placeholder) }
    }

    /// A TCP socket with `SO_REUSEADDR`, or -1.
    private static func makeSocket(ipv6: Bool) -> Int32 {
        #if os(Linux)
            let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return -1 }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// Binds `fd` to the loopback address at `port` (0 for a free one) and, if `listening`, listens;
    /// returns the port, or `nil` if a call failed (`errno` says why).
    private static func bindLoopback(_ fd: Int32, port: UInt16, ipv6: Bool, listening: Bool) -> UInt16? {
        func bound(_ address: UnsafeMutablePointer<sockaddr>, _ length: inout socklen_t) -> Bool {
            bind(fd, address, length) == 0 && (!listening || listen(fd, 256) == 0)
                && getsockname(fd, address, &length) == 0
        }
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = in6addr_loopback
            var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            let ok = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bound($0, &length) }
            }
            return ok ? UInt16(bigEndian: address.sin6_port) : nil
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bound($0, &length) }
        }
        return ok ? UInt16(bigEndian: address.sin_port) : nil
    }

    /// `http://127.0.0.1:<port>`, or `http://[::1]:<port>` for an IPv6 server.
    public var baseURL: String { ipv6 ? "http://[::1]:\(port)" : "http://127.0.0.1:\(port)" }

    /// Every request served so far, in arrival order.
    public var requests: [URLRequest] { lock.withLock { received } }

    /// Stops at once, as a crashing server would: closes the listener and every open connection.
    public func kill() {
        stop()
        for client in lock.withLock({ clients }) { shutdown(client, Int32(SHUT_RDWR)) }
    }

    /// Stops accepting connections; a response being served is still sent. A kept-alive connection then
    /// ends instead of waiting for another request (a request still arriving on it is dropped).
    public func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        // The port stays this server's, bound but not listening, until it is released: a connection is
        // refused as before, and no other server of the test run is given the port meanwhile (a test that
        // stops its server to see a request fail would otherwise reach that other server).
        let reserved = Self.makeSocket(ipv6: ipv6)
        if reserved >= 0 {
            if Self.bindLoopback(reserved, port: port, ipv6: ipv6, listening: false) != nil {
                lock.withLock { placeholder = reserved }
            } else {
                close(reserved)
            }
        }
        if keepsAlive { for client in lock.withLock({ clients }) { shutdown(client, Int32(SHUT_RD)) } }
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func acceptLoop() {
        while !isStopped {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if isStopped { return }
                continue
            }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func serve(_ client: Int32) {
        lock.withLock { _ = clients.insert(client) }
        defer {
            lock.withLock { _ = clients.remove(client) }
            close(client)
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var pending = [UInt8]()  // bytes read from the connection and not yet part of a request
        while let request = readRequest(client, buffer: &pending) {
            if recordsRequests { lock.withLock { self.received.append(request) } }
            let keepOpen = keepsAlive && !isStopped
            switch handler(request) {
            case .respond(let response):
                guard write(response, to: client, keepOpen: keepOpen) else { return }
            case .closeMidBody(let response):
                write(response, to: client, keepOpen: false, bodyBytes: response.body.count / 2)
                return
            case .delayed(let seconds, let response):
                Thread.sleep(forTimeInterval: seconds)
                guard write(response, to: client, keepOpen: keepOpen) else { return }
            case .heldUntilClosed(let closed):
                if waitForClose(client) { closed() }
                return
            case .trickled(let response, let pieces, let interval):
                guard trickle(response, to: client, keepOpen: keepOpen, pieces: pieces, interval: interval) else {
                    return
                }
            case .partThenHeld(let response, let bytes, let release):
                let body = Array(response.body)
                let split = min(max(0, bytes), body.count)
                guard sendAll(Array(Self.head(of: response, keepOpen: keepOpen).utf8) + body[..<split], to: client),
                    release.wait(timeout: .now() + 60) == .success,
                    sendAll(Array(body[split...]), to: client)
                else { return }
            }
            guard keepOpen else { return }
        }
    }

    /// Reads and drops what `client` sends until it closes or resets the connection (true), or a minute has
    /// passed (false). Each read waits at most the socket's receive timeout.
    private func waitForClose(_ client: Int32) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4_096)
        let until = Date().addingTimeInterval(60)
        while Date() < until {
            let count = recv(client, &chunk, chunk.count, 0)
            if count == 0 { return true }
            if count < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR { return true }
        }
        return false
    }

    /// Reads one request from `client`, keeping in `buffer` whatever bytes came after it; `nil` once the
    /// connection is closed, times out or sends something that is not HTTP.
    private func readRequest(_ client: Int32, buffer: inout [UInt8]) -> URLRequest? {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        var headerEnd = Self.headerEnd(in: buffer, from: 0)
        while headerEnd == nil {
            let count = recv(client, &chunk, chunk.count, 0)
            guard count > 0, buffer.count < 1 << 20 else { return nil }
            let searchFrom = max(0, buffer.count - 3)
            buffer.append(contentsOf: chunk[0..<count])
            headerEnd = Self.headerEnd(in: buffer, from: searchFrom)
        }
        let head = String(decoding: buffer[0..<headerEnd!], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = head[0].split(separator: " ")
        guard requestLine.count >= 2, let url = URL(string: baseURL + requestLine[1]) else { return nil }
        var request = URLRequest(url: url)
        request.httpMethod = String(requestLine[0])
        var contentLength = 0
        var chunked = false
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            request.addValue(value, forHTTPHeaderField: name)
            if name.lowercased() == "content-length" { contentLength = Int(value) ?? 0 }
            if name.lowercased() == "transfer-encoding" { chunked = value.lowercased().contains("chunked") }
        }
        let bodyStart = headerEnd! + 4
        if chunked {
            buffer.removeFirst(bodyStart)
            guard let body = readChunkedBody(client, buffer: &buffer) else { return nil }
            request.httpBody = body
            return request
        }
        while buffer.count - bodyStart < contentLength {
            if bodyReadPause > 0 { Thread.sleep(forTimeInterval: bodyReadPause) }
            let count = recv(client, &chunk, min(chunk.count, contentLength - (buffer.count - bodyStart)), 0)
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[0..<count])
        }
        if contentLength > 0 { request.httpBody = Data(buffer[bodyStart..<bodyStart + contentLength]) }
        buffer.removeFirst(bodyStart + contentLength)
        return request
    }

    /// Reads a chunked request body (RFC 9112 §7.1) from the start of `buffer` on, receiving more as needed;
    /// its trailer fields are read and dropped. `nil` if the connection closes first or the framing is bad.
    private func readChunkedBody(_ client: Int32, buffer: inout [UInt8]) -> Data? {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        /// Receives until `buffer` holds at least `count` bytes.
        func fill(_ count: Int) -> Bool {
            while buffer.count < count {
                if bodyReadPause > 0 { Thread.sleep(forTimeInterval: bodyReadPause) }
                let received = recv(client, &chunk, chunk.count, 0)
                guard received > 0 else { return false }
                buffer.append(contentsOf: chunk[0..<received])
            }
            return true
        }
        /// The next line, without its CRLF, taken out of `buffer`.
        func line() -> String? {
            var end = 0
            while true {
                while end + 1 < buffer.count {
                    if buffer[end] == 13, buffer[end + 1] == 10 {
                        let text = String(decoding: buffer[0..<end], as: UTF8.self)
                        buffer.removeFirst(end + 2)
                        return text
                    }
                    end += 1
                }
                guard buffer.count < 1 << 16, fill(buffer.count + 1) else { return nil }
            }
        }
        var body = Data()
        while true {
            guard let sizeLine = line(), let size = Int(sizeLine.prefix { $0 != ";" }, radix: 16), size >= 0,
                body.count + size <= 256 << 20
            else { return nil }
            if size == 0 {
                while let trailer = line() {
                    if trailer.isEmpty { return body }
                }
                return nil
            }
            guard fill(size + 2), buffer[size] == 13, buffer[size + 1] == 10 else { return nil }
            body.append(contentsOf: buffer[0..<size])
            buffer.removeFirst(size + 2)
        }
    }

    /// Where the blank line that ends a request's head starts in `bytes`, looking from `start` on.
    private static func headerEnd(in bytes: [UInt8], from start: Int) -> Int? {
        bytes.withUnsafeBufferPointer { bytes in
            var index = start
            while index + 3 < bytes.count {
                if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                    return index
                }
                index += 1
            }
            return nil
        }
    }

    /// Sends `response` (or the first `bodyBytes` of its body); whether every byte was sent.
    @discardableResult
    private func write(_ response: StubResponse, to client: Int32, keepOpen: Bool, bodyBytes: Int? = nil) -> Bool {
        sendAll(
            Array(Self.head(of: response, keepOpen: keepOpen).utf8)
                + Array(response.body.prefix(bodyBytes ?? response.body.count)), to: client)
    }

    /// Sends the head of `response`, then its body in `pieces` parts, `interval` seconds apart.
    private func trickle(
        _ response: StubResponse, to client: Int32, keepOpen: Bool, pieces: Int, interval: TimeInterval
    ) -> Bool {
        guard sendAll(Array(Self.head(of: response, keepOpen: keepOpen).utf8), to: client) else { return false }
        let body = Array(response.body)
        let size = max(1, (body.count + max(1, pieces) - 1) / max(1, pieces))
        for start in stride(from: 0, to: body.count, by: size) {
            Thread.sleep(forTimeInterval: interval)
            guard sendAll(Array(body[start..<min(body.count, start + size)]), to: client) else { return false }
        }
        return true
    }

    private static func head(of response: StubResponse, keepOpen: Bool) -> String {
        let reason = HTTPURLResponse.localizedString(forStatusCode: response.statusCode).capitalized
        var head = "HTTP/1.1 \(response.statusCode) \(reason)\r\n"
        for (name, value) in response.headers where !["content-length", "connection"].contains(name.lowercased()) {
            head += "\(name): \(value)\r\n"
        }
        head += "Content-Length: \(response.body.count)\r\nConnection: \(keepOpen ? "keep-alive" : "close")\r\n\r\n"
        return head
    }

    /// Sends every byte of `bytes`; whether it could.
    private func sendAll(_ bytes: [UInt8], to client: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            #if os(Linux)
                let count = bytes[sent...].withUnsafeBytes {
                    send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
            #else
                let count = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) }
            #endif
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }
}
