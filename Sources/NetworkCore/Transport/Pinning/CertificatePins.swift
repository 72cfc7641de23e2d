import Foundation

/// Public-key pins for TLS servers, as OkHttp's `CertificatePinner` writes them: for a host pattern, one or
/// more SHA-256 hashes of a certificate's SubjectPublicKeyInfo, each `sha256/` and the hash in base64.
///
/// A connection to a pinned host is used only when its verified chain (after the transport's normal
/// verification, which pinning never replaces) has a certificate whose key has one of the host's pins;
/// otherwise the request fails with ``PinningError/mismatch(host:chainPins:)``, which names the chain's pins.
/// A pattern is a host name (`api.example.com`), `*.example.com` (exactly one label before `example.com`)
/// or `**.example.com` (any number, `example.com` itself included); the pins of every pattern a host
/// matches apply. Pin a backup key too (one not yet in use), so that a new certificate does not lock
/// users out.
///
/// ```swift
/// let pins = try CertificatePins([
///     "api.example.com": ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "sha256/BAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQ="],
/// ])
/// let pool = TaskPool(configuration: .init(transport: transport, pins: pins))  // NIOTransport, say
/// ```
public struct CertificatePins: Sendable, Hashable {
    /// The pins of one host pattern.
    struct Rule: Sendable, Hashable {
        let pattern: String
        let pins: Set<String>
    }

    let rules: [Rule]

    /// Pins by host pattern. Patterns and pins are checked at once.
    /// - Throws: ``PinningError/invalidPin(_:reason:)`` for a pin that is not `sha256/` and the base64 of 32
    ///   bytes, ``PinningError/invalidPattern(_:)`` for a pattern that is not a host name, `*.` or `**.` and one.
    public init(_ pins: [String: [String]]) throws(PinningError) {
        var rules: [Rule] = []
        for (pattern, hashes) in pins.sorted(by: { $0.key < $1.key }) {
            let pattern = pattern.lowercased()
            guard Self.isValid(pattern: pattern) else { throw .invalidPattern(pattern) }
            for pin in hashes { try Self.check(pin) }
            if !hashes.isEmpty { rules.append(Rule(pattern: pattern, pins: Set(hashes))) }
        }
        self.rules = rules
    }

    /// Whether no host is pinned.
    public var isEmpty: Bool { rules.isEmpty }

    /// The pins that apply to `host` (those of every pattern it matches); empty when it is not pinned.
    public func pins(for host: String) -> Set<String> {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
        var found = Set<String>()
        for rule in rules where Self.matches(rule.pattern, host: host) { found.formUnion(rule.pins) }
        return found
    }

    /// Checks the verified chain of a connection to `host` (each certificate's DER bytes, leaf first):
    /// passes when the host is not pinned, or when a certificate of the chain has one of its pins.
    /// - Throws: ``PinningError/mismatch(host:chainPins:)``, naming the chain's pins.
    public func check(host: String, chain: [Data]) throws(PinningError) {
        let expected = pins(for: host)
        guard !expected.isEmpty else { return }
        let found = chain.map { Self.pin(ofCertificate: $0) ?? "sha256/(not an X.509 certificate)" }
        guard !expected.isDisjoint(with: found) else {
            throw .mismatch(host: host.lowercased(), chainPins: found)
        }
    }

    /// The pin of a certificate's public key (its DER bytes): `sha256/` and the SHA-256 of its
    /// SubjectPublicKeyInfo in base64; `nil` when the bytes are not an X.509 certificate. To learn a
    /// server's pins, read them from a ``PinningError/mismatch(host:chainPins:)``, or compute them with
    /// `openssl` (see the guide).
    public static func pin(ofCertificate der: Data) -> String? {
        DERReader.subjectPublicKeyInfo(ofCertificate: [UInt8](der)).map { pin(ofPublicKey: Data($0)) }
    }

    /// The pin of a public key given as the DER bytes of its SubjectPublicKeyInfo: `sha256/` and their
    /// SHA-256 in base64.
    public static func pin(ofPublicKey subjectPublicKeyInfo: Data) -> String {
        var digest = SHA256()
        digest.update(subjectPublicKeyInfo)
        return "sha256/" + Data(digest.finalize()).base64EncodedString()
    }

    private static func check(_ pin: String) throws(PinningError) {
        guard pin.hasPrefix("sha256/") else { throw .invalidPin(pin, reason: "it does not begin with sha256/") }
        guard let hash = Data(base64Encoded: String(pin.dropFirst("sha256/".count))), hash.count == 32 else {
            throw .invalidPin(pin, reason: "what follows sha256/ is not the base64 of 32 bytes")
        }
    }

    private static func isValid(pattern: String) -> Bool {
        var name = Substring(pattern)
        if name.hasPrefix("**.") {
            name = name.dropFirst(3)
        } else if name.hasPrefix("*.") {
            name = name.dropFirst(2)
        }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return !labels.isEmpty
            && labels.allSatisfy { label in
                !label.isEmpty && label.count <= 63
                    && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
            }
    }

    private static func matches(_ pattern: String, host: String) -> Bool {
        if pattern.hasPrefix("**.") {
            let base = pattern.dropFirst(3)
            return host == base || host.hasSuffix("." + base)
        }
        if pattern.hasPrefix("*.") {
            let base = pattern.dropFirst(2)
            guard host.hasSuffix("." + base) else { return false }
            let label = host.dropLast(base.count + 1)
            return !label.isEmpty && !label.contains(".")
        }
        return host == pattern
    }
}
