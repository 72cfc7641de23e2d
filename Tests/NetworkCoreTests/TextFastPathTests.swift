import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The byte-level shortcuts the request builder takes must give exactly what Foundation gives.
@Suite("Text fast paths agree with Foundation")
struct TextFastPathTests {
    static let tokenBytes = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~".utf8)

    @Test("header names are spelled as FoundationNetworking's setValue(_:forHTTPHeaderField:) spells them")
    func headerNames() {
        let table = [
            "accept", "Accept", "x-api-key", "X-API-KEY", "content-TYPE", "www_authenticate", "x.trace", "a1b",
            "x-1abc", "dnt", "x--y", "x'y", "x^y", "x`y", "-'y", "'a", "x''Y", "9lives", "X", "x",
        ]
        for name in table {
            #expect(HeaderName.canonical(name) == name.capitalized, "\(name)")
        }
        var generator = SeededRandom(seed: 42)
        for _ in 0..<2_000 {
            let length = Int.random(in: 1...12, using: &generator)
            let bytes = (0..<length).map { _ in Self.tokenBytes.randomElement(using: &generator)! }
            let name = String(decoding: bytes, as: UTF8.self)
            #expect(HeaderName.canonical(name) == name.capitalized, "\(name)")
        }
    }

    @Test("a pool's default headers are checked once: canonical names, nil for a bad name or value")
    func checkedHeaders() {
        #expect(
            HeaderName.checked(["accept": "application/json", "x-api-key": "k"])
                == ["Accept": "application/json", "X-Api-Key": "k"])
        #expect(HeaderName.checked([:]) == [:])
        for bad in [["Bad Name": "v"], ["": "v"], ["X-A": "v\r\nX-B: 1"], ["X-A": "v\u{0}"], ["Caf\u{E9}": "v"]] {
            #expect(HeaderName.checked(bad) == nil, "\(bad)")
        }
    }

    @Test("two header names are the same when only the case of ASCII letters differs, for every pair of ASCII bytes")
    func sameNames() {
        var same = 0
        for first in UInt8(0)..<128 {
            for second in UInt8(0)..<128 {
                let a = "x-" + String(decoding: [first], as: UTF8.self)
                let b = "X-" + String(decoding: [second], as: UTF8.self)
                let expected = a.lowercased() == b.lowercased()
                #expect(HeaderName.same(a, b) == expected, "\(first) \(second)")
                if expected { same += 1 }
            }
        }
        #expect(same == 128 + 52)  // each byte with itself, and each letter with its other case
        #expect(!HeaderName.same("Content-Length", "Content-Lengths"))
        #expect(HeaderName.same("CONTENT-LENGTH", "content-length"))
        // A string made through NSString (bridged, not native, on Apple platforms) gives the same answer.
        let bridged = String(NSString(string: "Set-Cookie"))
        #expect(HeaderName.same(bridged, "set-cookie"))
    }

    @Test("a request carries each header once, under the name setValue would give, later sources winning")
    func mergedHeaders() throws {
        let request = try TestEndpoint(headers: ["x-trace": "endpoint", "ACCEPT": "text/plain"])
            .urlRequest(defaultHeaders: ["Accept": "application/json", "X-Trace": "pool", "user-agent": "UA"])
        #expect(request.allHTTPHeaderFields == ["Accept": "text/plain", "X-Trace": "endpoint", "User-Agent": "UA"])
        var expected = URLRequest(url: request.url!)
        for (name, value) in ["Accept": "text/plain", "x-trace": "endpoint", "user-agent": "UA"] {
            expected.setValue(value, forHTTPHeaderField: name)
        }
        #if canImport(FoundationNetworking)
            #expect(request.allHTTPHeaderFields == expected.allHTTPHeaderFields)
        #endif
    }

    @Test("trimming whitespace gives what trimmingCharacters(in: .whitespaces) gives")
    func trimming() {
        let table = [
            "", " ", "\t", "https://api.example.com", " https://api.example.com ", "\tpath\t", "\u{00A0}x\u{00A0}",
            "\u{2003}x", "x\u{3000}", "é", " é ", "a b", "\n", "x\n",
        ]
        for text in table {
            #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespaces), "\(text.debugDescription)")
        }
    }
}
