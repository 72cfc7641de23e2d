import Foundation
import NIOHTTP1
import NetworkCoreNIOSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The head both SwiftNIO transports hand the pool, made from the parser's: what `URLSession` would give.
@Suite("A SwiftNIO response head as an HTTPURLResponse")
struct ResponseHeadTests {
    @Test(
        "repeated fields are joined with commas under the name first seen, whatever their case; others are kept",
        arguments: [
            ([("Content-Type", "text/plain")], ["Content-Type": "text/plain"]),
            (
                [("Set-Cookie", "a=1"), ("set-cookie", "b=2"), ("SET-COOKIE", "c=3")],
                ["Set-Cookie": "a=1, b=2, c=3"]
            ),
            (
                [("X-Trace", "1"), ("Vary", "Accept"), ("x-trace", "2"), ("vary", "Origin"), ("ETag", "\"v\"")],
                ["X-Trace": "1, 2", "Vary": "Accept, Origin", "Etag": "\"v\""]
            ),
            // Names that differ only past eight bytes, or in length, are different names.
            (
                [("X-Request-Id-A", "1"), ("X-Request-Id-B", "2"), ("X-Request-Id", "3")],
                ["X-Request-Id-A": "1", "X-Request-Id-B": "2", "X-Request-Id": "3"]
            ),
            // Only ASCII letters fold: `[` is not `{`.
            ([("x-[", "1"), ("x-{", "2")], ["x-[": "1", "x-{": "2"]),
            ([], [:]),
        ] as [([(String, String)], [String: String])])
    func joined(fields: [(String, String)], expected: [String: String]) throws {
        let url = URL(string: "http://127.0.0.1:8080/x")
        let head = HTTPURLResponse.head(
            status: 200, version: .http1_1, headers: HTTPHeaders(fields), url: url)
        #expect(head.allHeaderFields.count == expected.count)
        for (name, value) in expected {
            #expect(head.value(forHTTPHeaderField: name) == value, "\(name)")
        }
        #expect(head.statusCode == 200)
        #expect(head.url == url)
    }

    @Test("for every HTTP version, the status, the length and the type are read from the head")
    func versionAndFields() throws {
        let headers = HTTPHeaders([("Content-Length", "12"), ("Content-Type", "application/json; charset=utf-8")])
        for (version, text) in [
            (HTTPVersion.http1_1, "HTTP/1.1"), (.http1_0, "HTTP/1.0"), (.http2, "HTTP/2.0"),
            (HTTPVersion(major: 3, minor: 0), "HTTP/3.0"),
        ] {
            let head = HTTPURLResponse.head(status: 404, version: version, headers: headers, url: nil)
            #expect(head.statusCode == 404)
            #expect(head.expectedContentLength == 12, "\(text)")
            #expect(head.mimeType == "application/json")
            #expect(head.textEncodingName == "utf-8")
        }
    }

    @Test("10,000 fields with names of one length and one first and last letter: each kept under its own name")
    func manyAlikeNames() throws {
        let fields = (0..<10_000).map { index in ("x" + String(index + 10_000) + "x", "\(index)") }
        let head = HTTPURLResponse.head(status: 200, version: .http1_1, headers: HTTPHeaders(fields), url: nil)
        #expect(head.allHeaderFields.count == 10_000)
        #expect(head.value(forHTTPHeaderField: "X12345X") == "2345")
    }
}
