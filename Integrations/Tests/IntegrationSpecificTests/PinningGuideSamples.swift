// swift-format-ignore-file
// The samples are shown in Docs/Pinning.md as written here (GuideSamplesTests), so they keep its layout.
import Foundation
import NetworkCore
import NetworkCoreNIO

/// The samples of Docs/Pinning.md, compiled with the tests (never run: they name servers that do not exist;
/// PinningTests runs the same calls against TLS servers on the loopback address).
func pinningGuide() async throws {
    struct Account: Endpoint {
        var baseURL: String { "https://api.example.com" }
        var path: String { "account" }
    }
    // GUIDE-BEGIN
    let pins = try CertificatePins([
        "api.example.com": [
            "sha256/wbR6ggaXeZX5LS1dtYxcaIqaqu1sfUj+98enM/XXvKk=",  // the key in use
            "sha256/xLxLsreA0p0e9WZ3veEr+fGut/s0j28tCe/PcccdBS8=",  // the backup key, kept offline
        ],
        "**.cdn.example.com": ["sha256/BAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQ="],
    ])
    let pool = TaskPool(configuration: .init(transport: NIOTransport(), pins: pins))

    do {
        _ = try await pool.send(Account())
    } catch NetworkError.transport(let error as PinningError) {
        if case .mismatch(let host, let chainPins) = error {
            print(host, "presented", chainPins)  // leaf first: the pins to compare with yours
        }
    }

    let own = NIOTransport(configuration: .init(pins: pins))
    // GUIDE-END
    _ = own
}
