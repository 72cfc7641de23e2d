import NetworkCore

/// Logs in to TheMovieDB, starts guest sessions and logs out, keeping the session in a ``SessionStore``.
///
/// ```swift
/// let auth = AuthService(pool: pool, configuration: configuration)
/// let session = try await auth.login(username: "ana", password: "…")   // token → validate → session
/// try await auth.logout()
/// ```
/// Other services attach the stored session where TMDB needs one with
/// ``TMDBConfiguration/prepare(_:session:)`` and ``session``.
public struct AuthService: Sendable {
    /// The pool calls go through.
    public let pool: TaskPool
    /// Environment and credential.
    public let configuration: TMDBConfiguration
    /// Where the session is kept.
    public let store: any SessionStore

    /// Creates the service; the session is kept in memory unless you pass a store.
    public init(pool: TaskPool, configuration: TMDBConfiguration, store: any SessionStore = InMemorySessionStore()) {
        self.pool = pool
        self.configuration = configuration
        self.store = store
    }

    /// The current session, if any.
    public var session: TMDBSession? { store.session }

    /// Logs a user in: a new request token, validated with the login, exchanged for a session, which is stored.
    /// - Throws: `NetworkError`; a wrong login is `httpStatus` 401 with TMDB code 30.
    public func login(username: String, password: String) async throws(NetworkError) -> Session {
        let token: RequestToken = try await send(.newToken)
        let validated: RequestToken = try await send(
            .validateWithLogin(username: username, password: password, requestToken: token.requestToken))
        let session: Session = try await send(.newSession(requestToken: validated.requestToken))
        store.save(.user(sessionID: session.sessionID))
        return session
    }

    /// Starts a guest session and stores it.
    public func guestSession() async throws(NetworkError) -> GuestSession {
        let guest: GuestSession = try await send(.newGuestSession)
        store.save(.guest(guestSessionID: guest.guestSessionID, expiresAt: guest.expiresAt))
        return guest
    }

    /// Ends the user's session on TMDB and forgets it.
    ///
    /// A guest session is only forgotten (TMDB has no call to end one). If TMDB no longer knows
    /// the session (401, 404) it is forgotten too; on any other failure it is kept, so you can retry.
    public func logout() async throws(NetworkError) {
        guard case .user(let sessionID) = store.session else {
            store.clear()
            return
        }
        do {
            _ = try await pool.send(
                configuration.prepare(AuthEndpoint.deleteSession(sessionID: sessionID)), parser: SuccessParser(),
                id: taskID(for: .deleteSession(sessionID: sessionID)))
        } catch  where error.statusCode == 401 || error.statusCode == 404 {
            // TMDB no longer knows the session: the user is logged out either way.
        }
        store.clear()
    }

    /// The id this service runs `endpoint` under: its readable ``AuthEndpoint/taskID`` with the service's
    /// environment and a fingerprint of its credential (``TMDBConfiguration/taskID(_:)``).
    public func taskID(for endpoint: AuthEndpoint) -> String { configuration.taskID(endpoint.taskID) }

    private func send<Model: Decodable & Sendable>(_ endpoint: AuthEndpoint) async throws(NetworkError) -> Model {
        try await pool.send(
            configuration.prepare(endpoint), parser: DecodableParser<Model>(), id: taskID(for: endpoint))
    }
}

extension AuthService {
    /// ``login(username:password:)`` for callers that are not `async`; `completion` is called once, on any thread.
    public func login(
        username: String, password: String, completion: @escaping @Sendable (Result<Session, NetworkError>) -> Void
    ) {
        Task {
            completion(
                await Self.result { () async throws(NetworkError) in
                    try await login(username: username, password: password)
                })
        }
    }

    /// ``guestSession()`` with a completion handler.
    public func guestSession(completion: @escaping @Sendable (Result<GuestSession, NetworkError>) -> Void) {
        Task { completion(await Self.result { () async throws(NetworkError) in try await guestSession() }) }
    }

    /// ``logout()`` with a completion handler.
    public func logout(completion: @escaping @Sendable (Result<Void, NetworkError>) -> Void) {
        Task { completion(await Self.result { () async throws(NetworkError) in try await logout() }) }
    }

    private static func result<T>(_ body: () async throws(NetworkError) -> T) async -> Result<T, NetworkError> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }
}
