import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A head as a transport that parses HTTP itself reports it, and the `HTTPURLResponse` made from it only
/// when asked for.
@Suite("A transport's response head: its fields, and its HTTPURLResponse made when asked for")
struct ResponseHeadTests {
    static let url = URL(string: "http://127.0.0.1:8080/x")

    @Test(
        "a field is found whatever its case; a repeated one's values are joined in order, as the HTTPURLResponse has them",
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
    func joined(fields: [(String, String)], expected: [String: String]) {
        let head = ResponseHead(statusCode: 200, fields: fields.map { (name: $0.0, value: $0.1) }, url: Self.url)
        #expect(head.fields.map(\.name) == fields.map(\.0))
        #expect(head.fields.map(\.value) == fields.map(\.1))
        for (name, value) in expected {
            #expect(head.value(forHTTPHeaderField: name) == value, "\(name)")
            #expect(head.value(forHTTPHeaderField: name.uppercased()) == value, "\(name)")
        }
        #expect(head.value(forHTTPHeaderField: "Absent") == nil)
        #expect(head.description == "200 http://127.0.0.1:8080/x (\(fields.count) fields)")
        #expect(!head.hasResponse)
        let response = head.httpResponse
        #expect(response.allHeaderFields.count == expected.count)
        for (name, value) in expected {
            #expect(response.value(forHTTPHeaderField: name) == value, "\(name)")
        }
        #expect(response.statusCode == 200)
        #expect(response.url == Self.url)
    }

    @Test(
        "the expected length is Content-Length's, or -1, as the HTTPURLResponse's",
        arguments: [
            ([("Content-Length", "12")], 12), ([("content-length", "0")], 0), ([], -1),
            ([("Content-Length", "twelve")], -1), ([("Content-Length", "")], -1),
        ] as [([(String, String)], Int64)])
    func expectedLength(fields: [(String, String)], expected: Int64) {
        let head = ResponseHead(statusCode: 200, fields: fields.map { (name: $0.0, value: $0.1) }, url: Self.url)
        #expect(head.expectedContentLength == expected)
        #expect(!head.hasResponse)
        #expect(head.httpResponse.expectedContentLength == expected)
    }

    @Test("the HTTPURLResponse is made once; a head made from one gives that one back, and reads its fields")
    func madeOnce() {
        let head = ResponseHead(
            statusCode: 404, httpVersion: "HTTP/1.0",
            fields: [("Content-Type", "application/json; charset=utf-8"), ("Content-Length", "7")], url: nil)
        #expect(head.httpVersion == "HTTP/1.0")
        let first = head.httpResponse
        #expect(head.hasResponse)
        #expect(head.httpResponse === first)
        #expect(first.statusCode == 404)
        #expect(first.mimeType == "application/json")
        #expect(first.textEncodingName == "utf-8")
        #expect(first.url == URL(fileURLWithPath: "/"))  // a head without a URL
        #expect(head.url == nil)

        let wrapped = ResponseHead(first)
        #expect(wrapped.hasResponse)
        #expect(wrapped.httpResponse === first)
        #expect(wrapped.statusCode == 404)
        #expect(wrapped.httpVersion == nil)
        #expect(wrapped.value(forHTTPHeaderField: "content-length") == "7")
        #expect(wrapped.expectedContentLength == 7)
        #expect(Set(wrapped.fields.map(\.name)) == ["Content-Type", "Content-Length"])
        let dictionary = ResponseHead(
            statusCode: 201, headerFields: ["ETag": "\"v\"", "Content-Length": "3"], url: nil)
        #expect(dictionary.value(forHTTPHeaderField: "etag") == "\"v\"")
        #expect(dictionary.expectedContentLength == 3)
        #expect(dictionary.httpVersion == "HTTP/1.1")
        #expect(dictionary.fields.count == 2)
        let secret = ResponseHead(
            statusCode: 200, fields: [], url: URL(string: "https://user:pw@example.com/movies?api_key=k"))
        #expect(!secret.description.contains("pw"))
        #expect(!secret.description.contains("api_key=k"))
    }

    @Test("10,000 fields with names of one length and one first and last letter: each kept under its own name")
    func manyAlikeNames() {
        let fields = (0..<10_000).map { index in (name: "x\(index + 10_000)x", value: String(index)) }
        let head = ResponseHead(statusCode: 200, fields: fields, url: nil)
        #expect(head.value(forHTTPHeaderField: "X12345X") == "2345")
        #expect(head.httpResponse.allHeaderFields.count == 10_000)
        #expect(head.httpResponse.value(forHTTPHeaderField: "X12345X") == "2345")
    }

    @Test("a receiver that takes only an HTTPURLResponse is handed one made from a reported head")
    func receiverOfResponses() {
        let receiver = ResponseReceiver()
        let events = TransportEvents(taskID: "t", receiver: receiver)
        let head = ResponseHead(statusCode: 201, fields: [("ETag", "\"a\""), ("etag", "\"b\"")], url: Self.url)
        #expect(events.receive(head: head))
        #expect(receiver.heads.count == 1)
        #expect(receiver.heads.first?.statusCode == 201)
        #expect(receiver.heads.first?.value(forHTTPHeaderField: "ETag") == "\"a\", \"b\"")
        #expect(receiver.heads.first === head.httpResponse)
    }

    @Test("the pool answers from a reported head, its HTTPURLResponse made only when the caller asks")
    func poolReadsTheHead() async throws {
        let pool = TaskPool(
            configuration: .init(
                transport: HeadTransport { request in
                    switch request.url?.lastPathComponent {
                    case "moved":
                        (ResponseHead(statusCode: 302, fields: [("location", "/v1/items")], url: request.url), "")
                    case "missing":
                        (ResponseHead(statusCode: 404, fields: [("X-Reason", "gone")], url: request.url), "{}")
                    case "large":
                        (ResponseHead(statusCode: 200, fields: [("Content-Length", "100")], url: request.url), "")
                    default:
                        (
                            ResponseHead(
                                statusCode: 200,
                                fields: [("content-type", "application/json"), ("X-A", "1"), ("x-a", "2")],
                                url: request.url), #"{"id":1}"#
                        )
                    }
                }, maximumResponseBytes: 50))

        let response = try await pool.send(TestEndpoint(path: "moved"))
        #expect(response.statusCode == 200)
        #expect(response.url?.path == "/v1/items")
        #expect(response.header("X-A") == "1, 2")
        #expect(response.body == Data(#"{"id":1}"#.utf8))
        #expect(!response.head.hasResponse)
        #expect(response.httpResponse.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(response.head.hasResponse)

        await #expect {
            try await pool.send(TestEndpoint(path: "missing"))
        } throws: { error in
            guard case NetworkError.httpStatus(let answer) = error else { return false }
            return answer.statusCode == 404 && answer.header("x-reason") == "gone"
        }
        await #expect {
            try await pool.send(TestEndpoint(path: "large"))
        } throws: { error in
            guard case NetworkError.responseTooLarge(let limit) = error else { return false }
            return limit == 50
        }
    }
}

/// Keeps the heads it is given as `HTTPURLResponse`s: it implements only that requirement.
private final class ResponseReceiver: TransportReceiver, @unchecked Sendable {  // `heads` is locked.
    private let kept = Locked<[HTTPURLResponse]>([])
    var heads: [HTTPURLResponse] { kept.withLock { $0 } }

    func receive(head: HTTPURLResponse) -> Bool {
        kept.withLock { $0.append(head) }
        return true
    }
    func receive(body: Data) -> Bool { true }
    func sent(totalBytes: Int, expected: Int?) {}
    func redirected(statusCode: Int, to url: URL?) {}
    func finish() {}
    func fail(_ error: any Error) {}
}

/// Answers each request at once with the head and body `answer` gives, the head reported as a
/// ``ResponseHead``.
private struct HeadTransport: Transport {
    let answer: @Sendable (URLRequest) -> (ResponseHead, String)

    func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
        let (head, text) = answer(request)
        if events.receive(head: head), text.isEmpty || events.receive(body: Data(text.utf8)) { events.finish() }
        return AsyncTransfer.none
    }
}
