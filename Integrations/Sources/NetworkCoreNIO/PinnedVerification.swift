import Foundation
import NIOCore
import NIOSSL
import NetworkCore
import SwiftASN1
import X509

/// The verification of a connection to a pinned host: what BoringSSL would check (the chain to a trusted
/// root, each certificate's dates, the server's name), done with swift-certificates so that the verified
/// chain is known, then the pins of that chain. SwiftNIO SSL's custom verification replaces BoringSSL's
/// own, so it must do all of it; hosts without pins keep BoringSSL's.
struct PinnedVerification: Sendable {
    /// The trust roots of the transport's TLS configuration.
    let roots: CertificateStore
    /// Whether the server's name is checked (not with `noHostnameVerification`).
    let checksName: Bool

    /// The roots and checks of `tls`. Throws when it verifies nothing (`certificateVerification` is `none`):
    /// pins are checked against a verified chain, and there is none.
    init(_ tls: TLSConfiguration) async throws {
        switch tls.certificateVerification {
        case .none:
            throw PinningError.unsupported(
                transport: "NIOTransport",
                reason: "its TLS configuration verifies no certificate (certificateVerification is none)")
        case .noHostnameVerification: checksName = false
        default: checksName = true
        }
        var store: CertificateStore
        switch tls.trustRoots ?? .default {
        case .default: store = CertificateStore.systemTrustRoots
        case .certificates(let certificates): store = CertificateStore(try Self.converted(certificates))
        case .file(let path): store = CertificateStore(try Self.converted(try NIOSSLCertificate.fromPEMFile(path)))
        }
        for additional in tls.additionalTrustRoots {
            switch additional {
            case .certificates(let certificates): store.append(contentsOf: try Self.converted(certificates))
            case .file(let path): store.append(contentsOf: try Self.converted(try NIOSSLCertificate.fromPEMFile(path)))
            }
        }
        roots = store
    }

    private static func converted(_ certificates: [NIOSSLCertificate]) throws -> [Certificate] {
        try certificates.map { try Certificate(derEncoded: try $0.toDERBytes()) }
    }

    /// Verifies the chain `presented` (leaf first) for `host`: the verified chain's pins, leaf first, or
    /// `nil` when it does not verify.
    func verify(_ presented: [NIOSSLCertificate], host: String?) async -> [String]? {
        guard let leafBytes = try? presented.first?.toDERBytes(), let leaf = try? Certificate(derEncoded: leafBytes),
            let intermediates = try? Self.converted(Array(presented.dropFirst()))
        else { return nil }
        let result: CertificateValidationResult
        if checksName {
            var verifier = Verifier(rootCertificates: roots) {
                RFC5280Policy()
                ServerIdentityPolicy(serverHostname: host, serverIP: nil)
            }
            result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(intermediates))
        } else {
            var verifier = Verifier(rootCertificates: roots) { RFC5280Policy() }
            result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(intermediates))
        }
        guard case .validCertificate(let chain) = result else { return nil }
        // Each certificate's public key as the certificate holds it: its bytes, not swift-certificates' encoding
        // of the key, which for RSA differs from them (and from the pin `openssl` gives).
        var pins: [String] = []
        for certificate in chain {
            var serializer = DER.Serializer()
            guard (try? serializer.serialize(certificate)) != nil,
                let pin = CertificatePins.pin(ofCertificate: Data(serializer.serializedBytes))
            else { return nil }
            pins.append(pin)
        }
        return pins
    }
}
