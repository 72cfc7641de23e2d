import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Parameter encoding")
struct EncodingTests {
    struct QueryCase: Sendable, CustomTestStringConvertible {
        let name: String
        let parameters: [String: ParameterValue]
        let encoder: URLQueryEncoder
        let expected: String
        var testDescription: String { name }
    }

    static let queryCases: [QueryCase] = [
        .init(name: "space", parameters: ["q": "a b"], encoder: .init(), expected: "q=a%20b"),
        .init(name: "ampersand and equals", parameters: ["q": "a&b=c"], encoder: .init(), expected: "q=a%26b%3Dc"),
        .init(name: "plus and slash", parameters: ["q": "1+1/2"], encoder: .init(), expected: "q=1%2B1%2F2"),
        .init(
            name: "unicode", parameters: ["q": "Amélie 東京"], encoder: .init(),
            expected: "q=Am%C3%A9lie%20%E6%9D%B1%E4%BA%AC"),
        .init(name: "unreserved kept", parameters: ["q": "a-b.c_d~e"], encoder: .init(), expected: "q=a-b.c_d~e"),
        .init(name: "sorted keys", parameters: ["b": 2, "a": 1, "c": 3], encoder: .init(), expected: "a=1&b=2&c=3"),
        .init(name: "key encoded", parameters: ["a key": "v"], encoder: .init(), expected: "a%20key=v"),
        .init(
            name: "bool literal", parameters: ["adult": false, "hd": true], encoder: .init(),
            expected: "adult=false&hd=true"),
        .init(
            name: "bool numeric", parameters: ["adult": false, "hd": true], encoder: .init(bools: .numeric),
            expected: "adult=0&hd=1"),
        .init(name: "array repeat", parameters: ["id": [1, 2, 3]], encoder: .init(), expected: "id=1&id=2&id=3"),
        .init(
            name: "array brackets", parameters: ["id": [1, 2]], encoder: .init(arrays: .brackets),
            expected: "id%5B%5D=1&id%5B%5D=2"),
        .init(
            name: "array commas", parameters: ["g": ["a,b", "c"]], encoder: .init(arrays: .commaSeparated),
            expected: "g=a%2Cb,c"),
        .init(name: "empty array left out", parameters: ["g": [], "p": 1], encoder: .init(), expected: "p=1"),
        .init(
            name: "nested dictionary", parameters: ["f": ["year": 2020, "genre": "drama"]], encoder: .init(),
            expected: "f%5Bgenre%5D=drama&f%5Byear%5D=2020"),
        .init(
            name: "list of dictionaries indexed", parameters: ["l": [["a": 1], ["a": 2]]], encoder: .init(),
            expected: "l%5B0%5D%5Ba%5D=1&l%5B1%5D%5Ba%5D=2"),
        .init(name: "null is empty", parameters: ["x": .null], encoder: .init(), expected: "x="),
        .init(name: "double", parameters: ["r": 7.5], encoder: .init(), expected: "r=7.5"),
        .init(
            name: "negative and large", parameters: ["a": .int(-3), "b": .uint(UInt64.max)], encoder: .init(),
            expected: "a=-3&b=18446744073709551615"),
        .init(name: "empty string", parameters: ["q": ""], encoder: .init(), expected: "q="),
    ]

    @Test("URL query encoding handles the edge cases", arguments: queryCases)
    func queryEncoding(_ example: QueryCase) throws {
        #expect(try example.encoder.query(for: example.parameters) == example.expected)
    }

    @Test("the same parameters always give the same URL")
    func deterministic() throws {
        let parameters: Parameters = ["z": 1, "a": "x", "m": ["k2": 1, "k1": 2]]
        let first = try TestEndpoint(task: .urlParameters(parameters)).urlRequest().url
        for _ in 0..<20 {
            #expect(try TestEndpoint(task: .urlParameters(parameters)).urlRequest().url == first)
        }
    }

    @Test("nil optionals are left out, present ones kept")
    func optionals() throws {
        let language: String? = nil
        let page: Int? = 2
        let request = try TestEndpoint(task: .urlParameters(["language": language, "page": page])).urlRequest()
        #expect(request.url?.absoluteString == "https://api.example.com/v1/items?page=2")
    }

