import Foundation
import NIOConcurrencyHelpers
import NIOSSL
import NetworkCore
import NetworkCoreNIO
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// nginx with `http2` on TLS, run as a plain process from a folder of its own on a free port of 127.0.0.1,
/// with a certificate the test makes for `localhost`: `/small.json`, `/big` (100 MB) for downloads,
/// `/upload/` storing PUT bodies, `/reset` answered by resetting the stream (`return 444`). Its access log
/// names each request's connection and protocol. A connection serves `requestsPerConnection` requests, then
/// nginx sends GOAWAY; `streams` at once. Stopped by its PID.
final class NginxHTTP2: @unchecked Sendable {  // immutable once started
    static let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var isAvailable: Bool { binary != nil }

    let prefix: URL
    let port: Int
    let certificate: SelfSignedCertificate
    private let process: Process

    init(requestsPerConnection: Int = 100_000, bigFileBytes: Int = 0, streams: Int = 128) async throws {
        // RSA: the pinning test pins an RSA certificate's key.
        certificate = try await SelfSignedCertificate.make(rsa: true)
        prefix = FileManager.default.temporaryDirectory.appendingPathComponent("nc-nginx-\(UUID().uuidString)")
        let www = prefix.appendingPathComponent("www")
        for folder in ["www/upload", "body", "logs"] {
            try FileManager.default.createDirectory(
                at: prefix.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        // nginx's workers run as an unprivileged user when it is started as root.
        for (folder, mode) in [("", 0o755), ("www", 0o755), ("www/upload", 0o777), ("body", 0o777)] {
            try FileManager.default.setAttributes(
                [.posixPermissions: mode], ofItemAtPath: prefix.appendingPathComponent(folder).path)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: certificate.directory.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: certificate.key.path)
        try Data(#"{"id":1,"name":"small"}"#.utf8).write(to: www.appendingPathComponent("small.json"))
        if bigFileBytes > 0 { try Self.writePattern(bigFileBytes, to: www.appendingPathComponent("big")) }
        port = try freePort()
        let configuration = """
            worker_processes 1;
            daemon off;
            pid \(prefix.path)/nginx.pid;
            error_log \(prefix.path)/logs/error.log warn;
            events { worker_connections 1024; }
            http {
                log_format connections '$connection $server_protocol $status $request_length';
                access_log \(prefix.path)/logs/access.log connections;
                keepalive_requests \(requestsPerConnection);
                http2_max_concurrent_streams \(streams);
                types { application/json json; }
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate \(certificate.certificate.path);
                    ssl_certificate_key \(certificate.key.path);
                    root \(www.path);
                    location = /reset { return 444; }
                    location /upload/ {
                        dav_methods PUT;
                        client_max_body_size 0;
                        client_body_temp_path \(prefix.path)/body;
                    }
                }
            }
            """
        let file = prefix.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.binary))
        process.arguments = ["-p", prefix.path, "-c", file.path]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try await waitForListener(port: port, process: process)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: prefix)
        certificate.remove()
    }

    /// `https://localhost:port`.
    var base: String { "https://localhost:\(port)" }

    /// The endpoint at `path` (with its query, if any).
    func endpoint(_ path: String, method: HTTPMethod = .get, task: HTTPTask = .plain) -> ServerEndpoint {
        ServerEndpoint(baseURL: base, path: path, method: method, task: task)
    }

    /// A transport that trusts the test's certificate.
    func transport(_ configure: (inout NIOTransport.Configuration) -> Void = { _ in }) -> NIOTransport {
        var configuration = NIOTransport.Configuration()
        configuration.tls.trustRoots = .file(certificate.certificate.path)
        configure(&configuration)
        return NIOTransport(configuration: configuration)
    }

    /// The access log's lines so far: connection number, protocol, status, request length.
    func requests() throws -> [(connection: String, version: String, status: Int, length: Int)] {
        let text = try String(contentsOf: prefix.appendingPathComponent("logs/access.log"), encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 4, let status = Int(parts[2]), let length = Int(parts[3]) else { return nil }
            return (String(parts[0]), String(parts[1]), status, length)
        }
    }

