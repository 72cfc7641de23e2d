import NetworkCore

/// What every TMDB call shares: the environment, the credential, and the preferred language and region.
public struct TMDBConfiguration: Sendable {
    /// Where requests go.
    public var environment: TMDBEnvironment
    /// The credential attached to every request; `nil` sends none.
    public var credential: TMDBCredential?
    /// The language for titles and overviews (`"de-DE"`); `nil` for TMDB's default.
    public var language: String?
    /// The region for release dates and the now-playing and upcoming lists (`"DE"`); `nil` for TMDB's default.
    public var region: String?

    /// Creates a configuration.
    public init(
        environment: TMDBEnvironment = .production, credential: TMDBCredential?, language: String? = nil,
        region: String? = nil
    ) {
        self.environment = environment
        self.credential = credential
        self.language = language
        self.region = region
    }

    /// The endpoint sent to this environment with this credential and, where given, a session.
    ///
    /// Write your own TMDB service the same way:
    /// ```swift
    /// pool.send(configuration.prepare(MyEndpoint.rate(id: 550, value: 8), session: store.session), …)
    /// ```
    public func prepare<E: Endpoint>(_ endpoint: E, session: TMDBSession? = nil) -> ModifiedEndpoint<E> {
        var prepared = endpoint.with(baseURL: environment.baseURL)
        switch credential {
        case .apiKey(let key): prepared = prepared.addingQuery(["api_key": key])
        case .readAccessToken(let token): prepared = prepared.addingHeaders(["Authorization": "Bearer \(token)"])
        case nil: break
        }
        switch session {
        case .user(let sessionID): prepared = prepared.addingQuery(["session_id": sessionID])
        case .guest(let guestSessionID, _): prepared = prepared.addingQuery(["guest_session_id": guestSessionID])
        case nil: break
        }
        return prepared
    }
}
