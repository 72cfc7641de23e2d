import NetworkCore

/// TheMovieDB's movie lists, details, videos and search, through an injected `TaskPool`.
///
/// ```swift
/// let movies = MovieService(pool: pool, configuration: .init(credential: .apiKey(key)))
/// let page = try await movies.nowPlaying(page: 1)
/// pool.cancel(id: movies.taskID(for: .nowPlaying(page: 1)))   // "movies.nowPlaying.page=1 production#…"
/// ```
/// Every call runs under ``taskID(for:)``: its endpoint's readable ``MovieEndpoint/taskID`` with the
/// service's environment, so a screen can find or cancel it by id, and services with different
/// environments or credentials can share one pool. Errors are `NetworkError`s carrying TMDB's own `status_code` and
/// `status_message` (`NetworkError/serverError`).
public struct MovieService: Sendable {
    /// The pool calls go through.
    public let pool: TaskPool
    /// Environment, credential, language and region.
    public let configuration: TMDBConfiguration

    /// Creates the service.
    public init(pool: TaskPool, configuration: TMDBConfiguration) {
        self.pool = pool
        self.configuration = configuration
    }

    /// Movies in cinemas now.
    public func nowPlaying(page: Int = 1) async throws(NetworkError) -> MoviePage {
        try await send(.nowPlaying(page: page, language: configuration.language, region: configuration.region))
    }

    /// The most popular movies.
    public func popular(page: Int = 1) async throws(NetworkError) -> MoviePage {
        try await send(.popular(page: page, language: configuration.language, region: configuration.region))
    }

    /// The best-rated movies.
    public func topRated(page: Int = 1) async throws(NetworkError) -> MoviePage {
        try await send(.topRated(page: page, language: configuration.language, region: configuration.region))
    }

    /// Movies coming to cinemas.
    public func upcoming(page: Int = 1) async throws(NetworkError) -> MoviePage {
        try await send(.upcoming(page: page, language: configuration.language, region: configuration.region))
    }

    /// One movie in full.
    public func details(id: Int) async throws(NetworkError) -> MovieDetails {
        try await send(.details(id: id, language: configuration.language))
    }

    /// Movies recommended for people who liked movie `id`.
    public func recommendations(id: Int, page: Int = 1) async throws(NetworkError) -> MoviePage {
        try await send(.recommendations(id: id, page: page, language: configuration.language))
    }

    /// A movie's trailers, teasers and clips.
    public func videos(id: Int) async throws(NetworkError) -> VideoList {
        try await send(.videos(id: id, language: configuration.language))
    }

    /// Movies whose title matches `query`.
    public func search(query: String, page: Int = 1) async throws(NetworkError) -> MoviePage {
        try await send(.search(query: query, page: page, language: configuration.language))
    }

    /// The id this service runs `endpoint` under: its readable ``MovieEndpoint/taskID`` with the service's
    /// environment and a fingerprint of its credential (``TMDBConfiguration/taskID(_:)``).
    public func taskID(for endpoint: MovieEndpoint) -> String { configuration.taskID(endpoint.taskID) }

    /// Sends any movie endpoint under its task id and decodes `Model`; the calls above all use this.
    public func send<Model: Decodable & Sendable>(
        _ endpoint: MovieEndpoint, as model: Model.Type = Model.self
    )
        async throws(NetworkError) -> Model
    {
        try await pool.send(configuration.prepare(endpoint), parser: DecodableParser<Model>(), id: taskID(for: endpoint))
    }
}

extension MovieService {
    /// A completion handler's result.
    public typealias Completion<Model> = @Sendable (Result<Model, NetworkError>) -> Void

    /// ``nowPlaying(page:)`` for callers that are not `async`; `completion` is called once, on any thread.
    public func nowPlaying(page: Int = 1, completion: @escaping Completion<MoviePage>) {
        send(
            .nowPlaying(page: page, language: configuration.language, region: configuration.region),
            completion: completion)
    }

    /// ``popular(page:)`` with a completion handler.
    public func popular(page: Int = 1, completion: @escaping Completion<MoviePage>) {
        send(
            .popular(page: page, language: configuration.language, region: configuration.region), completion: completion
        )
    }

    /// ``topRated(page:)`` with a completion handler.
    public func topRated(page: Int = 1, completion: @escaping Completion<MoviePage>) {
        send(
            .topRated(page: page, language: configuration.language, region: configuration.region),
            completion: completion)
    }

    /// ``upcoming(page:)`` with a completion handler.
    public func upcoming(page: Int = 1, completion: @escaping Completion<MoviePage>) {
        send(
            .upcoming(page: page, language: configuration.language, region: configuration.region),
            completion: completion)
    }

    /// ``details(id:)`` with a completion handler.
    public func details(id: Int, completion: @escaping Completion<MovieDetails>) {
        send(.details(id: id, language: configuration.language), completion: completion)
    }

    /// ``recommendations(id:page:)`` with a completion handler.
    public func recommendations(id: Int, page: Int = 1, completion: @escaping Completion<MoviePage>) {
        send(.recommendations(id: id, page: page, language: configuration.language), completion: completion)
    }

    /// ``videos(id:)`` with a completion handler.
    public func videos(id: Int, completion: @escaping Completion<VideoList>) {
        send(.videos(id: id, language: configuration.language), completion: completion)
    }

    /// ``search(query:page:)`` with a completion handler.
    public func search(query: String, page: Int = 1, completion: @escaping Completion<MoviePage>) {
        send(.search(query: query, page: page, language: configuration.language), completion: completion)
    }

    /// ``send(_:as:)`` with a completion handler.
    public func send<Model: Decodable & Sendable>(
        _ endpoint: MovieEndpoint, as model: Model.Type = Model.self, completion: @escaping Completion<Model>
    ) {
        pool.send(
            configuration.prepare(endpoint), parser: DecodableParser<Model>(), id: taskID(for: endpoint),
            completion: completion)
    }
}