    /// Writes `count` bytes of a pattern that shows a shifted, lost or repeated piece: each MiB numbered.
    static func writePattern(_ count: Int, to file: URL) throws {
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else { throw POSIXError(.EIO) }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        var block = [UInt8](repeating: 0, count: 1 << 20)
        for index in block.indices { block[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 12) }
        var written = 0
        while written < count {
            withUnsafeBytes(of: UInt64(written >> 20).bigEndian) { block.replaceSubrange(0..<8, with: $0) }
            let length = min(block.count, count - written)
            try handle.write(contentsOf: block[0..<length])
            written += length
        }
    }
}

/// A port of 127.0.0.1 nothing listens on now.
func freePort() throws -> Int {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
            bind(socket, address, length) == 0 && getsockname(socket, address, &length) == 0
        }
    }
    guard bound else { throw POSIXError(.EADDRINUSE) }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Waits until something accepts connections on 127.0.0.1:`port` (10 s at most), or `process` exits.
func waitForListener(port: Int, process: Process) async throws {
    for _ in 0..<200 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        close(socket)
        if connected { return }
        guard process.isRunning else { break }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw POSIXError(.ECONNREFUSED)
}

/// A path of a test server.
struct ServerEndpoint: Endpoint {
    let baseURL: String
    let path: String
    var method: HTTPMethod = .get
    var task: HTTPTask = .plain
}

@Suite(
    "HTTP/2 over NIOTransport, against nginx",
    .enabled(if: NginxHTTP2.isAvailable || ProcessInfo.processInfo.environment["CI"] == "true"),
    .timeLimit(.minutes(2)))
