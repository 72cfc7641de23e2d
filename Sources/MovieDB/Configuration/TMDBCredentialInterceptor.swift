import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Puts a TMDB credential, and a session on writes, on each request to the configuration's environment that
/// comes without them: what ``TMDBConfiguration/prepare(_:session:)`` adds to a call, added at send time.
///
/// A durable write (``MovieService/rate(id:value:session:durability:)`` with a durability) is kept in the
/// pool's `DurableStore` without its credential and session, which are secrets; when a later run sends it
/// again, this interceptor, in that pool's interceptors, adds them back:
/// ```swift
/// let configuration = TMDBConfiguration(credential: .apiKey(key))
/// let pool = TaskPool(
///     configuration: .init(
///         interceptors: [configuration.credentials(session: .user(sessionID: sessionID))],
///         durableStore: try DurableStore(directory: pendingWrites)))
/// ```
/// A request that has a credential (an `api_key` query item, or an `Authorization` header) keeps it; the
/// session goes on requests other than `GET` and `HEAD` that have neither `session_id` nor `guest_session_id`.
/// Requests to other hosts (images) are left as they are.
public struct TMDBCredentialInterceptor: RequestInterceptor {
    /// Whose environment and credential.
    public let configuration: TMDBConfiguration
    /// The session writes are made in; `nil` adds none.
    public let session: TMDBSession?

    /// Creates the interceptor; ``TMDBConfiguration/credentials(session:)`` reads better.
    public init(configuration: TMDBConfiguration, session: TMDBSession?) {
        self.configuration = configuration
        self.session = session
    }

    /// RFC 3986's unreserved characters: what a query value keeps unescaped.
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// The request with what it lacks of the credential and, for a write, the session.
    public func adapt(_ request: URLRequest, context: AttemptContext) async throws -> URLRequest {
        guard let url = request.url, url.absoluteString.hasPrefix(configuration.environment.baseURL + "/"),
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return request }
        var request = request
        let names = Set((components.queryItems ?? []).map(\.name))
        var added: [(String, String)] = []
        switch configuration.credential {
        case .apiKey(let key) where !names.contains("api_key"): added.append(("api_key", key))
        case .readAccessToken(let token) where request.value(forHTTPHeaderField: "Authorization") == nil:
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        default: break
        }
        let method = request.httpMethod ?? "GET"
        if method != "GET", method != "HEAD", !names.contains("session_id"), !names.contains("guest_session_id") {
            switch session {
            case .user(let sessionID): added.append(("session_id", sessionID))
            case .guest(let guestSessionID, _): added.append(("guest_session_id", guestSessionID))
            case nil: break
            }
        }
        guard !added.isEmpty else { return request }
        // Appended to the query as it is encoded, so the items already there stay byte for byte; each value
        // escaped as `prepare` escapes it (all but the unreserved characters).
        let pairs = added.map { name, value in
            name + "=" + (value.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? value)
        }
        let query = [components.percentEncodedQuery ?? ""].filter { !$0.isEmpty } + pairs
        components.percentEncodedQuery = query.joined(separator: "&")
        request.url = components.url ?? url
        return request
    }
}

extension TMDBConfiguration {
    /// An interceptor that adds this configuration's credential, and `session` to writes, to requests sent
    /// without them: a pool's interceptor for durable writes made with ``MovieService`` (see
    /// ``TMDBCredentialInterceptor``).
    public func credentials(session: TMDBSession? = nil) -> TMDBCredentialInterceptor {
        TMDBCredentialInterceptor(configuration: self, session: session)
    }
}
