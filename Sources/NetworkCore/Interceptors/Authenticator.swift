import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Knows how to use and renew one kind of credential; an ``AuthenticationInterceptor`` runs it.
///
/// ```swift
/// struct BearerAuthenticator: Authenticator {
///     let tokens: TokenService
///     func apply(_ credential: Token, to request: inout URLRequest) {
///         request.setValue("Bearer \(credential.value)", forHTTPHeaderField: "Authorization")
///     }
///     func isRequest(_ request: URLRequest, authenticatedWith credential: Token) -> Bool {
///         request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.value)"
///     }
///     func refresh(_ credential: Token?) async throws -> Token { try await tokens.refresh(credential) }
///     func isExpired(_ credential: Token) -> Bool { credential.expiresAt <= Date() }
/// }
/// ```
public protocol Authenticator: Sendable {
    /// The credential: a token, a session, a key with an expiry.
    associatedtype Credential: Sendable

    /// Puts the credential on a request.
    func apply(_ credential: Credential, to request: inout URLRequest)

    /// Whether `request` was sent with `credential` (and not an older one).
    func isRequest(_ request: URLRequest, authenticatedWith credential: Credential) -> Bool

    /// A new credential, usually from a refresh endpoint. Called once at a time, however many requests need it.
    func refresh(_ credential: Credential?) async throws -> Credential

    /// Whether the credential is known to have expired, so it is renewed before use. Default: `false`.
    func isExpired(_ credential: Credential) -> Bool

    /// Whether a failure means the credential was rejected. Default: HTTP 401.
    /// Override it for servers that say so differently, e.g. a 200 body with a "session expired" code.
    func isRejection(_ failure: NetworkError, of request: URLRequest) -> Bool
}

extension Authenticator {
    /// `false`: credentials are renewed only when rejected.
    public func isExpired(_ credential: Credential) -> Bool { false }

    /// HTTP 401.
    public func isRejection(_ failure: NetworkError, of request: URLRequest) -> Bool { failure.statusCode == 401 }
}

/// Why a call could not be authenticated.
public enum AuthenticationFailure: Error, Sendable, CustomStringConvertible {
    /// Renewing the credential failed; the error it failed with is kept, and the credential was cleared.
    case refreshFailed(any Error)
    /// The credential was renewed too often in a short time, so it was not renewed again.
    case tooManyRefreshes(count: Int, within: TimeInterval)
    /// There is no credential: none was given, or it was cleared.
    case noCredential

    /// One sentence.
    public var description: String {
        switch self {
        case .refreshFailed(let error): "renewing the credential failed: \(error)"
        case .tooManyRefreshes(let count, let window):
            "the credential was renewed \(count) times within \(Int(window)) s and was still rejected"
        case .noCredential: "there is no credential"
        }
    }
}
