import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response's status, version and header fields as a transport read them, for
/// ``TransportEvents/receive(head:)-(ResponseHead)``: the form a transport that parses HTTP itself (over
/// SwiftNIO, AsyncHTTPClient) hands the pool, without making an `HTTPURLResponse` for every answer.
///
/// The pool reads the status and the fields it needs (`Location`, `Content-Length`) from the head itself;
/// the `HTTPURLResponse` (``httpResponse``, a ``Response``'s) is made the first time something asks for it,
/// and then kept. Making one is most of what a transport spends on an answer besides the network:
/// FoundationNetworking's initializer rewrites every field name and looks names up without regard to case.
/// ```swift
/// let head = ResponseHead(
///     statusCode: 200, fields: [("Content-Type", "application/json"), ("Set-Cookie", "a=1"), ("set-cookie", "b=2")],
///     url: URL(string: "https://example.com/movies"))
/// let cookies = head.value(forHTTPHeaderField: "SET-COOKIE")  // "a=1, b=2"
/// ```
public struct ResponseHead: Sendable {
    /// The head as it was made: from an `HTTPURLResponse`, or from what a transport read. One reference
    /// either way, so a head is copied along the pool's route as cheaply as the response it stands for.
    private let storage: Storage

    private enum Storage: Sendable {
        case response(HTTPURLResponse)
        case read(Read)
    }

    /// A head a transport read: its parts as they came, and its `HTTPURLResponse` once made.
    private final class Read: Sendable {
        let statusCode: Int
        let url: URL?
        let httpVersion: String?
        /// In order, names as the server spelt them.
        let fields: [(name: String, value: String)]
        let made = Locked<HTTPURLResponse?>(nil)

        init(statusCode: Int, url: URL?, httpVersion: String?, fields: [(name: String, value: String)]) {
            self.statusCode = statusCode
            self.url = url
            self.httpVersion = httpVersion
            self.fields = fields
        }
    }

    /// A head with `statusCode`, `httpVersion` and `fields` in the order they came (a name may repeat, in
    /// any case), for the request to `url`.
    public init(
        statusCode: Int, httpVersion: String? = "HTTP/1.1", fields: [(name: String, value: String)], url: URL?
    ) {
        storage = .read(Read(statusCode: statusCode, url: url, httpVersion: httpVersion, fields: fields))
    }

    /// A head with `statusCode`, `httpVersion` and `headerFields`, one value a name (as `HTTPURLResponse`
    /// takes them), for the request to `url`.
    public init(statusCode: Int, httpVersion: String? = "HTTP/1.1", headerFields: [String: String], url: URL?) {
        self.init(
            statusCode: statusCode, httpVersion: httpVersion,
            fields: headerFields.map { (name: $0.key, value: $0.value) }, url: url)
    }

    /// The head of `response`, which ``httpResponse`` then is.
    public init(_ response: HTTPURLResponse) {
        storage = .response(response)
    }

    /// The HTTP status code, e.g. `200`.
    public var statusCode: Int {
        switch storage {
        case .response(let response): response.statusCode
        case .read(let head): head.statusCode
        }
    }

    /// The URL that answered: the request's.
    public var url: URL? {
        switch storage {
        case .response(let response): response.url
        case .read(let head): head.url
        }
    }

    /// The version the server answered with, as `URLSession` writes it (`HTTP/1.1`); `nil` when the head
    /// was made from an `HTTPURLResponse`, which does not say.
    public var httpVersion: String? {
        guard case .read(let head) = storage else { return nil }
        return head.httpVersion
    }

    /// The header fields, names as the server spelt them: in the order they came, or, for a head made from
    /// an `HTTPURLResponse`, its fields in no set order.
    public var fields: [(name: String, value: String)] {
        switch storage {
        case .response(let response): response.headerFields.map { (name: $0.key, value: $0.value) }
        case .read(let head): head.fields
        }
    }

    /// The value of the field `name`, compared without regard to case; the values of a repeated field
    /// joined with `", "` in the order they came, as `HTTPURLResponse` gives them. `nil` when there is none.
    public func value(forHTTPHeaderField name: String) -> String? {
        guard case .read(let head) = storage else { return httpResponse.value(forHTTPHeaderField: name) }
        var found: String?
        for field in head.fields where HeaderName.same(field.name, name) {
            found = found.map { $0 + ", " + field.value } ?? field.value
        }
        return found
    }

    /// Whether the `HTTPURLResponse` has been made (or the head was made from one).
    var hasResponse: Bool {
        switch storage {
        case .response: true
        case .read(let head): head.made.withLock { $0 != nil }
        }
    }

    /// The body's length as `Content-Length` gives it, or `-1` when it does not (as `URLResponse` says it).
    public var expectedContentLength: Int64 {
        guard case .read = storage else { return httpResponse.expectedContentLength }
        return value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) } ?? -1
    }

    /// The head as an `HTTPURLResponse`: made the first time it is asked for, then the same object. Repeated
    /// fields are one, their values joined with `", "` under the name first seen, as `URLSession` gives
    /// them. A head without a URL answers for `file:///`.
    public var httpResponse: HTTPURLResponse {
        switch storage {
        case .response(let response):
            return response
        case .read(let head):
            return head.made.withLock { made in
                if let made { return made }
                let response = Self.make(
                    statusCode: head.statusCode, httpVersion: head.httpVersion, fields: head.fields, url: head.url)
                made = response
                return response
            }
        }
    }

    private static func make(
        statusCode: Int, httpVersion: String?, fields given: [(name: String, value: String)], url: URL?
    ) -> HTTPURLResponse {
        var fields: [String: String] = [:]
        fields.reserveCapacity(given.count)
        // The names seen, compared without regard to case and without a lowercased copy of each.
        var names = Set<FoldedName>(minimumCapacity: given.count)
        for (name, value) in given {
            let (inserted, seen) = names.insert(FoldedName(name))
            if inserted {
                fields[name] = value
            } else {
                fields[seen.name, default: ""] += ", " + value
            }
        }
        // FoundationNetworking's initializer never fails; Apple's documents no failure for these arguments.
        return HTTPURLResponse(
            url: url ?? URL(fileURLWithPath: "/"), statusCode: statusCode, httpVersion: httpVersion,
            headerFields: fields)!
    }
}

extension ResponseHead: CustomStringConvertible {
    /// `"200 https://example.com/movies (3 fields)"`, the URL's credentials and query redacted.
    public var description: String {
        "\(statusCode) \(Redactor.default.redact(url)) (\(fields.count) fields)"
    }
}

/// A header name that equals another spelt in other cases (`Set-Cookie`, `set-cookie`): compared and hashed
/// byte by byte with ASCII letters folded, eight bytes to a word, without a lowercased copy.
struct FoldedName: Hashable {
    let name: String

    init(_ name: String) { self.name = name }

    static func == (left: FoldedName, right: FoldedName) -> Bool { HeaderName.same(left.name, right.name) }

    func hash(into hasher: inout Hasher) {
        var word: UInt64 = 0
        var shift: UInt64 = 0
        for byte in name.utf8 {
            word |= UInt64(byte.lowercasedASCII) << shift
            shift += 8
            if shift == 64 {
                hasher.combine(word)
                word = 0
                shift = 0
            }
        }
        hasher.combine(word)
        hasher.combine(name.utf8.count)
    }
}
