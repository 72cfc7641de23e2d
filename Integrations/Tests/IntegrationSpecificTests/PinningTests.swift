import Crypto
import Foundation
import NIOSSL
import NetworkCore
import NetworkCoreAsyncHTTPClient
import NetworkCoreNIO
import SwiftASN1
import Testing
import X509

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Certificates made for a test with swift-certificates: a root, an intermediate under it, and leaves for
/// `localhost` under the intermediate (or with other dates or names), each with a key of its own. A server
/// presents a leaf and the intermediate; the client trusts the root.
struct TestChain {
    struct Issued {
        let certificate: Certificate
        let key: P256.Signing.PrivateKey
        /// The pin of its SubjectPublicKeyInfo as the certificate's bytes hold it (what `openssl` gives; the
        /// DER reader is checked against `openssl` in `CertificatePinsTests`).
        let pin: String

        init(certificate: Certificate, key: P256.Signing.PrivateKey) throws {
            self.certificate = certificate
            self.key = key
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            pin = try #require(CertificatePins.pin(ofCertificate: Data(serializer.serializedBytes)))
        }
    }

    let root: Issued
    let intermediate: Issued

    init() throws {
        let now = Date()
        let rootKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("NetworkCore test root") }
        root = try Issued(
            certificate: try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
                notValidBefore: now - 3_600, notValidAfter: now + 86_400, issuer: rootName, subject: rootName,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    KeyUsage(keyCertSign: true)
                }, issuerPrivateKey: .init(rootKey)),
            key: rootKey)
        let intermediateKey = P256.Signing.PrivateKey()
        let intermediateName = try DistinguishedName { CommonName("NetworkCore test intermediate") }
        intermediate = try Issued(
            certificate: try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
                notValidBefore: now - 3_600, notValidAfter: now + 86_400, issuer: rootName,
                subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    KeyUsage(keyCertSign: true)
                }, issuerPrivateKey: .init(rootKey)),
            key: intermediateKey)
    }

    /// A leaf for `name` under the intermediate, valid from `from` to `until` seconds from now.
    func leaf(
        for name: String = "localhost", from: TimeInterval = -3_600, until: TimeInterval = 86_400
    ) throws
        -> Issued
    {
        let key = P256.Signing.PrivateKey()
        let now = Date()
        return try Issued(
            certificate: try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: now + from,
                notValidAfter: now + until, issuer: intermediate.certificate.subject,
                subject: try DistinguishedName { CommonName(name) }, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    SubjectAlternativeNames([.dnsName(name)])
                }, issuerPrivateKey: .init(intermediate.key)),
            key: key)
    }

    /// The files a test server presents `leaf` with (the leaf and the intermediate, and the leaf's key).
    func serving(_ leaf: Issued) throws -> SelfSignedCertificate {
        let files = SelfSignedCertificate(
            directory: FileManager.default.temporaryDirectory.appendingPathComponent("nc-pins-\(UUID().uuidString)"))
        try FileManager.default.createDirectory(at: files.directory, withIntermediateDirectories: true)
        let chain = try [leaf.certificate, intermediate.certificate].map { try $0.serializeAsPEM().pemString }
        try chain.joined(separator: "\n").write(to: files.certificate, atomically: true, encoding: .utf8)
        try leaf.key.pemRepresentation.write(to: files.key, atomically: true, encoding: .utf8)
        return files
    }

    /// A transport that trusts the root, with `pins` of its own.
    func transport(pins: CertificatePins? = nil) throws -> NIOTransport {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([
            try NIOSSLCertificate(bytes: Array(root.certificate.serializeAsPEM().pemString.utf8), format: .pem)
        ])
        return NIOTransport(configuration: .init(tls: tls, pins: pins))
    }
}

@Suite("Certificate pins over NIOTransport, against TLS servers with chains made for the test", .timeLimit(.minutes(1)))
struct PinningTests {
    let chain: TestChain

    init() throws { chain = try TestChain() }

