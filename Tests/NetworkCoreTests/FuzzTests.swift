import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A small, seeded generator (SplitMix64), so every CI run fuzzes the same bodies.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Bodies a server might send: valid, broken, hostile.
enum FuzzCorpus {
    static let seeds: [String] = [
        #"{"page": 1, "results": [{"id": 1, "title": "A", "vote_average": 7.5, "poster_path": null}], "total_pages": 3, "total_results": 50}"#,
        #"{"success": false, "status_code": 7, "status_message": "Invalid API key: You must be granted a valid key."}"#,
        #"{"success": true, "status_code": 1, "status_message": "Success."}"#,
        #"{"code": "E42", "message": {"nested": true}, "error": ["list"]}"#,
        #"{"data": {"items": {"first": {"id": 3, "title": "C"}}}}"#,
        #"[1, 2, 3, {"id": "x"}]"#,
        "<html><body><h1>502 Bad Gateway</h1></body></html>",
        "", "null", "true", "0", #""just a string""#, "{}", "[]",
    ]

    /// A seed, mutated zero to four times.
    static func body(using random: inout SeededRandom) -> Data {
        var bytes = Array(seeds.randomElement(using: &random)!.utf8)
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            mutate(&bytes, using: &random)
        }
        return Data(bytes)
    }

    static func mutate(_ bytes: inout [UInt8], using random: inout SeededRandom) {
        let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<10, using: &random) {
        case 0: bytes = Array(bytes.prefix(position))  // truncated
        case 1 where !bytes.isEmpty: bytes[position] = UInt8.random(in: 0...255, using: &random)  // flipped byte
        case 2: bytes.insert(contentsOf: [0xC3, 0x28, 0xFF, 0xFE], at: position)  // invalid UTF-8
        case 3: bytes.insert(contentsOf: Array("1e99999".utf8), at: position)  // huge number
        case 4: bytes.insert(contentsOf: Array("123456789012345678901234567890".utf8), at: position)
        case 5:  // deep nesting
            let depth = Int.random(in: 1...3_000, using: &random)
            bytes =
                Array(String(repeating: "[", count: depth).utf8) + bytes
                + Array(String(repeating: "]", count: depth).utf8)
        case 6:  // wrong types
            let text = String(decoding: bytes, as: UTF8.self)
            bytes = Array(
                text.replacingOccurrences(of: "1", with: "\"1\"").replacingOccurrences(of: "null", with: "[]").utf8)
        case 7: bytes.insert(contentsOf: Array(#","extra":{"x":[null,{}]}"#.utf8), at: position)
        case 8 where bytes.count > 1:  // a chunk repeated
            let end = min(bytes.count, position + Int.random(in: 1...16, using: &random))
            bytes.insert(contentsOf: bytes[position..<end], at: position)
        default: bytes.insert(UInt8.random(in: 0...127, using: &random), at: position)
        }
    }
}

struct FuzzPage: Decodable, Sendable {
    struct Item: Decodable, Sendable {
        let id: Int
        let title: String?
        let voteAverage: Double?
        enum CodingKeys: String, CodingKey {
            case id, title
            case voteAverage = "vote_average"
        }
    }
    let page: Int
    let results: [Item]
}

@Suite(
    "Fuzzing: hostile bodies never crash and always fail with a typed error",
    .enabled(if: OwnPass.enabled, OwnPass.reason))
struct FuzzTests {
    @Test("20,000 random and mutated bodies through responses, status reading, parsers and redaction")
    func bodies() throws {
        var random = SeededRandom(seed: 0x5EED_2026)
        let url = URL(string: "https://api.example.com/fuzz")!
        let request = URLRequest(url: url)
        let parsers = (
            whole: DecodableParser<FuzzPage>(), results: DecodableParser<[FuzzPage.Item]>(keyPath: "results")
        )
        var parsed = 0
        var failures = 0
        for index in 0..<20_000 {
            let body = FuzzCorpus.body(using: &random)
            let status = [200, 201, 401, 404, 429, 500, 503][index % 7]
            let http = try #require(HTTPURLResponse(url: url, statusCode: status, httpVersion: nil, headerFields: nil))
            let response = Response(request: request, httpResponse: http, body: body, duration: 0)
            _ = response.serverStatus
            _ = response.isServerRefusal
            #expect(response.serverError.body == body)
            for parse in [{ _ = try parsers.whole.parse(body) }, { _ = try parsers.results.parse(body) }] {
                do {
                    try parse()
                    parsed += 1
                } catch is DecodingFailure {
                    failures += 1
                } catch {
                    Issue.record("untyped parser error for body #\(index): \(error)")
                }
            }
            _ = Redactor.default.redact(body: body, contentType: "application/json")
        }
        // The corpus must exercise both paths.
        #expect(parsed > 200)
        #expect(failures > 20_000)
    }

    @Test(
        "bodies that make Foundation's JSONDecoder trap are typed failures here",
        arguments: [
            String(repeating: "[", count: 513), "{\"a\":" + String(repeating: "[", count: 512),
            String(repeating: "[", count: 512) + "{", "{" + String(repeating: "[", count: 512),
        ])
    func foundationTrap(body: String) throws {
        // JSONDecoder on Swift 6.3 (Linux) traps when the bracket past its 512-level limit is the last byte.
        let data = Data(body.utf8)
        let failure = #expect(throws: DecodingFailure.self) { try DecodableParser<FuzzPage>().parse(data) }
        #expect(failure?.reason == "the body ends inside an array or object (truncated JSON)")
        #expect(JSONStatusReader().status(in: data) == nil)
        _ = Redactor.default.redact(body: data, contentType: "application/json")
    }

    @Test("5,000 hostile bodies through the pool end as a value or a typed error, each exactly once")
    func throughThePool() async throws {
        var random = SeededRandom(seed: 0xFEED_2026)
        let bodies = (0..<5_000).map { _ in FuzzCorpus.body(using: &random) }
        let pool = TaskPool(
            configuration: .init(
                transport: StubTransport { request, _ in
                    let index = Int(request.url!.lastPathComponent)!
                    return StubResponse(statusCode: [200, 404, 503][index % 3], body: bodies[index])
                }))
        let outcomes = await withTaskGroup(of: String.self) { group in
            for index in bodies.indices {
                group.addTask {
                    do {
                        _ = try await pool.send(TestEndpoint(path: "b/\(index)"), parser: DecodableParser<FuzzPage>())
                        return "value"
                    } catch {
                        switch error as? NetworkError {
                        case .decodingFailed?: return "decoding"
                        case .httpStatus?: return "status"
                        case .serverRefused?: return "refused"
                        default: return "unexpected: \(error)"
                        }
                    }
                }
            }
            return await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        }
        #expect(outcomes.values.reduce(0, +) as Int == bodies.count)
        #expect(outcomes.keys.allSatisfy { ["value", "decoding", "status", "refused"].contains($0) }, "\(outcomes)")
        #expect(outcomes["status", default: 0] > 3_000)
        #expect(outcomes["decoding", default: 0] > 0)
        #expect(pool.activeTasks.isEmpty)
    }
}
