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

/// A real HTTP/1.1 server on the loopback address for tests: scripted answers, network faults, and
/// every request it received.
///
/// It listens on a free port of 127.0.0.1 (or `::1`) and nowhere else, and serves each connection on a
/// thread of its own: one request, then `Connection: close`; or, with `keepsAlive`, every request the
/// client sends on it. Each request is answered by the first that has an answer:
/// 1. a fault set with ``failNext(_:with:)``, for the next requests;
/// 2. the queue of ``enqueue(_:times:)``, in order;
/// 3. the first route of ``route(_:_:answer:)`` whose method and path pattern match;
/// 4. the `handler` given at start;
/// 5. else a `404` with a JSON `message` that names the request, which is kept in ``unansweredRequests``.
///
/// ```swift
/// let server = try await MockServer.start()
/// defer { server.stop() }
/// server.enqueue(.json(#"{"page": 1, "results": []}"#))
/// let pool = TaskPool()
/// _ = try await pool.send(MyEndpoint(baseURL: server.baseURL))
/// let request = try await server.takeRequest()
/// #expect(request.matches(.get, "/movies"))
/// ```
///
/// It stops when ``stop()`` is called or when the last reference to it goes; ``withMockServer(ipv6:keepsAlive:_:)``
/// stops it at the end of a scope.
public final class MockServer: @unchecked Sendable {
    // @unchecked Sendable: every var is guarded by `lock`; the rest is immutable.
    /// Answers one request; see ``MockServer`` for when it is asked.
    public typealias Handler = @Sendable (RecordedRequest) -> MockResponse

    /// The port it listens on.
    public let port: UInt16
    private let listener: Int32
    private let handler: Handler?
    private let lock = NSLock()
    private var stopped = false
    private var received: [RecordedRequest] = []
    private var arrivals = 0
    private var clients: Set<Int32> = []
    /// After ``stop()``: a socket bound to the port, not listening (see there), or -1.
    private var placeholder: Int32 = -1
    private var queue: [MockResponse] = []
    private var routes: [Route] = []
    private var pendingFaults: [MockFault] = []
    private var unanswered: [RecordedRequest] = []
    /// Requests not yet taken by ``takeRequest(timeout:)``, and callers waiting for one.
    private var untaken: [RecordedRequest] = []
    private var takers: [(id: Int, continuation: CheckedContinuation<RecordedRequest, any Error>)] = []
    private var nextTaker = 0
    private let recordsRequests: Bool
    private let keepsAlive: Bool
    private let ipv6: Bool
    private let bodyReadPause: TimeInterval

    private struct Route {
        let method: HTTPMethod?
        let pattern: RoutePattern
        let answer: Handler
    }

    /// Starts listening at once on 127.0.0.1 (or `::1` with `ipv6`) at `port` (0, the default, for a free
    /// one); throws ``MockServerError/couldNotStart(_:)`` if it cannot.
    ///
    /// - Parameters:
    ///   - keepsAlive: serve further requests on a connection after a response, as most servers do (not
    ///     after a cut or a reset). Off by default: one request per connection, so a fault hits one request.
    ///   - recordsRequests: `false` keeps no log of requests (``requests`` and ``takeRequest(timeout:)``
    ///     stay empty), for long load runs.
    ///   - bodyReadPause: seconds to wait before each read of a request body (16 KB at most), for a client
    ///     that uploads to a slow server.
    ///   - handler: the answer when no fault, queued response or route has one.
    public init(
        port requestedPort: UInt16 = 0, recordsRequests: Bool = true, keepsAlive: Bool = false, ipv6: Bool = false,
        bodyReadPause: TimeInterval = 0, handler: Handler? = nil
    ) throws {
        self.bodyReadPause = bodyReadPause
        self.recordsRequests = recordsRequests
        self.keepsAlive = keepsAlive
        self.ipv6 = ipv6
        let fd = Self.makeSocket(ipv6: ipv6)
        guard fd >= 0, let boundPort = Self.bindLoopback(fd, port: requestedPort, ipv6: ipv6, listening: true) else {
            let error = errno
            if fd >= 0 { close(fd) }
            throw MockServerError.couldNotStart("bind/listen on \(ipv6 ? "::1" : "127.0.0.1"): errno \(error)")
        }
        port = boundPort
        listener = fd
        self.handler = handler
        // The accepting thread holds the server only while it hands a connection over: a server nobody
        // references any more is deinitialized, which stops it and ends this thread.
        Thread.detachNewThread { [weak self, fd] in Self.acceptLoop(fd) { self } }
    }

