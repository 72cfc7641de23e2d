// swift-format-ignore-file
// The samples are shown in a guide as written here (GuideSamplesTests), so they keep its layout.
import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The samples of Docs/Authentication.md, each in the context the page gives it (compiled, never run).
/// `GuideSamplesTests` checks that the page shows exactly the lines between the markers.
enum AuthenticationSamples {
    // What the page's samples assume: a token, the backend that renews it, where the app keeps it.
    struct Token: Sendable {
        let accessToken: String
        let refreshToken: String
        let expiresAt: Date
    }
    struct TokenBackend: Sendable {
        func renew(refreshToken: String?) async throws -> Token {
            Token(accessToken: "new", refreshToken: refreshToken ?? "", expiresAt: .distantFuture)
        }
    }
    struct Keychain { var savedToken: Token? }

    static func bearer(backend: TokenBackend, keychain: Keychain) -> TaskPool {
        // GUIDE-BEGIN
        struct BearerAuthenticator: Authenticator {
            let backend: TokenBackend

            func apply(_ credential: Token, to request: inout URLRequest) {
                request.setValue("Bearer \(credential.accessToken)", forHTTPHeaderField: "Authorization")
            }
            func isRequest(_ request: URLRequest, authenticatedWith credential: Token) -> Bool {
                request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.accessToken)"
            }
            func refresh(_ credential: Token?) async throws -> Token {
                try await backend.renew(refreshToken: credential?.refreshToken)
            }
            func isExpired(_ credential: Token) -> Bool { credential.expiresAt <= Date() }
        }

        let authentication = AuthenticationInterceptor(
            authenticator: BearerAuthenticator(backend: backend), credential: keychain.savedToken,
            maximumRefreshes: 3, refreshWindow: 30)
        let pool = TaskPool(configuration: .init(
            resourceTimeout: 30,
            interceptors: [authentication, RetryPolicy()]))
        // GUIDE-END
        return pool
    }

    /// A session whose expiry the server reports in a 200's body.
    struct SessionAuthenticator: Authenticator {
        func apply(_ credential: Token, to request: inout URLRequest) {
            request.setValue(credential.accessToken, forHTTPHeaderField: "X-Session")
        }
        func isRequest(_ request: URLRequest, authenticatedWith credential: Token) -> Bool {
            request.value(forHTTPHeaderField: "X-Session") == credential.accessToken
        }
        func refresh(_ credential: Token?) async throws -> Token { try await TokenBackend().renew(refreshToken: nil) }
        func isExpired(_ credential: Token) -> Bool { false }

        // GUIDE-BEGIN
        func isRejection(_ failure: NetworkError, of request: URLRequest) -> Bool {
            failure.statusCode == 401 || failure.serverError?.code == 3
        }
        // GUIDE-END
    }

    static func redirects() async throws -> [TaskPool] {
        // GUIDE-BEGIN
        // Every task of this pool stays on the origin it was sent to.
        let careful = TaskPool(configuration: .init(redirectPolicy: .sameOrigin))

        // An upload that must not be redirected at all: a 3xx ends it with that answer.
        struct Upload: Endpoint {
            var baseURL: String { "https://api.example.com" }
            var path: String { "uploads" }
            var method: HTTPMethod { .post }
            var redirectPolicy: RedirectPolicy? { .never }
        }

        let shortChains = TaskPool(configuration: .init(redirectPolicy: .follow(maximumHops: 3)))
        let response = try await shortChains.send(Upload())   // .never wins over the pool's policy
        // GUIDE-END
        print(response.statusCode)
        return [careful, shortChains]
    }
}
