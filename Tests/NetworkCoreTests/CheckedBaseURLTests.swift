import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A pool checks each base URL once and reads its origin from it: what a request sees must not change.
@Suite("Base URLs checked once")
struct CheckedBaseURLTests {
    /// A body encoder of the caller's that sends the request to another host.
    struct Redirecting: ParameterEncoder {
        func encode(_ parameters: [String: ParameterValue], into request: inout URLRequest) throws(NetworkError) {
            request.url = URL(string: "https://elsewhere.example/x")
        }
    }

    @Test(
        "the origin read from the base URL is the request URL's origin, the first time and the next",
        arguments: [
            "https://api.example.com/v1", "HTTPS://API.Example.COM", "http://127.0.0.1:8080/",
            "http://[::1]:9000/a", "https://user:pw@host.example:444/p", "http://host.example:80",
            "  https://padded.example/v3  ",
        ])
    func originsMatch(base: String) throws {
        let bases = CheckedBaseURLs()
        let endpoint = TestEndpoint(baseURL: base, path: "items/7")
        for round in 1...2 {
            let (request, origin) = try endpoint.urlRequest(
                defaultHeaders: [:], checked: false, timeout: 60, bases: bases)
            #expect(origin != nil, "round \(round)")
            #expect(origin == URLParts.origin(of: request.url), "round \(round): \(base)")
            #expect(request.url == (try endpoint.urlRequest()).url, "round \(round)")
        }
        #expect(
            bases.origin(ofChecked: base.trimmingWhitespace())
                == URLParts.origin(of: URL(string: base.trimmingWhitespace())))
    }

    @Test("a base URL that fails its check is refused every time and never kept")
    func badBasesAlwaysRefused() {
        let bases = CheckedBaseURLs()
        let table: [(base: String, reason: String)] = [
            ("api.example.com", "the base URL needs a scheme such as https://"),
            (
                "https://h.example/v1?key=1",
                "the base URL must not carry a query or fragment; put them in the path or task"
            ),
            ("https://:80/v1", "the base URL has no host"),
            ("https://h.example/v1/../admin", "the path has a '..' segment; dot segments are not sent"),
        ]
        for (base, reason) in table {
            for round in 1...3 {
                #expect(
                    Self.reason { () throws(NetworkError) in
                        _ = try TestEndpoint(baseURL: base).urlRequest(
                            defaultHeaders: [:], checked: false, timeout: 60, bases: bases)
                    } == reason, "\(base), round \(round)")
            }
            #expect(bases.origin(ofChecked: base) == nil, "\(base)")
        }
    }

    @Test("a known base URL still has each path checked")
    func pathsCheckedEveryTime() throws {
        let bases = CheckedBaseURLs()
        _ = try TestEndpoint(path: "fine").urlRequest(defaultHeaders: [:], checked: false, timeout: 60, bases: bases)
        #expect(bases.origin(ofChecked: TestEndpoint().baseURL) == "https://api.example.com:443")
        for path in ["files/../../admin", "./x", "a/%2e%2E/b"] {
            #expect(
                Self.reason { () throws(NetworkError) in
                    _ = try TestEndpoint(path: path).urlRequest(
                        defaultHeaders: [:], checked: false, timeout: 60, bases: bases)
                }?.hasSuffix("segment; dot segments are not sent") == true, "\(path)")
        }
    }

    @Test("no origin is given for a request a caller's body encoder could have sent elsewhere; NetworkCore's keep it")
    func encodersThatMayMoveTheURL() throws {
        let bases = CheckedBaseURLs()
        let table: [(task: HTTPTask, keepsOrigin: Bool)] = [
            (.plain, true), (.urlParameters(["page": 2]), true), (.bodyParameters(["a": 1]), true),
            (.bodyParameters(["a": 1], encoder: FormBodyEncoder()), true),
            (.bodyParameters(["a": 1], encoder: Redirecting()), false),
            (.parameters(url: ["q": "x"], body: ["a": 1]), true),
            (.parameters(url: ["q": "x"], body: ["a": 1], bodyEncoder: Redirecting()), false),
            (.data(Data("x".utf8), contentType: "text/plain"), true),
        ]
        for (index, row) in table.enumerated() {
            let (request, origin) = try TestEndpoint(method: .post, task: row.task).urlRequest(
                defaultHeaders: [:], checked: false, timeout: 60, bases: bases)
            #expect((origin != nil) == row.keepsOrigin, "row \(index)")
            if let origin { #expect(origin == URLParts.origin(of: request.url), "row \(index)") }
        }
    }

    @Test("the latest 8 base URLs are kept, the oldest replaced first; none is kept twice")
    func capacity() {
        let bases = CheckedBaseURLs()
        let all = (0..<10).map { "https://h\($0).example" }
        for base in all { bases.remember(base, origin: base + ":443") }
        bases.remember(all[9], origin: "not kept again")
        #expect(bases.origin(ofChecked: all[0]) == nil)
        #expect(bases.origin(ofChecked: all[1]) == nil)
        for base in all[2...] { #expect(bases.origin(ofChecked: base) == base + ":443", "\(base)") }
    }

    @Test("a pool counts one host for base URLs of the same origin, and the host a caller's encoder chose")
    func poolHostKeys() async throws {
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport, maximumTasksPerHost: 1))
        let sends: [(id: String, endpoint: TestEndpoint, queued: Bool)] = [
            ("first", TestEndpoint(baseURL: "https://API.example.com/v1"), false),
            ("same origin", TestEndpoint(baseURL: "https://api.example.com:443/v2"), true),
            ("other host", TestEndpoint(baseURL: "https://other.example/v1"), false),
            (
                "moved",
                TestEndpoint(
                    baseURL: "https://api.example.com/v3", method: .post,
                    task: .bodyParameters([:], encoder: Redirecting())), false
            ),
            (
                "moved too",
                TestEndpoint(
                    baseURL: "https://other.example", method: .post, task: .bodyParameters([:], encoder: Redirecting())),
                true
            ),
        ]
        let ended = Tally()
        for send in sends { pool.send(send.endpoint, id: send.id) { _ in ended.increment() } }
        for send in sends {
            #expect((pool.task(id: send.id)?.phase == .queued) == send.queued, "\(send.id)")
        }
        #expect(transport.starts.count == 3)
        pool.cancelAll()
        await ended.reaches(sends.count)
        #expect(pool.activeTasks.isEmpty)
    }

    /// The reason of the `invalidEndpoint` error `body` throws; `nil` when it throws another or none.
    static func reason(_ body: () throws(NetworkError) -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            guard case .invalidEndpoint(_, let reason) = error else { return nil }
            return reason
        }
    }
}
