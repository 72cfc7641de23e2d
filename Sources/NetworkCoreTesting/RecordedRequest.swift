import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request a ``MockServer`` received, as it came over the wire.
///
/// It reads like the `URLRequest` it was (`request.url`, `request.httpMethod`,
/// `request.value(forHTTPHeaderField:)`), and adds what tests ask most:
/// ```swift
/// let request = try await server.takeRequest()
/// #expect(request.matches(.get, "/3/movie/now_playing"))
/// #expect(request.query["page"] == "1")
/// #expect(request.hasHeader("Authorization", "Bearer token"))
/// ```
@dynamicMemberLookup
public struct RecordedRequest: Sendable {
    /// The request as Foundation reads it (its URL on the server's base URL).
    public let urlRequest: URLRequest
    /// Its place in the server's arrival order, from 0.
    public let index: Int
    /// Values of the `:name` segments of the route that answered it (empty for other answers).
    public internal(set) var parameters: [String: String] = [:]

    init(_ urlRequest: URLRequest, index: Int) {
        self.urlRequest = urlRequest
        self.index = index
    }

    /// Any property of the `URLRequest`: `request.url`, `request.httpBody`, `request.allHTTPHeaderFields`.
    public subscript<Value>(dynamicMember keyPath: KeyPath<URLRequest, Value>) -> Value { urlRequest[keyPath: keyPath] }

    /// The method, upper-cased.
    public var method: HTTPMethod { HTTPMethod(rawValue: urlRequest.httpMethod ?? "GET") }

    /// The path as sent (percent-encoded), without the query: `/3/movie/550`.
    public var path: String {
        guard let url = urlRequest.url else { return "/" }
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        return path.isEmpty ? "/" : path
    }

    /// The query's items in order, decoded.
    public var queryItems: [URLQueryItem] {
        guard let url = urlRequest.url else { return [] }
        return URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
    }

    /// The query as a dictionary (the first value of a repeated name; an item without `=` is "").
    public var query: [String: String] {
        var query: [String: String] = [:]
        for item in queryItems where query[item.name] == nil { query[item.name] = item.value ?? "" }
        return query
    }

    /// The headers (names as sent).
    public var headers: [String: String] { urlRequest.allHTTPHeaderFields ?? [:] }

    /// A header's value, whatever the case of its name.
    public func value(forHTTPHeaderField name: String) -> String? { urlRequest.value(forHTTPHeaderField: name) }

    /// The body (empty if there was none; a chunked body is de-chunked).
    public var body: Data { urlRequest.httpBody ?? Data() }

    /// The body as UTF-8 text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The body decoded from JSON; throws what the decoder throws.
    public func decodeBody<Value: Decodable>(
        as type: Value.Type = Value.self, decoder: JSONDecoder = JSONDecoder()
    ) throws -> Value {
        try decoder.decode(type, from: body)
    }

    /// Whether this request has `method` and a path that `pattern` matches (`/3/movie/:id`, `/files/*`).
    public func matches(_ method: HTTPMethod, _ pattern: String) -> Bool {
        self.method == method && RoutePattern(pattern)?.match(path) != nil
    }

    /// Whether the header `name` is present and, if `value` is given, has exactly that value.
    public func hasHeader(_ name: String, _ value: String? = nil) -> Bool {
        guard let actual = self.value(forHTTPHeaderField: name) else { return false }
        return value.map { $0 == actual } ?? true
    }

    /// Whether the query has `name` and, if `value` is given, that value.
    public func hasQuery(_ name: String, _ value: String? = nil) -> Bool {
        queryItems.contains { $0.name == name && (value == nil || ($0.value ?? "") == value) }
    }
}

extension RecordedRequest: CustomStringConvertible {
    /// `GET /3/movie/550?language=en` and the body's size.
    public var description: String {
        let query = urlRequest.url.flatMap {
            URLComponents(url: $0, resolvingAgainstBaseURL: false)?.percentEncodedQuery
        }
        return "\(method) \(path)\(query.map { "?" + $0 } ?? "")" + (body.isEmpty ? "" : " (\(body.count) bytes)")
    }
}

/// A path pattern: literal segments, `:name` for any one segment, a final `*` for the rest (or `*` alone
/// for every path).
struct RoutePattern: Sendable {
    private let segments: [Substring]
    private let matchesAll: Bool

    init?(_ pattern: String) {
        if pattern == "*" {
            (segments, matchesAll) = ([], true)
            return
        }
        guard pattern.hasPrefix("/") else { return nil }
        segments = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { $0 }
        matchesAll = false
    }

    /// The `:name` values if `path` matches, else `nil`.
    func match(_ path: String) -> [String: String]? {
        if matchesAll { return [:] }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var values: [String: String] = [:]
        var index = parts.startIndex
        for (position, segment) in segments.enumerated() {
            if segment == "*", position == segments.count - 1 { return values }
            guard index < parts.endIndex else { return nil }
            let part = parts[index]
            if segment.hasPrefix(":"), segment.count > 1 {
                guard !part.isEmpty else { return nil }
                values[String(segment.dropFirst())] = part.removingPercentEncoding ?? String(part)
            } else if segment != part, String(segment) != part.removingPercentEncoding {
                return nil
            }
            index = parts.index(after: index)
        }
        return index == parts.endIndex ? values : nil
    }
}