    /// Starts a server (see ``init(port:recordsRequests:keepsAlive:ipv6:bodyReadPause:handler:)``).
    public static func start(
        ipv6: Bool = false, keepsAlive: Bool = false, handler: Handler? = nil
    ) async throws -> MockServer {
        try MockServer(keepsAlive: keepsAlive, ipv6: ipv6, handler: handler)
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

    /// The base URL as a `URL`.
    public var url: URL { URL(string: baseURL)! }

    /// Every request received so far, in arrival order (taken or not).
    public var requests: [RecordedRequest] { lock.withLock { received } }

    /// The requests that nothing answered (they got a `404` naming them), in arrival order.
    public var unansweredRequests: [RecordedRequest] { lock.withLock { unanswered } }

    /// How many requests received so far have `method` (any, if `nil`) and a path `pattern` matches (see
    /// ``route(_:_:answer:)``; a pattern that does not start with `/` matches nothing).
    public func count(_ method: HTTPMethod? = nil, _ pattern: String = "*") -> Int {
        guard let pattern = RoutePattern(pattern) else { return 0 }
        return requests.filter { request in
            (method == nil || request.method == method) && pattern.match(request.path) != nil
        }.count
    }

    /// Answers the next requests with `responses`, in order, `times` times each (before routes and the
    /// handler).
    public func enqueue(_ responses: MockResponse..., times: Int = 1) {
        lock.withLock {
            for response in responses { queue.append(contentsOf: repeatElement(response, count: max(0, times))) }
        }
    }

    /// How many queued responses are still to be sent.
    public var queuedResponses: Int { lock.withLock { queue.count } }

    /// Answers requests with `method` (any, if `nil`) whose path matches `pattern` with `answer`, which
    /// sees the request with the pattern's `:name` values in ``RecordedRequest/parameters``. Patterns are
    /// literal segments, `:name` for one segment and a final `*` for the rest: `/3/movie/:id`,
    /// `/files/*`, or `*` for every path. The first route added that matches answers.
    /// Throws ``MockServerError/invalidPattern(_:)`` for a pattern that does not start with `/`.
    public func route(
        _ method: HTTPMethod?, _ pattern: String, answer: @escaping @Sendable (RecordedRequest) -> MockResponse
    ) throws {
        guard let parsed = RoutePattern(pattern) else { throw MockServerError.invalidPattern(pattern) }
        lock.withLock { routes.append(Route(method: method, pattern: parsed, answer: answer)) }
    }

    /// Answers requests with `method` whose path matches `pattern` with `response`, every time.
    public func route(_ method: HTTPMethod?, _ pattern: String, respond response: MockResponse) throws {
        try route(method, pattern) { _ in response }
    }

    /// Answers `GET` (any method) at `path` with a chain of `hops` redirects
    /// (`path/1`, `path/2`, …), the last one to `destination`.
    public func redirectChain(from path: String, hops: Int, to destination: String, statusCode: Int = 302) throws {
        let hops = max(1, hops)
        for hop in 0..<hops {
            let from = hop == 0 ? path : "\(path)/\(hop)"
            let to = hop == hops - 1 ? destination : "\(path)/\(hop + 1)"
            try route(nil, from, respond: .redirect(to: to, statusCode: statusCode))
        }
    }

    /// Plays `fault` on the next `count` requests, whatever answers them. A fault that ends the connection
    /// (``MockFault/reset``, say) sends no answer, and takes none from the queue: after `failNext(2, with:
    /// .reset)` and one `enqueue`, the third request gets the queued answer.
    public func failNext(_ count: Int = 1, with fault: MockFault) {
        lock.withLock { pendingFaults.append(contentsOf: repeatElement(fault, count: max(0, count))) }
    }

    /// Answers from `har`, as ``HARReplayTransport`` would: the entry with the request's method, path and
    /// query (credentials ignored), entries of one request in recorded order, the last one repeating. An
    /// entry recorded without an answer (its request failed) closes the connection. A request that matches
    /// no entry gets no answer from it (the server's `404`, or the handler's).
    public func replay(_ har: HAR, matchingBody: Bool = false) throws {
        try replay(HARReplayTransport(har: har, matchingBody: matchingBody))
    }

    /// Answers from the HAR archive in the file at `url` (see ``replay(_:matchingBody:)``), read as
    /// ``HARReplayTransport`` reads it; throws ``MockServerError/unreadableFile(path:reason:)`` if it cannot
    /// be read or is not a HAR archive.
    public func replay(contentsOf url: URL, matchingBody: Bool = false) throws {
        let replay: HARReplayTransport
        do {
            replay = try HARReplayTransport(contentsOf: url, matchingBody: matchingBody)
        } catch {
            throw MockServerError.unreadableFile(path: url.path, reason: "\(error)")
        }
        try self.replay(replay)
    }

    /// Answers every path from `replay`'s recording.
    private func replay(_ replay: HARReplayTransport) throws {
        try route(nil, "*") { request in
            let body: Data
            let head: HTTPURLResponse
            do {
                (body, head) = try replay.answer(to: request.urlRequest)
            } catch is HARReplayError {
                return MockResponse.unanswered
            } catch {
                return .fault(.closeBeforeAnswer)  // an entry recorded without an answer: the request failed
            }
            var headers: [String: String] = [:]
            for case (let name as String, let value as String) in head.allHeaderFields { headers[name] = value }
            return MockResponse(statusCode: head.statusCode, headers: headers, body: body)
        }
    }

    /// The next request not yet taken, in arrival order, waiting up to `timeout` seconds for one; throws
    /// ``MockServerError/noRequest(within:)`` if none comes (and ``MockServerError/stopped`` once the
    /// server is stopped). A cancelled caller gets `CancellationError`.
    public func takeRequest(timeout: TimeInterval = 10) async throws -> RecordedRequest {
        let id = lock.withLock { () -> Int in
            nextTaker += 1
            return nextTaker
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let immediate = lock.withLock { () -> Result<RecordedRequest, any Error>? in
                    // Cancelled before it waits: the cancellation handler has run and found no taker.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if !untaken.isEmpty { return .success(untaken.removeFirst()) }
                    if stopped { return .failure(MockServerError.stopped) }
                    takers.append((id, continuation))
                    return nil
                }
                if let immediate { return continuation.resume(with: immediate) }
                DispatchQueue.global().asyncAfter(deadline: .now() + max(0, timeout)) { [weak self] in
                    self?.endTaker(id, with: MockServerError.noRequest(within: timeout))
                }
            }
        } onCancel: {
            endTaker(id, with: CancellationError())
        }
    }