    /// A server for `leaf` on 127.0.0.1, stopped and its files removed after `body`.
    @discardableResult
    func serving<T>(_ leaf: TestChain.Issued, _ body: (String) async throws -> T) async throws -> T {
        let files = try chain.serving(leaf)
        defer { files.remove() }
        let server = try await TestServer.start(tls: files)
        defer { server.stop() }
        return try await body("https://localhost:\(server.port)")
    }

    static func pinning(_ pins: [String: [String]]) throws -> TaskPool.Configuration {
        .init(pins: try CertificatePins(pins))
    }

    /// The pinning error of a send, or `nil` when it did not fail with one.
    static func pinningError(_ send: () async throws -> Void) async -> PinningError? {
        do {
            try await send()
            return nil
        } catch {
            guard case .transport(let underlying) = error as? NetworkError, let pinning = underlying as? PinningError
            else {
                Issue.record("not a pinning error: \(error)")
                return nil
            }
            return pinning
        }
    }

    @Test("a pin of the leaf, of the intermediate or of the root passes; so does **. for the host itself")
    func pinnedPasses() async throws {
        let leaf = try chain.leaf()
        try await serving(leaf) { base in
            for (pattern, pin) in [
                ("localhost", leaf.pin), ("localhost", chain.intermediate.pin), ("localhost", chain.root.pin),
                ("**.localhost", leaf.pin),
            ] {
                var configuration = try Self.pinning([pattern: [pin]])
                configuration.transport = try chain.transport()
                let response = try await TaskPool(configuration: configuration).send(
                    TestEndpoint(baseURL: base, path: "pinned"))
                #expect(response.body == Data("/pinned".utf8), "\(pattern): \(pin)")
            }
        }
    }