struct HTTP2Tests {
    @Test("1,000 requests at 100 in flight go over one HTTP/2 connection, each answered and decoded")
    func oneConnection() async throws {
        let nginx = try await NginxHTTP2()
        let transport = nginx.transport()
        let pool = TaskPool(
            configuration: .init(transport: transport, maximumConcurrentTasks: 100, maximumTasksPerHost: 100))
        struct Small: Decodable, Equatable {
            let id: Int
            let name: String
        }
        let versions = NIOLockedValueBox<[String: Int]>([:])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<1_000 {
                if index >= 100 { try await group.next() }
                group.addTask {
                    let response = try await pool.send(nginx.endpoint("small.json?id=\(index)"))
                    #expect(try JSONDecoder().decode(Small.self, from: response.body) == Small(id: 1, name: "small"))
                    versions.withLockedValue { $0[response.head.httpVersion ?? "none", default: 0] += 1 }
                }
            }
            try await group.waitForAll()
        }
        await transport.shutdown()
        let requests = try nginx.requests()
        #expect(requests.count == 1_000)
        #expect(Set(requests.map(\.connection)).count == 1)
        #expect(requests.allSatisfy { $0.version == "HTTP/2.0" && $0.status == 200 })
        #expect(versions.withLockedValue { $0 } == ["HTTP/2.0": 1_000])
    }

    @Test(
        "a GOAWAY mid-load: nginx ends each connection after 50 requests; 1,000 at 100 in flight all succeed, on new connections"
    )
    func goAway() async throws {
        let nginx = try await NginxHTTP2(requestsPerConnection: 50)
        let transport = nginx.transport()
        let logger = InMemoryLogger()
        let pool = TaskPool(
            configuration: .init(
                transport: transport, logger: logger, maximumConcurrentTasks: 100, maximumTasksPerHost: 100))
        let failures = NIOLockedValueBox<[String]>([])
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<1_000 {
                if index >= 100 { await group.next() }
                group.addTask {
                    do {
                        let response = try await pool.send(nginx.endpoint("small.json?id=\(index)"))
                        if response.statusCode != 200 {
                            failures.withLockedValue { $0.append("status \(response.statusCode)") }
                        }
                    } catch {
                        failures.withLockedValue { $0.append("\(error)") }
                    }
                }
            }
        }
        await transport.shutdown()
        let failed = failures.withLockedValue { $0 }
        #expect(failed.count == 0, "\(failed.count) failed, the first: \(failed.first ?? "")")
        let requests = try nginx.requests()
        // Each request reached nginx once (a refused stream is not logged), none was retried by the pool.
        #expect(requests.count == 1_000)
        #expect(logger.count(.retrying) == 0)
        let connections = Dictionary(grouping: requests, by: \.connection)
        #expect(connections.count >= 20)
        #expect(connections.values.allSatisfy { $0.count <= 50 })
    }

    @Test(
        "a stream the server resets fails as a lost connection naming the reset; the connection serves the next request"
    )
    func streamReset() async throws {
        let nginx = try await NginxHTTP2()
        let transport = nginx.transport()
        let pool = TaskPool(configuration: .init(transport: transport, maximumAttempts: 1))
        _ = try await pool.send(nginx.endpoint("small.json?before"))
        let failure: NetworkError?
        do {
            _ = try await pool.send(nginx.endpoint("reset"))
            failure = nil
        } catch {
            failure = error
        }
        let lost = try #require(failure?.urlError)
        #expect(lost.code == .networkConnectionLost)
        #expect(lost.localizedDescription.contains("reset the request's HTTP/2 stream"))
        let after = try await pool.send(nginx.endpoint("small.json?after"))
        #expect(after.statusCode == 200)
        await transport.shutdown()
        let requests = try nginx.requests()
        #expect(Set(requests.map(\.connection)).count == 1)
    }

    @Test("a 100 MB download and a 100 MB upload under flow control arrive whole, byte for byte")
    func largeBodies() async throws {
        let size = 100 << 20
        let nginx = try await NginxHTTP2(bigFileBytes: size)
        let transport = nginx.transport()
        let pool = TaskPool(configuration: .init(transport: transport))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let downloaded = scratch.file("big")
        let response = try await pool.download(nginx.endpoint("big"), to: downloaded)
        #expect(response.head.httpVersion == "HTTP/2.0")
        let original = try Data(contentsOf: nginx.prefix.appendingPathComponent("www/big"))
        #expect(try Data(contentsOf: downloaded) == original)

        let uploaded = try await pool.send(
            nginx.endpoint(
                "upload/copy", method: .put, task: .file(downloaded, contentType: "application/octet-stream")))
        #expect(uploaded.statusCode == 201)
        #expect(try Data(contentsOf: nginx.prefix.appendingPathComponent("www/upload/copy")) == original)
        await transport.shutdown()
        let requests = try nginx.requests()
        #expect(requests.map(\.version) == ["HTTP/2.0", "HTTP/2.0"])
        #expect(requests.last.map { $0.length >= size } == true)
        #expect(Set(requests.map(\.connection)).count == 1)
    }

    @Test("a stream's reader that stops holds the server back by flow control; reading on gets every byte")
    func backPressure() async throws {
        let size = 32 << 20
        let nginx = try await NginxHTTP2(bigFileBytes: size)
        let transport = nginx.transport()
        // Not reading: the stream holds its high-water mark, the stream's window (1 MiB) is not given back, and
        // nginx waits.
        try await expectBackPressure(
            TaskPool(configuration: .init(transport: transport)), reading: nginx.endpoint("big"), size: size)
        await transport.shutdown()
    }

    @Test("a cancelled download resets its stream only: the connection carries the next request")
    func cancelResetsStream() async throws {
        let nginx = try await NginxHTTP2(bigFileBytes: 32 << 20)
        let transport = nginx.transport()
        let pool = TaskPool(configuration: .init(transport: transport))
        let stream = try await pool.stream(nginx.endpoint("big"), id: "big")
        var iterator = stream.makeAsyncIterator()
        _ = try await iterator.next()
        #expect(pool.cancel(id: "big"))
        await #expect(throws: (any Error).self) { while try await iterator.next() != nil {} }
        let after = try await pool.send(nginx.endpoint("small.json"))
        #expect(after.head.httpVersion == "HTTP/2.0")
        await transport.shutdown()
        let requests = try nginx.requests()
        #expect(requests.count == 2)
        #expect(Set(requests.map(\.connection)).count == 1)
    }

    @Test("with http2 off, https requests go over HTTP/1.1 to the same server")
    func http2Off() async throws {
        let nginx = try await NginxHTTP2()
        let transport = nginx.transport { $0.http2 = false }
        let pool = TaskPool(configuration: .init(transport: transport))
        let response = try await pool.send(nginx.endpoint("small.json"))
        #expect(response.head.httpVersion == "HTTP/1.1")
        await transport.shutdown()
        #expect(try nginx.requests().map(\.version) == ["HTTP/1.1"])
    }

    @Test("the server's limit of streams becomes the pool's limit for the host: 8 at once, the rest wait in the pool")
    func serverStreamLimit() async throws {
        let nginx = try await NginxHTTP2(streams: 8)
        let transport = nginx.transport()
        let pool = TaskPool(configuration: .init(transport: transport, maximumConcurrentTasks: 100))
        // The first requests learn the server's settings; the next one tells the pool.
        for index in 0..<2 { _ = try await pool.send(nginx.endpoint("small.json?warm=\(index)")) }
        // 100 sends wait in the paused pool; on resume it starts as many as the host's limit allows, at once.
        pool.pause()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask { _ = try await pool.send(nginx.endpoint("small.json?id=\(index)")) }
            }
            // Bounded: until every send waits in the queue.
            for _ in 0..<1_000 where pool.queuedCount < 100 { try await Task.sleep(nanoseconds: 1_000_000) }
            #expect(pool.queuedCount == 100)
            pool.resume()
            // 8 started (the server's streams), not 64 (the transport's own limit): 92 still wait.
            #expect(pool.queuedCount == 92)
            try await group.waitForAll()
        }
        await transport.shutdown()
        #expect(try nginx.requests().count == 102)
    }

    @Test(
        "pins hold over HTTP/2: an RSA certificate's pin made with openssl, as the guide says, passes on one connection; another pin fails typed"
    )
    func pinned() async throws {
        let nginx = try await NginxHTTP2()
        // Docs/Pinning.md's command, on the certificate's file rather than a server's answer.
        let made = try await ChildProcess.run(
            at: URL(fileURLWithPath: "/bin/sh"),
            [
                "-c",
                "openssl x509 -in '\(nginx.certificate.certificate.path)' -pubkey -noout | openssl pkey -pubin -outform der"
                    + " | openssl dgst -sha256 -binary | openssl enc -base64",
            ])
        #expect(made.status == 0, "\(made.errors)")
        let pin = "sha256/" + made.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let transport = nginx.transport()
        let pinned = TaskPool(
            configuration: .init(transport: transport, pins: try CertificatePins(["localhost": [pin]])))
        for index in 0..<3 {
            let response = try await pinned.send(nginx.endpoint("small.json?pinned=\(index)"))
            #expect(response.head.httpVersion == "HTTP/2.0")
        }
        let wrong = "sha256/" + Data(repeating: 1, count: 32).base64EncodedString()
        let other = TaskPool(
            configuration: .init(transport: transport, pins: try CertificatePins(["localhost": [wrong]])))
        do {
            _ = try await other.send(nginx.endpoint("small.json?wrong"))
            Issue.record("a request with a pin the chain lacks was answered")
        } catch {
            guard case .transport(let underlying) = error, let pinning = underlying as? PinningError else {
                Issue.record("not a pinning error: \(error)")
                return
            }
            #expect(pinning == .mismatch(host: "localhost", chainPins: [pin]))
        }
        await transport.shutdown()
        let requests = try nginx.requests()
        #expect(requests.count == 3)
        #expect(Set(requests.map(\.connection)).count == 1)
    }
}
