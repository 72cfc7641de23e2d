import Foundation

/// One call to a server, usually declared as a case of an enum.
///
/// ```swift
/// enum Movies: Endpoint {
///     case nowPlaying(page: Int)
///     case details(id: Int)
///
///     var baseURL: String { "https://api.themoviedb.org/3" }
///     var path: String {
///         switch self {
///         case .nowPlaying: "movie/now_playing"
///         case .details(let id): "movie/\(id)"
///         }
///     }
///     var task: HTTPTask {
///         switch self {
///         case .nowPlaying(let page): .urlParameters(["page": page])
///         case .details: .plain
///         }
///     }
/// }
/// ```
/// A base URL or path that does not make a valid URL is reported as
/// ``NetworkError/invalidEndpoint(url:reason:)`` when the request is built.
public protocol Endpoint: Sendable {
    /// The server's address, with scheme and host: `"https://api.example.com/v1"`.
    var baseURL: String { get }
    /// The path below ``baseURL``: `"movie/550"`. It may carry a query (`"search?lang=en"`), which is kept.
    var path: String { get }
    /// The HTTP method; `GET` unless you say otherwise.
    var method: HTTPMethod { get }
    /// The parameters or body; none unless you say otherwise.
    var task: HTTPTask { get }
    /// Headers for this endpoint; they override the pool's default headers of the same name.
    var headers: [String: String] { get }
    /// Seconds to wait for the server to start or continue answering; `nil` uses the pool's setting.
    /// Zero, negative, NaN or infinite: every send fails with ``NetworkError/invalidEndpoint(url:reason:)``.
    var timeout: TimeInterval? { get }
    /// A canned response body for stubs and offline mode; see ``StubTransport/sampleData(statusCode:delay:)``.
    var sampleData: Data? { get }
    /// Seconds the whole task may take, retries and waits included; `nil` uses the pool's setting.
    /// Zero, negative, NaN or infinite: every send fails with ``NetworkError/invalidEndpoint(url:reason:)``.
    var resourceTimeout: TimeInterval? { get }
    /// Interceptors for this endpoint only; they adapt after the pool's and decide on retries before them.
    var interceptors: [any RequestInterceptor] { get }
    /// Which redirects this endpoint's requests follow; `nil` uses the pool's ``TaskPool/Configuration/redirectPolicy``.
    var redirectPolicy: RedirectPolicy? { get }
    /// The most body bytes a response to this endpoint may have; `nil` uses the pool's
    /// ``TaskPool/Configuration/maximumResponseBytes``.
    var maximumResponseBytes: Int? { get }
    /// How this endpoint's server states its own code, message and success in a body; `nil` uses the
    /// pool's ``TaskPool/Configuration/statusReader``. A service sets its server's conventions here.
    var statusReader: (any ServerStatusReader)? { get }
    /// Whether credentials are applied and renewed for this endpoint; `false` for calls such as login. Default `true`.
    var requiresAuthentication: Bool { get }
    /// The service its calls belong to, shown in the pool's task table; by default the endpoint type's name.
    var service: String { get }
    /// How this endpoint's requests use the pool's cache; `nil` uses the pool's
    /// ``TaskPool/Configuration/cachePolicy``. One call can say otherwise with ``caching(_:)``.
    var cachePolicy: CachePolicy? { get }
    /// How soon this endpoint's tasks start when the pool's limits make tasks wait; ``RequestPriority/normal``
    /// unless you say otherwise. One call can say otherwise with ``prioritized(_:)``.
    var priority: RequestPriority { get }
    /// Whether its sends are durable writes, kept in the pool's ``TaskPool/Configuration/durableStore`` and
    /// sent again after a restart until the server has them; `nil` (the default) for none. One call can say
    /// so with ``durable(for:)``.
    var durability: Durability? { get }
}

extension Endpoint {
    /// `GET`.
    public var method: HTTPMethod { .get }
    /// ``HTTPTask/plain``.
    public var task: HTTPTask { .plain }
    /// No headers.
    public var headers: [String: String] { [:] }
    /// The pool's timeout.
    public var timeout: TimeInterval? { nil }
    /// No sample data.
    public var sampleData: Data? { nil }
    /// The pool's deadline.
    public var resourceTimeout: TimeInterval? { nil }
    /// None.
    public var interceptors: [any RequestInterceptor] { [] }
    /// The pool's redirect policy.
    public var redirectPolicy: RedirectPolicy? { nil }
    /// The pool's limit.
    public var maximumResponseBytes: Int? { nil }
    /// The pool's status reader.
    public var statusReader: (any ServerStatusReader)? { nil }
    /// `true`.
    public var requiresAuthentication: Bool { true }
    /// The endpoint type's name, e.g. `"MovieEndpoint"`.
    public var service: String { TypeName.of(Self.self) }
    /// The pool's cache policy.
    public var cachePolicy: CachePolicy? { nil }
    /// ``RequestPriority/normal``.
    public var priority: RequestPriority { .normal }
    /// Not durable.
    public var durability: Durability? { nil }
}
