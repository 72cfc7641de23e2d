import Foundation
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

    /// Rates movie `id` with `value` (0.5 to 10, in steps of 0.5) in `session`: a user's or a guest's
    /// (``AuthService``). The answer is TMDB's status: code 1 for a new rating, 12 for a changed one.
    ///
    /// With a `durability`, the rating is a durable write: kept in the pool's `DurableStore` before it is
    /// sent, with an idempotency key, and sent again by the next pool opened on the store when it ends
    /// without an answer from TMDB (no network, TMDB unreachable), until `durability`'s expiry. The store
    /// writes no credential and no session: give that pool ``TMDBConfiguration/credentials(session:)`` as an
    /// interceptor, so they are added when the rating is sent again.
    /// ```swift
    /// let pool = TaskPool(
    ///     configuration: .init(interceptors: [configuration.credentials(session: session)], durableStore: store))
    /// try await MovieService(pool: pool, configuration: configuration)
    ///     .rate(id: 550, value: 8.5, session: session, durability: Durability(expiry: 7 * 86_400))
    /// ```
    /// It runs under ``taskID(for:)`` of ``MovieEndpoint/rate(id:value:)``, e.g. `"movies.rate.id=550.value=8.5 …"`:
    /// two ratings of one movie with different values are two tasks.
    /// - Throws: ``NetworkError/invalidEndpoint(url:reason:)`` for a value TMDB does not take, or a durable
    ///   rating on a pool without a store or without a ``TMDBCredentialInterceptor``; any error of `TaskPool/send(_:id:)`, TMDB's own as
    ///   `httpStatus` (401 with code 3 for a session it does not know, 404 with code 34 for a movie).
    @discardableResult
    public func rate(
        id: Int, value: Double, session: TMDBSession, durability: Durability? = nil
    ) async throws(NetworkError) -> TMDBStatus {
        let endpoint = MovieEndpoint.rate(id: id, value: value)
        guard value >= 0.5, value <= 10, (value * 2).rounded() == value * 2 else {
            throw .invalidEndpoint(
                url: configuration.environment.baseURL + "/" + endpoint.path,
                reason: "a rating is 0.5 to 10 in steps of 0.5, not \(value)")
        }
        if durability != nil, !pool.configuration.interceptors.contains(where: { $0 is TMDBCredentialInterceptor }) {
            throw .invalidEndpoint(
                url: configuration.environment.baseURL + "/" + endpoint.path,
                reason:
                    "a durable rating needs configuration.credentials(session:) among the pool's interceptors: the store keeps neither the credential nor the session, and a rating sent again after a restart needs both"
            )
        }
        let prepared = configuration.prepare(endpoint, session: session)
        let parser = DecodableParser<TMDBStatus>()
        if let durability {
            return try await pool.send(
                prepared.durable(for: durability.expiry), parser: parser, id: taskID(for: endpoint))
        }
        return try await pool.send(prepared, parser: parser, id: taskID(for: endpoint))
    }

    /// Downloads the movie's poster at `size` to `file` (replacing a file there), from the environment's
    /// image host, and returns the response (``Response/fileURL`` is `file`). `progress` is told the
    /// bytes as they arrive. It runs under the image's ``ImageEndpoint/taskID``, e.g.
    /// `"images.w500/pB8BM7pdSp6B6Ih7QZ4DrQ3PmJK.jpg"`.
    /// ```swift
    /// let fightClub = try await movies.details(id: 550)
    /// try await movies.downloadPoster(of: fightClub, to: file) { print($0.fractionCompleted ?? 0) }
    /// ```
    /// - Throws: ``NetworkError/invalidEndpoint(url:reason:)`` when the movie has no poster; any error
    ///   of `TaskPool/download(_:to:id:progress:)`.
    @discardableResult
    public func downloadPoster(
        of movie: some MovieArtwork, size: ImageSize = .w500, to file: URL,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(NetworkError) -> Response {
        try await downloadImage(movie.posterPath, kind: "poster", size: size, to: file, progress: progress)
    }

    /// Downloads the movie's backdrop at `size` to `file`, as ``downloadPoster(of:size:to:progress:)`` does.
    @discardableResult
    public func downloadBackdrop(
        of movie: some MovieArtwork, size: ImageSize = .w780, to file: URL,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(NetworkError) -> Response {
        try await downloadImage(movie.backdropPath, kind: "backdrop", size: size, to: file, progress: progress)
    }

    private func downloadImage(
        _ path: String?, kind: String, size: ImageSize, to file: URL,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws(NetworkError) -> Response {
        guard let path, !path.isEmpty else {
            throw .invalidEndpoint(url: configuration.environment.imageBaseURL, reason: "the movie has no \(kind)")
        }
        let image = ImageEndpoint(path: path, size: size, imageBaseURL: configuration.environment.imageBaseURL)
        return try await pool.download(image, to: file, id: image.taskID, progress: progress)
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
        try await pool.send(
            configuration.prepare(endpoint), parser: DecodableParser<Model>(), id: taskID(for: endpoint))
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
