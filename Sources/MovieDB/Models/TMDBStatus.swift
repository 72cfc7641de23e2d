/// TMDB's acknowledgement of a write, such as a rating:
/// `{"success": true, "status_code": 1, "status_message": "Success."}`.
public struct TMDBStatus: Codable, Hashable, Sendable {
    /// Whether TMDB says the call succeeded; `nil` when it did not say.
    public let success: Bool?
    /// TMDB's own code: 1 for a new record, 12 for an updated one, 13 for a deleted one.
    public let statusCode: Int
    /// TMDB's message, e.g. `"Success."`.
    public let statusMessage: String

    enum CodingKeys: String, CodingKey {
        case success
        case statusCode = "status_code"
        case statusMessage = "status_message"
    }
}
