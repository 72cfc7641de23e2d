/// How a TMDB client proves who it is: an API key or a read-access token.
public enum TMDBCredential: Hashable, Sendable {
    /// A v3 API key, sent as the `api_key` query item.
    case apiKey(String)
    /// A read-access token, sent as `Authorization: Bearer …`.
    case readAccessToken(String)

    /// The credential named by `TMDB_API_KEY` or, failing that, `TMDB_READ_TOKEN` in `environment`.
    public static func from(environment: [String: String]) -> TMDBCredential? {
        if let key = environment["TMDB_API_KEY"], !key.isEmpty { return .apiKey(key) }
        if let token = environment["TMDB_READ_TOKEN"], !token.isEmpty { return .readAccessToken(token) }
        return nil
    }
}
