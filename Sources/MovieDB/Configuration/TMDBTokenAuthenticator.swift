import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends TMDB read-access tokens as `Authorization: Bearer …` and renews them through your own
/// token service when TMDB rejects one (401).
///
/// Use it with NetworkCore's `AuthenticationInterceptor` and a configuration without a credential:
/// ```swift
/// let auth = AuthenticationInterceptor(
///     authenticator: TMDBTokenAuthenticator { try await backend.freshTMDBToken() }, credential: savedToken)
/// let pool = TaskPool(configuration: .init(interceptors: [auth]))
/// let movies = MovieService(pool: pool, configuration: .init(credential: nil))
/// ```
/// However many calls are rejected at once, the token is renewed once and every call is replayed.
public struct TMDBTokenAuthenticator: Authenticator {
    private let renew: @Sendable () async throws -> String

    /// Creates the authenticator; `renew` fetches a new read-access token.
    public init(renew: @escaping @Sendable () async throws -> String) { self.renew = renew }

    /// Sets `Authorization: Bearer <token>`.
    public func apply(_ credential: String, to request: inout URLRequest) {
        request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
    }

    /// Whether the request carries this token.
    public func isRequest(_ request: URLRequest, authenticatedWith credential: String) -> Bool {
        request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential)"
    }

    /// A new token from `renew`.
    public func refresh(_ credential: String?) async throws -> String { try await renew() }
}
