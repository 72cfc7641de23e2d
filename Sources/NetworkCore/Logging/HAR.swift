import Foundation

/// An HTTP Archive (HAR 1.2): recorded traffic that browser developer tools and HAR viewers open.
///
/// Made by a ``HARRecorder``; replayed by a ``HARReplayTransport``. Field names follow the
/// HAR 1.2 specification; times are milliseconds.
public struct HAR: Codable, Hashable, Sendable {
    /// The archive's root.
    public var log: Log

    /// Creates an archive with these entries.
    public init(entries: [Entry]) {
        log = Log(
            version: "1.2", creator: Creator(name: "NetworkCore", version: LibraryVersion.current), entries: entries)
    }

    /// The `log` object.
    public struct Log: Codable, Hashable, Sendable {
        /// `"1.2"`.
        public var version: String
        /// What made the archive.
        public var creator: Creator
        /// The requests, in the order they started.
        public var entries: [Entry]
    }

    /// The program that made the archive.
    public struct Creator: Codable, Hashable, Sendable {
        /// Its name.
        public var name: String
        /// Its version.
        public var version: String
    }

    /// One request and its response.
    public struct Entry: Codable, Hashable, Sendable {
        /// When the request started, ISO 8601 with milliseconds.
        public var startedDateTime: String
        /// Milliseconds from start to end.
        public var time: Double
        /// The request.
        public var request: Request
        /// The response; status 0 when none arrived.
        public var response: Response
        /// Cache information: empty, but for an answer from the pool's cache.
        public var cache: Cache
        /// Where the time went.
        public var timings: Timings
        /// Why no response arrived, when none did.
        public var comment: String?
    }

    /// A request.
    public struct Request: Codable, Hashable, Sendable {
        /// `GET`, `POST`…
        public var method: String
        /// The full URL.
        public var url: String
        /// `"HTTP/1.1"`.
        public var httpVersion: String
        /// Cookies (not parsed; always empty).
        public var cookies: [NameValue]
        /// Headers.
        public var headers: [NameValue]
        /// The query's items, decoded.
        public var queryString: [NameValue]
        /// The body, if any.
        public var postData: PostData?
        /// Unknown: -1.
        public var headersSize: Int
        /// The body's size in bytes.
        public var bodySize: Int
    }

    /// A response.
    public struct Response: Codable, Hashable, Sendable {
        /// The HTTP status; 0 when none arrived.
        public var status: Int
        /// The reason phrase.
        public var statusText: String
        /// `"HTTP/1.1"`.
        public var httpVersion: String
        /// Cookies (not parsed; always empty).
        public var cookies: [NameValue]
        /// Headers.
        public var headers: [NameValue]
        /// The body.
        public var content: Content
        /// The `Location` of a redirect, or empty.
        public var redirectURL: String
        /// Unknown: -1.
        public var headersSize: Int
        /// The body's size in bytes.
        public var bodySize: Int
    }

    /// A request body.
    public struct PostData: Codable, Hashable, Sendable {
        /// Its content type.
        public var mimeType: String
        /// Its text; empty when the body was too large to record (see ``comment``).
        public var text: String
        /// Why the text is not there: the body was larger than the recorder's `bodyLimit`.
        public var comment: String?
    }

    /// A response body: text, or base64 with ``encoding`` `"base64"` for bytes that are not UTF-8.
    public struct Content: Codable, Hashable, Sendable {
        /// Its size in bytes.
        public var size: Int
        /// Its content type.
        public var mimeType: String
        /// The body.
        public var text: String?
        /// `"base64"` when ``text`` is base64.
        public var encoding: String?
        /// Why ``text`` is not there: the body was larger than the recorder's `bodyLimit`.
        public var comment: String?

        /// The body's bytes.
        public var data: Data {
            guard let text else { return Data() }
            return encoding == "base64" ? Data(base64Encoded: text) ?? Data() : Data(text.utf8)
        }
    }

    /// A name and a value: a header or a query item.
    public struct NameValue: Codable, Hashable, Sendable {
        /// The name.
        public var name: String
        /// The value.
        public var value: String
    }

    /// Cache information: for an answer from the pool's cache, where it came from.
    public struct Cache: Codable, Hashable, Sendable {
        /// `"answered from the cache: stale, 40 s old"` for an answer from the pool's cache; else absent.
        public var comment: String?

        /// Creates the cache information of an entry.
        public init(comment: String? = nil) { self.comment = comment }
    }

    /// Milliseconds spent in each phase; -1 where not measured.
    public struct Timings: Codable, Hashable, Sendable {
        /// Waiting for a connection: not measured.
        public var blocked: Double = -1
        /// DNS: not measured.
        public var dns: Double = -1
        /// Connecting: not measured.
        public var connect: Double = -1
        /// TLS: not measured.
        public var ssl: Double = -1
        /// Sending the request (measured as 0: it is inside `wait`).
        public var send: Double
        /// From sending to the first byte of the response.
        public var wait: Double
        /// From the first byte to the last.
        public var receive: Double
    }
}
