import Foundation

/// A server's error: the HTTP status, the server's own code and message, and the raw body.
///
/// It comes from error responses (4xx, 5xx) and from "successful errors": a 2xx whose body
/// says the call failed, such as `{"success": false, "status_code": 7, "status_message": "Invalid API key"}`.
public struct ResponseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The HTTP status code.
    public let statusCode: Int
    /// The server's own code, when the body has one (`7` for TMDB's "Invalid API key").
    public let code: Int?
    /// The server's own message, when the body has one.
    public let message: String?
    /// The body as received.
    public let body: Data

    /// Creates a server error.
    public init(statusCode: Int, code: Int? = nil, message: String? = nil, body: Data = Data()) {
        self.statusCode = statusCode
        self.code = code
        self.message = message
        self.body = body
    }

    /// `"HTTP 401 (server code 7: Invalid API key)"`.
    public var description: String {
        var text = "HTTP \(statusCode)"
        switch (code, message) {
        case let (code?, message?): text += " (server code \(code): \(message))"
        case let (code?, nil): text += " (server code \(code))"
        case let (nil, message?): text += " (\(message))"
        case (nil, nil): break
        }
        return text
    }
}
