import Foundation
import NetworkCore

/// TheMovieDB's authentication calls (API v3).
public enum AuthEndpoint: Endpoint, Hashable {
    /// `GET authentication/token/new`: a request token to validate.
    case newToken
    /// `POST authentication/token/validate_with_login`: validate a request token with a user's login.
    case validateWithLogin(username: String, password: String, requestToken: String)
    /// `POST authentication/session/new`: exchange a validated request token for a session.
    case newSession(requestToken: String)
    /// `DELETE authentication/session`: log out.
    case deleteSession(sessionID: String)
    /// `GET authentication/guest_session/new`.
    case newGuestSession

    /// `https://api.themoviedb.org/3`.
    public var baseURL: String { TMDBEnvironment.production.baseURL }

    /// `"AuthService"`, as shown in the pool's task table.
    public var service: String { "AuthService" }

    /// The path below the base URL.
    public var path: String {
        switch self {
        case .newToken: "authentication/token/new"
        case .validateWithLogin: "authentication/token/validate_with_login"
        case .newSession: "authentication/session/new"
        case .deleteSession: "authentication/session"
        case .newGuestSession: "authentication/guest_session/new"
        }
    }

    /// `GET`, `POST` or `DELETE`.
    public var method: HTTPMethod {
        switch self {
        case .newToken, .newGuestSession: .get
        case .validateWithLogin, .newSession: .post
        case .deleteSession: .delete
        }
    }

    /// JSON bodies for the calls that send one.
    public var task: HTTPTask {
        switch self {
        case .newToken, .newGuestSession:
            .plain
        case .validateWithLogin(let username, let password, let requestToken):
            .bodyParameters(["username": username, "password": password, "request_token": requestToken])
        case .newSession(let requestToken):
            .bodyParameters(["request_token": requestToken])
        case .deleteSession(let sessionID):
            .bodyParameters(["session_id": sessionID])
        }
    }

    /// The bundled fixture for this call.
    public var sampleData: Data? {
        switch self {
        case .newToken: TMDBFixtures.data(.newToken)
        case .validateWithLogin: TMDBFixtures.data(.validatedToken)
        case .newSession: TMDBFixtures.data(.newSession)
        case .deleteSession: TMDBFixtures.data(.deleteSession)
        case .newGuestSession: TMDBFixtures.data(.guestSession)
        }
    }

    /// A readable task id; never contains a credential.
    public var taskID: String {
        switch self {
        case .newToken: "auth.newToken"
        case .validateWithLogin: "auth.validateWithLogin"
        case .newSession: "auth.newSession"
        case .deleteSession: "auth.deleteSession"
        case .newGuestSession: "auth.newGuestSession"
        }
    }
}
