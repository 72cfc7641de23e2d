import NetworkCore

extension JSONStatusReader {
    /// How TheMovieDB states its own outcome: `status_code` and `status_message`, or for a rejected
    /// parameter an `errors` array (`{"errors": ["page must be less than or equal to 500"]}`), and a
    /// `success` flag that may be `false` on a 2xx answer. ``TMDBConfiguration/prepare(_:session:)``
    /// sets it on every endpoint, so a pool shared with other services keeps its own default.
    public static let tmdb = JSONStatusReader(
        codeKeys: ["status_code"], messageKeys: ["status_message", "errors"], successKey: "success")
}

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
    /// How TMDB calls use the pool's cache, when the pool has one (``TaskPool/Configuration/cache``); `nil`
    /// leaves it to the pool's policy. ``CachePolicy/networkFirst`` makes an app show the last lists it
    /// got when the network is gone.
    public var cachePolicy: CachePolicy?

    /// Creates a configuration.
    public init(
        environment: TMDBEnvironment = .production, credential: TMDBCredential?, language: String? = nil,
        region: String? = nil, cachePolicy: CachePolicy? = nil
    ) {
        self.cachePolicy = cachePolicy
        self.environment = environment
        self.credential = credential
        self.language = language
        self.region = region
    }

    /// The task id of a call whose readable id is `id` (an endpoint's `taskID`), for this configuration:
    /// the readable id, the environment's name and a fingerprint of its base URL and credential
    /// (`"movies.nowPlaying.page=1 production#5c1f0a9e3b27"`, see `Redactor.fingerprint(_:)`). So services
    /// with different environments or credentials share one pool without their calls meeting under one
    /// id; the credential is never shown. Services with the same configuration run the same call under
    /// the same id, and join it.
    public func taskID(_ id: String) -> String {
        let credential: String =
            switch self.credential {
            case .apiKey(let key): "key " + key
            case .readAccessToken(let token): "token " + token
            case nil: ""
            }
        return "\(id) \(environment.name)\(Redactor.fingerprint(environment.baseURL + "\n" + credential))"
    }

    /// The endpoint sent to this environment with this credential and, where given, a session.
    ///
    /// Write your own TMDB service the same way:
    /// ```swift
    /// let rated = try await pool.send(configuration.prepare(MyEndpoint.rate(id: 550, value: 8), session: session))
    /// ```
    public func prepare<E: Endpoint>(_ endpoint: E, session: TMDBSession? = nil) -> ModifiedEndpoint<E> {
        var prepared = endpoint.with(baseURL: environment.baseURL).reading(status: JSONStatusReader.tmdb)
        if let cachePolicy { prepared = prepared.caching(cachePolicy) }
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