    @Test(
        "no pin in the verified chain: a mismatch naming the host and the chain's pins, leaf first; never retried; a second chain of the same root with another key fails too"
    )
    func mismatch() async throws {
        let leaf = try chain.leaf()
        let other = try chain.leaf()  // valid, same root, another key
        let logger = InMemoryLogger()
        var configuration = try Self.pinning(["localhost": [other.pin]])
        configuration.transport = try chain.transport()
        configuration.logger = logger
        configuration.interceptors = [RetryPolicy(maximumAttempts: 3)]
        let pool = TaskPool(configuration: configuration)
        try await serving(leaf) { base in
            let error = await Self.pinningError { _ = try await pool.send(TestEndpoint(baseURL: base, path: "x")) }
            #expect(
                error == .mismatch(host: "localhost", chainPins: [leaf.pin, chain.intermediate.pin, chain.root.pin]))
        }
        #expect(logger.count(.retrying) == 0)
        #expect(logger.count(.failed) == 1)
        try await serving(other) { base in
            _ = try await pool.send(TestEndpoint(baseURL: base, path: "other"))
        }
    }

    @Test(
        "verification first: an expired certificate, or one for another name, fails with its pin as a TLS error, not a pin's"
    )
    func verificationFirst() async throws {
        for leaf in [try chain.leaf(from: -7_200, until: -3_600), try chain.leaf(for: "elsewhere.example")] {
            var configuration = try Self.pinning(["localhost": [leaf.pin, chain.root.pin]])
            configuration.transport = try chain.transport()
            let pool = TaskPool(configuration: configuration)
            try await serving(leaf) { base in
                await #expect {
                    _ = try await pool.send(TestEndpoint(baseURL: base, path: "x"))
                } throws: { error in
                    guard case .transport(let underlying) = error as? NetworkError else { return false }
                    return (underlying as? URLError)?.code == .secureConnectionFailed
                }
            }
        }
    }

    @Test("a host without pins is unaffected: *. does not match the host itself, another host's pins do not apply")
    func unpinnedHost() async throws {
        let leaf = try chain.leaf()
        let wrong = "sha256/" + Data(repeating: 1, count: 32).base64EncodedString()
        try await serving(leaf) { base in
            for pins in [["*.localhost": [wrong]], ["api.example.com": [wrong]]] {
                var configuration = try Self.pinning(pins)
                configuration.transport = try chain.transport()
                let response = try await TaskPool(configuration: configuration).send(
                    TestEndpoint(baseURL: base, path: "free"))
                #expect(response.statusCode == 200)
            }
        }
    }

    @Test("the transport's own pins apply too, and a socket's opening (wss) is checked as a request is")
    func transportPinsAndSockets() async throws {
        let leaf = try chain.leaf()
        let other = try chain.leaf()
        try await serving(leaf) { base in
            let pinned = TaskPool(
                configuration: .init(
                    transport: try chain.transport(pins: try CertificatePins(["localhost": [other.pin]]))))
            let request = await Self.pinningError { _ = try await pinned.send(TestEndpoint(baseURL: base, path: "x")) }
            #expect(
                request == .mismatch(host: "localhost", chainPins: [leaf.pin, chain.intermediate.pin, chain.root.pin]))
            let socketURL = base.replacingOccurrences(of: "https:", with: "wss:")
            let socket = await Self.pinningError {
                _ = try await pinned.webSocket(TestEndpoint(baseURL: socketURL, path: "ws"))
            }
            #expect(
                socket == .mismatch(host: "localhost", chainPins: [leaf.pin, chain.intermediate.pin, chain.root.pin]))
        }
    }

    @Test("a kept connection made without pins is not used for a pinned request: a new one is verified")
    func keptConnections() async throws {
        let leaf = try chain.leaf()
        let files = try chain.serving(leaf)
        defer { files.remove() }
        let server = try await TestServer.start(tls: files)
        defer { server.stop() }
        let transport = try chain.transport()
        let base = "https://localhost:\(server.port)"
        let free = TaskPool(configuration: .init(transport: transport))
        _ = try await free.send(TestEndpoint(baseURL: base, path: "one"))
        _ = try await free.send(TestEndpoint(baseURL: base, path: "two"))
        #expect(server.connections == 1)
        var configuration = try Self.pinning(["localhost": [chain.intermediate.pin]])
        configuration.transport = transport
        let pinned = TaskPool(configuration: configuration)
        _ = try await pinned.send(TestEndpoint(baseURL: base, path: "three"))
        _ = try await pinned.send(TestEndpoint(baseURL: base, path: "four"))
        #expect(server.connections == 2)  // one more, verified, then kept for the pinned requests
        #expect(server.requests == 4)
    }

    @Test(
        "transports that cannot pin refuse at once, naming why and the transport that can; plain http to a pinned host is refused; nothing is sent"
    )
    func refusals() async throws {
        let pins = try CertificatePins(["localhost": [chain.root.pin]])
        let server = try await TestServer.start()
        defer { server.stop() }
        for (transport, name) in [
            (AsyncHTTPClientTransport() as any Transport, "AsyncHTTPClientTransport"),
            (URLSessionTransport(), "URLSessionTransport"),
        ] {
            let pool = TaskPool(configuration: .init(transport: transport, pins: pins))
            let error = await Self.pinningError {
                _ = try await pool.send(TestEndpoint(baseURL: "https://localhost:\(server.port)", path: "x"))
            }
            guard case .unsupported(let refused, let reason)? = error else {
                Issue.record("\(name): \(String(describing: error))")
                continue
            }
            #expect(refused == name)
            #expect(!reason.isEmpty)
            #expect(error?.description.contains("NIOTransport") == true)
            // A host without pins goes as always.
            let response = try await pool.send(TestEndpoint(baseURL: server.baseURL, path: "unpinned"))
            #expect(response.statusCode == 200)
        }
        let pool = TaskPool(configuration: .init(transport: try chain.transport(), pins: pins))
        let plain = await Self.pinningError {
            _ = try await pool.send(TestEndpoint(baseURL: "http://localhost:\(server.port)", path: "x"))
        }
        #expect(plain == .notEncrypted(host: "localhost"))
        #expect(server.requests == 2)
    }
}
