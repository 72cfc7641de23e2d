import Foundation
import Testing

@testable import NetworkCore

/// Certificate pins as values: patterns, pins, the pin of a certificate read from its DER bytes, and the check
/// of a chain. The two certificates were made with `openssl req -x509` (P-256 and RSA 2048), and their pins
/// computed with `openssl x509 -pubkey | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`.
@Suite("Certificate pins: patterns, a certificate's pin, the check of a chain")
struct CertificatePinsTests {
    static let ecPEM = """
        -----BEGIN CERTIFICATE-----
        MIIBhjCCAS2gAwIBAgIUc6MM6r4dt54JDztc8Okd/XUoFUcwCgYIKoZIzj0EAwIw
        GTEXMBUGA1UEAwwOcGlubmVkLmV4YW1wbGUwHhcNMjYxMjA3MTQwODQ2WhcNMzYx
        MjA0MTQwODQ2WjAZMRcwFQYDVQQDDA5waW5uZWQuZXhhbXBsZTBZMBMGByqGSM49
        AgEGCCqGSM49AwEHA0IABHxgtJ+AuPXZM+caHuZkivZUSlUAgB3OIHYeA4rZagva
        S1kTqFAZ64UuLAeYGEEfxOIqEyOkVcysqfGOFftKh52jUzBRMB0GA1UdDgQWBBTr
        lJnrqtYAwBBXof1U3kHnhSzHxjAfBgNVHSMEGDAWgBTrlJnrqtYAwBBXof1U3kHn
        hSzHxjAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCIBnlbdsllKCU
        KZvwx1z12MrseVos3e5rRtv1YqIprDuxAiBtXlfXSsWKc3VqE7D6/nZdXiDoYRJw
        hl/YojCR0fB30g==
        -----END CERTIFICATE-----
        """
    static let ecPin = "sha256/wbR6ggaXeZX5LS1dtYxcaIqaqu1sfUj+98enM/XXvKk="
    static let rsaPEM = """
        -----BEGIN CERTIFICATE-----
        MIIDETCCAfmgAwIBAgIUJqzIS5VRbWQha3cFSzDWkGW1jQcwDQYJKoZIhvcNAQEL
        BQAwGDEWMBQGA1UEAwwNb3RoZXIuZXhhbXBsZTAeFw0yNjEyMDcxNDA4NDZaFw0z
        NjEyMDQxNDA4NDZaMBgxFjAUBgNVBAMMDW90aGVyLmV4YW1wbGUwggEiMA0GCSqG
        SIb3DQEBAQUAA4IBDwAwggEKAoIBAQDQnq5wlRn4/O2v+nIfkrZlhO7HEogPCGBy
        QCrw6DvrZTqeTvg7HOiLJjd7uL3NVww16aIYMHefIZjJ4lDFmx3DUtAFmag8aPLs
        KECWkIqKw3LD5b/3iI7abi0YC7htcgbLXnKyqukylcj8R4xRdJKoTFr66v09xkeZ
        m95HuJgER/QccJVOKs/1PHZpRJQrpXWADxoq9R1cadGvVMyKKWEjjXbToBbOmBbh
        tymwUB1aVHXt8RdzaTtiF+j0ZclpWgdhEeCSWvi/n2TG50Iht2BfmZ9ArKKDPzF+
        rEmSj/gPTnGd8YwK3NTjS+SEWnDee1FsX0Z4Ic9rNSyOAG3cMIkXAgMBAAGjUzBR
        MB0GA1UdDgQWBBRGVtVkzsvyicDl9HANdd4+2wFeGDAfBgNVHSMEGDAWgBRGVtVk
        zsvyicDl9HANdd4+2wFeGDAPBgNVHRMBAf8EBTADAQH/MA0GCSqGSIb3DQEBCwUA
        A4IBAQCFOTkxTAjWV8JyYE1NJAmfBbVn/PNQbtwkggXIF4YKdtWAtytiDDiAUZ0w
        x7g3kjluPmP1SFk1iGzvqh1t7i2n/k7oMwi5t2qos1SSPIUdyOR8pf091mYdl3ow
        B5k2PPddn0P7q0S6DTJEu25ym09athdCV2Tx1YU/BCKPzvYGVH7vPakkbl/p/0EE
        JcLFrIEx4ufKUe7WFygaadw/HNohAsOE3DQPkjvxVydtnCdPiEZ2XLt3/njRhzEG
        Q5+BPNkcFKu7t5tOQ632Tf/eYsZB5I+0cHInJ6XAH1TmeifNJ/+wDmEmftOOytnd
        FDl7d1yYauvwdqyPf3HxamNexwmZ
        -----END CERTIFICATE-----
        """
    static let rsaPin = "sha256/xLxLsreA0p0e9WZ3veEr+fGut/s0j28tCe/PcccdBS8="
    static let backup = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()