    @Test("a query already in the path is kept, and parameters follow it")
    func mergesExistingQuery() throws {
        let endpoint = TestEndpoint(path: "search?lang=en", task: .urlParameters(["q": "star wars"]))
        #expect(
            try endpoint.urlRequest().url?.absoluteString == "https://api.example.com/v1/search?lang=en&q=star%20wars")
    }

    @Test("a non-finite number is an encoding error, not a crash")
    func nonFinite() {
        #expect(throws: NetworkError.self) { try URLQueryEncoder().query(for: ["x": .double(.nan)]) }
        let error = #expect(throws: NetworkError.self) {
            try TestEndpoint(method: .post, task: .bodyParameters(["x": Double.infinity])).urlRequest()
        }
        guard case .encodingFailed(let reason) = error else {
            Issue.record("expected encodingFailed, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("x"))
    }

    @Test("JSON body: sorted keys, escapes, null, nested values, Content-Type")
    func jsonBody() throws {
        let parameters: Parameters = [
            "name": "Ana \"Q\"\n\\", "age": 30, "tags": ["a", "b"], "meta": ["k": true], "gone": nil as Int?,
            "nothing": ParameterValue.null, "ratio": 0.25,
        ]
        let request = try TestEndpoint(method: .post, task: .bodyParameters(parameters)).urlRequest()
        let body = try #require(request.httpBody)
        #expect(
            String(decoding: body, as: UTF8.self)
                == #"{"age":30,"meta":{"k":true},"name":"Ana \"Q\"\n\\","nothing":null,"ratio":0.25,"tags":["a","b"]}"#)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        // The output is valid JSON that round-trips.
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(object["name"] as? String == "Ana \"Q\"\n\\")
    }

    @Test("control characters are escaped in JSON")
    func jsonControlCharacters() throws {
        let data = try JSONWriter.data(for: .string("a\u{01}b\u{1F}"))
        #expect(String(decoding: data, as: UTF8.self) == #""a\u0001b\u001f""#)
    }

    @Test("form body uses the query encoding and sets its Content-Type")
    func formBody() throws {
        let request = try TestEndpoint(method: .post, task: .bodyParameters(["b": "x y", "a": "1&2"], encoder: .form))
            .urlRequest()
        #expect(request.httpBody.map { String(decoding: $0, as: UTF8.self) } == "a=1%262&b=x%20y")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test("encoders set Content-Type only when the caller did not")
    func contentTypeNotOverridden() throws {
        let custom = ["Content-Type": "application/vnd.api+json"]
        let json = try TestEndpoint(method: .post, task: .bodyParameters(["a": 1]), headers: custom).urlRequest()
        #expect(json.value(forHTTPHeaderField: "Content-Type") == "application/vnd.api+json")
        let form = try TestEndpoint(
            method: .post, task: .parameters(url: [:], body: ["a": 1], bodyEncoder: .form, headers: custom)
        ).urlRequest()
        #expect(form.value(forHTTPHeaderField: "content-type") == "application/vnd.api+json")
        let raw = try TestEndpoint(method: .put, task: .data(Data([1, 2]), contentType: "image/png"), headers: custom)
            .urlRequest()
        #expect(raw.value(forHTTPHeaderField: "Content-Type") == "application/vnd.api+json")
    }

    @Test("query and body together, with extra headers")
    func parametersTask() throws {
        let request = try TestEndpoint(
            method: .post, task: .parameters(url: ["page": 1], body: ["name": "x"], headers: ["X-Trace": "t1"])
        ).urlRequest()
        #expect(request.url?.query == "page=1")
        #expect(request.httpBody.map { String(decoding: $0, as: UTF8.self) } == #"{"name":"x"}"#)
        #expect(request.value(forHTTPHeaderField: "X-Trace") == "t1")
    }

    @Test("an Encodable body is JSON; raw data keeps its content type")
    func encodableAndData() throws {
        struct Login: Encodable, Sendable { let username: String }
        let request = try TestEndpoint(method: .post, task: .jsonEncodable(Login(username: "u"))).urlRequest()
        #expect(request.httpBody.map { String(decoding: $0, as: UTF8.self) } == #"{"username":"u"}"#)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let raw = try TestEndpoint(method: .put, task: .data(Data([0xFF, 0x00]), contentType: "image/png")).urlRequest()
        #expect(raw.httpBody == Data([0xFF, 0x00]))
        #expect(raw.value(forHTTPHeaderField: "Content-Type") == "image/png")
    }

    @Test("an Encodable that throws is an encoding error")
    func encodableFailure() {
        struct Refuses: Encodable, Sendable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "no"))
            }
        }
        let error = #expect(throws: NetworkError.self) {
            try TestEndpoint(method: .post, task: .jsonEncodable(Refuses())).urlRequest()
        }
        guard case .encodingFailed(let reason) = error else {
            Issue.record("expected encodingFailed")
            return
        }
        #expect(reason.contains("Refuses"))
    }
}

@Suite("Request building")
struct RequestBuildingTests {
    @Test(
        "base URL and path join with exactly one slash",
        arguments: [
            ("https://h.com/api", "items", "https://h.com/api/items"),
            ("https://h.com/api/", "/items", "https://h.com/api/items"),
            ("https://h.com/api/", "items", "https://h.com/api/items"),
            ("https://h.com", "", "https://h.com"),
            ("https://h.com/api", "movie/550/videos", "https://h.com/api/movie/550/videos"),
            ("http://127.0.0.1:8080", "get", "http://127.0.0.1:8080/get"),
            ("https://h.com/api/", "/items?page=2&q=a", "https://h.com/api/items?page=2&q=a"),
            ("https://h.com", "?q=1", "https://h.com?q=1"),
            ("https://h.com/", "/", "https://h.com/"),
        ])
    func joining(base: String, path: String, expected: String) throws {
        #expect(try TestEndpoint(baseURL: base, path: path).urlRequest().url?.absoluteString == expected)
    }

