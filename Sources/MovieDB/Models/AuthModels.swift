import Foundation

/// A request token from `authentication/token/new` or `…/validate_with_login`.
public struct RequestToken: Codable, Hashable, Sendable {
    /// The token.
    public let requestToken: String
    /// When it expires, as sent (`"2016-08-26 17:04:39 UTC"`).
    public let expiresAtText: String?
    /// Whether TMDB says the call succeeded.
    public let success: Bool

    enum CodingKeys: String, CodingKey {
        case success
        case requestToken = "request_token"
        case expiresAtText = "expires_at"
    }

    /// When it expires, or `nil` when unknown.
    public var expiresAt: Date? { TMDBDate.parse(expiresAtText) }
}

/// A user session from `authentication/session/new`.
public struct Session: Codable, Hashable, Sendable {
    /// The session id, sent as `session_id` on calls that act for the user.
    public let sessionID: String
    /// Whether TMDB says the call succeeded.
    public let success: Bool

    enum CodingKeys: String, CodingKey {
        case success
        case sessionID = "session_id"
    }
}

/// A guest session from `authentication/guest_session/new`.
public struct GuestSession: Codable, Hashable, Sendable {
    /// The guest session id, sent as `guest_session_id`.
    public let guestSessionID: String
    /// When it expires, as sent.
    public let expiresAtText: String?
    /// Whether TMDB says the call succeeded.
    public let success: Bool

    enum CodingKeys: String, CodingKey {
        case success
        case guestSessionID = "guest_session_id"
        case expiresAtText = "expires_at"
    }

    /// When it expires, or `nil` when unknown.
    public var expiresAt: Date? { TMDBDate.parse(expiresAtText) }
}