    static func der(_ pem: String) -> Data {
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Data(base64Encoded: body)!
    }

    @Test("a certificate's pin is openssl's: the SHA-256 of its SubjectPublicKeyInfo, EC and RSA")
    func pinOfCertificate() {
        #expect(CertificatePins.pin(ofCertificate: Self.der(Self.ecPEM)) == Self.ecPin)
        #expect(CertificatePins.pin(ofCertificate: Self.der(Self.rsaPEM)) == Self.rsaPin)
    }

    @Test("bytes that are not a certificate have no pin, cut anywhere or changed, never a crash")
    func notCertificates() {
        let der = [UInt8](Self.der(Self.ecPEM))
        #expect(CertificatePins.pin(ofCertificate: Data()) == nil)
        #expect(CertificatePins.pin(ofCertificate: Data([0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF])) == nil)
        var pins = 0
        for end in 0..<der.count where CertificatePins.pin(ofCertificate: Data(der[..<end])) != nil { pins += 1 }
        #expect(pins == 0)
        var changed = der
        changed[0] = 0x31
        #expect(CertificatePins.pin(ofCertificate: Data(changed)) == nil)
    }

    @Test(
        "patterns: an exact host, *. for one label, **. for any number and the base itself; case and a final dot ignored",
        arguments: [
            ("api.example.com", "api.example.com", true), ("api.example.com", "API.Example.COM.", true),
            ("api.example.com", "www.example.com", false), ("*.example.com", "api.example.com", true),
            ("*.example.com", "example.com", false), ("*.example.com", "a.b.example.com", false),
            ("*.example.com", "badexample.com", false), ("**.example.com", "example.com", true),
            ("**.example.com", "a.b.example.com", true), ("**.example.com", "example.org", false),
        ])
    func patterns(_ pattern: String, host: String, pinned: Bool) throws {
        let pins = try CertificatePins([pattern: [Self.ecPin]])
        #expect(pins.pins(for: host) == (pinned ? [Self.ecPin] : []))
    }

    @Test("the pins of every pattern a host matches apply; a host without pins passes any chain")
    func union() throws {
        let pins = try CertificatePins(["*.example.com": [Self.ecPin], "api.example.com": [Self.backup]])
        #expect(pins.pins(for: "api.example.com") == [Self.ecPin, Self.backup])
        #expect(pins.pins(for: "www.example.com") == [Self.ecPin])
        try pins.check(host: "elsewhere.org", chain: [])
        let none = try CertificatePins([:])
        #expect(!pins.isEmpty && none.isEmpty)
    }

    @Test(
        "a chain passes when any certificate has a pin of the host, leaf or not; else the error names the chain's pins")
    func check() throws {
        let ec = Self.der(Self.ecPEM)
        let rsa = Self.der(Self.rsaPEM)
        let pinned = try CertificatePins(["api.example.com": [Self.rsaPin, Self.backup]])
        try pinned.check(host: "api.example.com", chain: [rsa])
        try pinned.check(host: "api.example.com", chain: [ec, rsa])  // an intermediate's key
        #expect(throws: PinningError.mismatch(host: "api.example.com", chainPins: [Self.ecPin])) {
            try pinned.check(host: "api.example.com", chain: [ec])
        }
        #expect(throws: PinningError.mismatch(host: "api.example.com", chainPins: [])) {
            try pinned.check(host: "API.example.com", chain: [])
        }
        let description = PinningError.mismatch(host: "api.example.com", chainPins: [Self.ecPin]).description
        #expect(description.contains(Self.ecPin) && description.contains("api.example.com"))
    }

    @Test(
        "pins and patterns are checked when made",
        arguments: [
            (["api.example.com": ["sha1/AAAA"]], "invalidPin"), (["api.example.com": ["sha256/AAAA"]], "invalidPin"),
            (["api.example.com": ["sha256/!!!"]], "invalidPin"), (["": [ecPin]], "invalidPattern"),
            (["*": [ecPin]], "invalidPattern"), (["a..b": [ecPin]], "invalidPattern"),
            (["https://api.example.com": [ecPin]], "invalidPattern"), (["*.*.example.com": [ecPin]], "invalidPattern"),
        ])
    func invalid(_ pins: [String: [String]], kind: String) {
        #expect {
            _ = try CertificatePins(pins)
        } throws: { error in
            switch error as? PinningError {
            case .invalidPin: kind == "invalidPin"
            case .invalidPattern: kind == "invalidPattern"
            default: false
            }
        }
    }
}