    private func endTaker(_ id: Int, with error: any Error) {
        let taker = lock.withLock { () -> CheckedContinuation<RecordedRequest, any Error>? in
            guard let index = takers.firstIndex(where: { $0.id == id }) else { return nil }
            return takers.remove(at: index).continuation
        }
        taker?.resume(throwing: error)
    }

    /// Records an arrival: in the log, for a waiting taker or the untaken list.
    private func record(_ urlRequest: URLRequest) -> RecordedRequest {
        let (request, taker) = lock.withLock {
            () -> (RecordedRequest, CheckedContinuation<RecordedRequest, any Error>?) in
            let request = RecordedRequest(urlRequest, index: arrivals)
            arrivals += 1
            guard recordsRequests else { return (request, nil) }
            received.append(request)
            if !takers.isEmpty { return (request, takers.removeFirst().continuation) }
            untaken.append(request)
            return (request, nil)
        }
        taker?.resume(returning: request)
        return request
    }

    /// The answer to `request` (see ``MockServer``).
    private func answer(to request: RecordedRequest) -> MockResponse {
        let (fault, queued, routes) = lock.withLock { () -> (MockFault?, MockResponse?, [Route]) in
            let fault = pendingFaults.isEmpty ? nil : pendingFaults.removeFirst()
            // A fault that ends the connection sends no answer: the queue keeps its next one.
            if let fault, fault.endsConnection { return (fault, nil, []) }
            let queued = queue.isEmpty ? nil : queue.removeFirst()
            return (fault, queued, queued == nil ? self.routes : [])
        }
        if let fault, fault.endsConnection { return .fault(fault) }
        var response = queued
        if response == nil {
            for route in routes where route.method == nil || route.method == request.method {
                guard let parameters = route.pattern.match(request.path) else { continue }
                var matched = request
                matched.parameters = parameters
                let answer = route.answer(matched)
                if answer.isUnanswered { continue }
                response = answer
                break
            }
        }
        if response == nil, let handler { response = handler(request) }
        if response == nil {
            lock.withLock { unanswered.append(request) }
            let message = ["message": "MockServer has no answer for \(request)"]
            response = .data(
                (try? JSONEncoder().encode(message)) ?? Data(), statusCode: 404, contentType: "application/json")
        }
        if let fault { response!.faults.insert(fault, at: 0) }
        return response!
    }

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
        // Wakes the accepting thread, which closes the listener: while that thread may still call `accept`,
        // the descriptor's number must not be given to another socket.
        shutdown(listener, Int32(SHUT_RDWR))
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
        let waiting = lock.withLock { () -> [CheckedContinuation<RecordedRequest, any Error>] in
            defer { takers.removeAll() }
            return takers.map(\.continuation)
        }
        for taker in waiting { taker.resume(throwing: MockServerError.stopped) }
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    /// Accepts connections on `listener` and serves each on a thread of its own, until the server stops or is
    /// gone. It takes the server (`server()`) only once `accept` returns: a server released while this thread
    /// waits is deinitialized at once, and its stop (`shutdown` of the listener) ends the wait.
    private static func acceptLoop(_ listener: Int32, server: () -> MockServer?) {
        defer { close(listener) }
        while true {
            let client = accept(listener, nil, nil)
            guard let server = server(), !server.isStopped else {
                if client >= 0 { close(client) }
                return
            }
            guard client >= 0 else { continue }
            Thread.detachNewThread { server.serve(client) }
        }
    }