    @Test(
        "paths are percent-encoded where they must be, existing escapes kept",
        arguments: [
            ("users/ana maria", "users/ana%20maria"),
            ("users/ana%20maria", "users/ana%20maria"),
            ("files/50%", "files/50%25"),
            ("tags/café", "tags/caf%C3%A9"),
            ("a/b:c@d", "a/b:c@d"),
            ("files/%4", "files/%254"),
            ("files/%zz/%2F", "files/%25zz/%2F"),
            ("/a b?q=1", "a%20b?q=1"),
        ])
    func pathEncoding(path: String, expectedPath: String) throws {
        let url = try TestEndpoint(baseURL: "https://h.com", path: path).urlRequest().url
        #expect(url?.absoluteString == "https://h.com/" + expectedPath)
    }

    @Test(
        "each bad base URL is refused for its own reason; good ones of every shape pass",
        arguments: [
            ("", "needs a scheme"), ("api.example.com/v1", "needs a scheme"), ("/relative", "needs a scheme"),
            ("1http://h.com", "needs a scheme"), ("ht tp://h.com", "needs a scheme"), ("x/y://h.com", "needs a scheme"),
            ("://h.com", "needs a scheme"), ("https:/h.com", "needs a scheme"), ("https://", "has no host"),
            ("https:///v1", "has no host"), ("https://h.com/api?key=1", "query or fragment"),
            ("https://h.com#top", "query or fragment"), ("https://:80", "has no host"), ("https://ana@", "has no host"),
            ("https://ana@:80/v1", "has no host"), ("https://h .com", "do not form a valid URL"),
            ("svn+ssh://h.com", nil), ("https://user@h.com:8080/v1/", nil), ("HTTP://H.COM", nil),
            ("http://[::1]:8080", nil),
        ] as [(String, String?)])
    func baseURLReasons(base: String, reason: String?) throws {
        do {
            _ = try TestEndpoint(baseURL: base).urlRequest()
            #expect(reason == nil, "\(base) was accepted")
        } catch {
            guard case .invalidEndpoint(_, let message) = error, let reason else {
                Issue.record("\(base): \(error)")
                return
            }
            #expect(message.contains(reason), "\(base): \(message)")
        }
    }

    @Test(
        "a bad base URL is a typed error naming it",
        arguments: ["", "not a url", "api.example.com/v1", "https://", "https://h.com/api?key=1", "/relative"])
    func badBaseURL(base: String) {
        let error = #expect(throws: NetworkError.self) { try TestEndpoint(baseURL: base).urlRequest() }
        guard case .invalidEndpoint = error else {
            Issue.record("expected invalidEndpoint, got \(String(describing: error))")
            return
        }
    }

    @Test("method, timeout and headers: pool defaults, then endpoint, then task")
    func headersAndTimeout() throws {
        let endpoint = TestEndpoint(
            method: .patch, task: .parameters(url: [:], body: [:], headers: ["X-Level": "task"]),
            headers: ["X-Level": "endpoint", "Accept": "text/plain"], timeout: 5)
        let request = try endpoint.urlRequest(
            defaultHeaders: ["Accept": "application/json", "X-Level": "pool", "User-Agent": "UA"], timeout: 60)
        #expect(request.httpMethod == "PATCH")
        #expect(request.timeoutInterval == 5)
        #expect(request.value(forHTTPHeaderField: "X-Level") == "task")
        #expect(request.value(forHTTPHeaderField: "Accept") == "text/plain")
        #expect(request.value(forHTTPHeaderField: "User-Agent") == "UA")
    }

    @Test("header values with line breaks and bad names are rejected")
    func headerInjection() {
        for headers in [["X-A": "v\r\nInjected: 1"], ["Bad Name": "v"], ["X-B": "v\n"]] {
            #expect(throws: NetworkError.self) { try TestEndpoint(headers: headers).urlRequest() }
        }
    }

    @Test("a non-positive timeout is rejected", arguments: [0.0, -1.0, Double.nan])
    func badTimeout(seconds: Double) {
        #expect(throws: NetworkError.self) { try TestEndpoint(timeout: seconds).urlRequest() }
    }

    @Test("HTTPMethod upper-cases and knows idempotency")
    func methods() {
        #expect(HTTPMethod(rawValue: "purge").rawValue == "PURGE")
        #expect([HTTPMethod.get, .head, .put, .delete, .options].allSatisfy { $0.isIdempotent })
        #expect(![HTTPMethod.post, .patch].contains { $0.isIdempotent })
    }
}
