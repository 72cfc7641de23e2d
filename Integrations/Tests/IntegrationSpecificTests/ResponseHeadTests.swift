import Foundation
import NIOHTTP1
import NetworkCore
import NetworkCoreNIOSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The head both SwiftNIO transports hand the pool, made from the parser's: its fields as they came, and an
/// `HTTPURLResponse` as `URLSession` would give it.
@Suite("A SwiftNIO response head as a ResponseHead")
struct ResponseHeadTests {
    @Test(
        "the fields are kept as they came, in order; the HTTPURLResponse joins repeated ones under the name first seen")
    func fields() {
        let url = URL(string: "http://127.0.0.1:8080/x")
        let fields = [("Set-Cookie", "a=1"), ("Content-Type", "text/plain"), ("set-cookie", "b=2")]
        let head = ResponseHead(status: 201, version: .http1_1, headers: HTTPHeaders(fields), url: url)
        #expect(head.statusCode == 201)
        #expect(head.url == url)
        #expect(head.fields.map(\.name) == ["Set-Cookie", "Content-Type", "set-cookie"])
        #expect(head.fields.map(\.value) == ["a=1", "text/plain", "b=2"])
        #expect(head.value(forHTTPHeaderField: "SET-COOKIE") == "a=1, b=2")
        #expect(head.httpResponse.allHeaderFields.count == 2)
        #expect(head.httpResponse.value(forHTTPHeaderField: "set-cookie") == "a=1, b=2")
    }

    @Test("for every HTTP version, its text as URLSession writes it, and the status, the length and the type")
    func versionAndFields() {
        let headers = HTTPHeaders([("Content-Length", "12"), ("Content-Type", "application/json; charset=utf-8")])
        for (version, text) in [
            (HTTPVersion.http1_1, "HTTP/1.1"), (.http1_0, "HTTP/1.0"), (.http2, "HTTP/2.0"),
            (HTTPVersion(major: 3, minor: 0), "HTTP/3.0"),
        ] {
            let head = ResponseHead(status: 404, version: version, headers: headers, url: nil)
            #expect(head.httpVersion == text)
            #expect(head.statusCode == 404)
            #expect(head.expectedContentLength == 12, "\(text)")
            #expect(head.httpResponse.mimeType == "application/json")
            #expect(head.httpResponse.textEncodingName == "utf-8")
        }
    }
}