    private func serve(_ client: Int32) {
        #if canImport(Darwin)
            // A write to a connection the client has closed must fail, not raise SIGPIPE in the test process
            // (on Linux, `sendAll` passes MSG_NOSIGNAL).
            var yes: Int32 = 1
            setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        lock.withLock { _ = clients.insert(client) }
        defer {
            lock.withLock { _ = clients.remove(client) }
            close(client)
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var pending = [UInt8]()  // bytes read from the connection and not yet part of a request
        while let urlRequest = readRequest(client, buffer: &pending) {
            let request = record(urlRequest)
            let keepOpen = keepsAlive && !isStopped
            guard play(answer(to: request), to: client, keepOpen: keepOpen), keepOpen else { return }
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

    /// Plays `response` on `client`: its faults, head and body; whether the connection can serve another
    /// request.
    private func play(_ response: MockResponse, to client: Int32, keepOpen: Bool) -> Bool {
        var delay: TimeInterval = 0
        var padding = 0
        var bytesPerSecond: Int?
        var trickle: (pieces: Int, interval: TimeInterval)?
        var stops: [(offset: Int, gate: MockGate?)] = []  // a cut has no gate
        let body = Array(response.body)
        for fault in response.faults {
            switch fault {
            case .reset:
                // Closing with a zero linger time sends a TCP RST instead of a FIN.
                var option = linger(l_onoff: 1, l_linger: 0)
                setsockopt(client, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
                return false
            case .closeBeforeAnswer:
                return false
            case .neverAnswer:
                _ = waitForClose(client)
                return false
            case .holdUntilClientCloses(let then):
                if waitForClose(client) { then() }
                return false
            case .malformedHead:
                _ = sendAll(Array("HTTP/1.1 OK-ish\r\nthis line has no colon\r\n\r\n".utf8), to: client)
                return false
            case .delayHead(let seconds): delay += max(0, seconds)
            case .hugeHeader(let bytes): padding += max(0, bytes)
            case .throttle(let rate): bytesPerSecond = max(1, rate)
            case .trickle(let pieces, let interval): trickle = (max(1, pieces), max(0, interval))
            case .cut(let bytes): stops.append((min(max(0, bytes), body.count), nil))
            case .cutMidBody: stops.append((body.count / 2, nil))
            case .pause(let bytes, let gate): stops.append((min(max(0, bytes), body.count), gate))
            }
        }
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        var chunked = false
        var untilClose = false
        var transferCoding: String?
        var pieceEnds = response.pieceEnds
        var interval = response.pieceInterval
        switch response.framing {
        case .contentLength: break
        case .chunked(let size):
            chunked = true
            if pieceEnds.isEmpty { pieceEnds = Array(stride(from: max(1, size), to: body.count, by: max(1, size))) }
        case .untilClose(let coding):
            untilClose = true
            transferCoding = coding
        }
        if let trickle {
            let size = max(1, (body.count + trickle.pieces - 1) / trickle.pieces)
            pieceEnds = Array(stride(from: size, to: body.count, by: size))
            interval = trickle.interval
        } else if let rate = bytesPerSecond {
            let size = max(1, rate / 10)
            pieceEnds = Array(stride(from: size, to: body.count, by: size))
            interval = Double(size) / Double(rate)
        }
        // The pieces the body is written in: split where a piece ends and where a cut or pause falls.
        var ends = Set(pieceEnds.filter { $0 > 0 && $0 < body.count })
        for stop in stops where stop.offset > 0 && stop.offset < body.count { ends.insert(stop.offset) }
        ends.insert(body.count)
        var head = "HTTP/1.1 \(response.statusCode) \(Self.reason(response.statusCode))\r\n"
        var connectionOptions: [String] = []
        for (name, value) in response.headers {
            switch name.lowercased() {
            case "content-length", "transfer-encoding": continue
            case "connection":
                connectionOptions += value.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.isEmpty && !["close", "keep-alive"].contains($0.lowercased()) }
            default: head += "\(name): \(value)\r\n"
            }
        }
        if padding > 0 { head += "X-Mock-Padding: \(String(repeating: "a", count: padding))\r\n" }
        if chunked {
            head += "Transfer-Encoding: chunked\r\n"
        } else if let transferCoding {
            head += "Transfer-Encoding: \(transferCoding)\r\n"
        } else if !untilClose {
            head += "Content-Length: \(body.count)\r\n"
        }
        let cuts = stops.contains { $0.gate == nil }
        let staysOpen = keepOpen && !cuts && !untilClose
        head +=
            "Connection: \(([staysOpen ? "keep-alive" : "close"] + connectionOptions).joined(separator: ", "))\r\n\r\n"
        guard sendAll(Array(head.utf8), to: client) else { return false }
        var sent = 0
        for end in ends.sorted() {
            for stop in stops where stop.offset == sent {
                guard let gate = stop.gate, gate.wait(seconds: 60) else { return false }
            }
            if sent > 0 || (interval > 0 && response.pieceEnds.isEmpty), interval > 0 {
                Thread.sleep(forTimeInterval: interval)
            }
            let piece = body[sent..<end]
            let bytes =
                chunked ? Array((String(piece.count, radix: 16) + "\r\n").utf8) + piece + [13, 10] : Array(piece)
            guard piece.isEmpty || sendAll(bytes, to: client) else { return false }
            sent = end
        }
        for stop in stops where stop.offset == body.count && body.count > 0 {
            guard let gate = stop.gate, gate.wait(seconds: 60) else { return false }
        }
        if chunked { return sendAll(Array("0\r\n\r\n".utf8), to: client) }
        // A body delimited by the connection's end: the connection closes now.
        return !untilClose
    }

    private static func reason(_ status: Int) -> String {
        HTTPURLResponse.localizedString(forStatusCode: status).capitalized
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

/// Runs `body` with a started ``MockServer`` and stops the server when `body` returns or throws.
///
/// ```swift
/// try await withMockServer { server in
///     server.enqueue(.json("{}"))
///     // … send requests to server.baseURL …
/// }
/// ```
public func withMockServer<Result>(
    ipv6: Bool = false, keepsAlive: Bool = false, _ body: (MockServer) async throws -> Result
) async throws -> Result {
    let server = try await MockServer.start(ipv6: ipv6, keepsAlive: keepsAlive)
    defer { server.stop() }
    return try await body(server)
}
