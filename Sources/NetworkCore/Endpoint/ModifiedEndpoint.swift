import Foundation

/// An endpoint sent to another base URL, or with more query items or headers, read with another
/// status reader, or cached by another policy, than it declares.
///
/// Services use it to apply what belongs to their configuration rather than to each call:
/// the environment's base URL and the credential.
/// ```swift
/// let endpoint = Movies.nowPlaying(page: 1)
///     .with(baseURL: "http://127.0.0.1:8080/3")
///     .addingQuery(["api_key": key])
///     .addingHeaders(["Accept-Language": "de"])
/// ```
/// The extra query items are written after the endpoint's own path query, before its task's
/// parameters; extra headers override the endpoint's headers of the same name.
public struct ModifiedEndpoint<Base: Endpoint>: Endpoint {
    /// The endpoint being modified.
    public let base: Base
    private var baseURLOverride: String?
    private var extraQuery: [String: String] = [:]
    private var extraHeaders: [String: String] = [:]
    private var statusReaderOverride: (any ServerStatusReader)?
    private var cachePolicyOverride: CachePolicy?
    private var priorityOverride: RequestPriority?
    private var durabilityOverride: Durability?

    init(base: Base) { self.base = base }

    /// The overriding base URL, or the base endpoint's.
    public var baseURL: String { baseURLOverride ?? base.baseURL }

    /// The base endpoint's path with the extra query items appended, percent-encoded and sorted.
    public var path: String {
        guard !extraQuery.isEmpty else { return base.path }
        let query = extraQuery.keys.sorted().map { key in
            "\(PercentEncoding.component(key))=\(PercentEncoding.component(extraQuery[key]!))"
        }.joined(separator: "&")
        return base.path + (base.path.contains("?") ? "&" : "?") + query
    }

    /// The base endpoint's method.
    public var method: HTTPMethod { base.method }
    /// The base endpoint's task.
    public var task: HTTPTask { base.task }
    /// The base endpoint's headers, with the extra headers winning.
    public var headers: [String: String] { base.headers.merging(extraHeaders) { _, extra in extra } }
    /// The base endpoint's timeout.
    public var timeout: TimeInterval? { base.timeout }
    /// The base endpoint's sample data.
    public var sampleData: Data? { base.sampleData }
    /// The base endpoint's deadline.
    public var resourceTimeout: TimeInterval? { base.resourceTimeout }
    /// The base endpoint's interceptors.
    public var interceptors: [any RequestInterceptor] { base.interceptors }
    /// The base endpoint's redirect policy.
    public var redirectPolicy: RedirectPolicy? { base.redirectPolicy }
    /// The base endpoint's response size limit.
    public var maximumResponseBytes: Int? { base.maximumResponseBytes }
    /// The overriding status reader, or the base endpoint's.
    public var statusReader: (any ServerStatusReader)? { statusReaderOverride ?? base.statusReader }
    /// Whether the base endpoint requires authentication.
    public var requiresAuthentication: Bool { base.requiresAuthentication }
    /// The base endpoint's service.
    public var service: String { base.service }
    /// The overriding cache policy, or the base endpoint's.
    public var cachePolicy: CachePolicy? { cachePolicyOverride ?? base.cachePolicy }
    /// The overriding priority, or the base endpoint's.
    public var priority: RequestPriority { priorityOverride ?? base.priority }
    /// The overriding durability, or the base endpoint's.
    public var durability: Durability? { durabilityOverride ?? base.durability }

    /// The same endpoint sent to another base URL.
    public func with(baseURL: String) -> ModifiedEndpoint<Base> {
        var copy = self
        copy.baseURLOverride = baseURL
        return copy
    }

    /// The same endpoint with more query items; a name given twice keeps the last value.
    public func addingQuery(_ items: [String: String]) -> ModifiedEndpoint<Base> {
        var copy = self
        copy.extraQuery.merge(items) { _, new in new }
        return copy
    }

    /// The same endpoint with more headers; they override headers of the same name.
    public func addingHeaders(_ headers: [String: String]) -> ModifiedEndpoint<Base> {
        var copy = self
        copy.extraHeaders.merge(headers) { _, new in new }
        return copy
    }

    /// The same endpoint, its server's code, message and success read by `reader`.
    public func reading(status reader: any ServerStatusReader) -> ModifiedEndpoint<Base> {
        var copy = self
        copy.statusReaderOverride = reader
        return copy
    }

    /// The same endpoint, using the pool's cache as `policy` says.
    public func caching(_ policy: CachePolicy) -> ModifiedEndpoint<Base> {
        var copy = self
        copy.cachePolicyOverride = policy
        return copy
    }

    /// The same endpoint, started with `priority` when tasks wait.
    public func prioritized(_ priority: RequestPriority) -> ModifiedEndpoint<Base> {
        var copy = self
        copy.priorityOverride = priority
        return copy
    }

    /// The same endpoint, its sends durable writes kept for `expiry` seconds.
    public func durable(for expiry: TimeInterval = 86_400) -> ModifiedEndpoint<Base> {
        var copy = self
        copy.durabilityOverride = Durability(expiry: expiry)
        return copy
    }
}

extension Endpoint {
    /// This endpoint sent to another base URL, e.g. a staging server or a local one.
    public func with(baseURL: String) -> ModifiedEndpoint<Self> { ModifiedEndpoint(base: self).with(baseURL: baseURL) }

    /// This endpoint with more query items, e.g. an API key.
    public func addingQuery(_ items: [String: String]) -> ModifiedEndpoint<Self> {
        ModifiedEndpoint(base: self).addingQuery(items)
    }

    /// This endpoint with more headers, e.g. `Authorization`.
    public func addingHeaders(_ headers: [String: String]) -> ModifiedEndpoint<Self> {
        ModifiedEndpoint(base: self).addingHeaders(headers)
    }

    /// This endpoint with its server's code, message and success read by `reader`: a service's conventions.
    public func reading(status reader: any ServerStatusReader) -> ModifiedEndpoint<Self> {
        ModifiedEndpoint(base: self).reading(status: reader)
    }

    /// This endpoint using the pool's cache as `policy` says, for one call:
    /// `pool.send(Movies.nowPlaying(page: 1).caching(.networkOnly))`.
    public func caching(_ policy: CachePolicy) -> ModifiedEndpoint<Self> {
        ModifiedEndpoint(base: self).caching(policy)
    }

    /// This endpoint started with `priority` when tasks wait, for one call:
    /// `pool.send(Movies.details(id: 550).prioritized(.high))`.
    public func prioritized(_ priority: RequestPriority) -> ModifiedEndpoint<Self> {
        ModifiedEndpoint(base: self).prioritized(priority)
    }

    /// This endpoint's send as a durable write, for one call: written to the pool's
    /// ``TaskPool/Configuration/durableStore`` before it is attempted, sent with an idempotency key, and sent
    /// again by the next pool opened on the store (after a crash or a restart) until the server has answered
    /// it or `expiry` seconds have passed: `pool.send(Movies.rate(id: 550, value: 8).durable())`.
    public func durable(for expiry: TimeInterval = 86_400) -> ModifiedEndpoint<Self> {
        ModifiedEndpoint(base: self).durable(for: expiry)
    }
}
