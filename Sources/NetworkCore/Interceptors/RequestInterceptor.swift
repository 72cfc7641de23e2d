import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Adapts requests before they are sent and decides, after a failure, whether to send again.
///
/// Interceptors run in a fixed, documented order:
/// - **adapt**, before every attempt, on the request as the endpoint built it: the pool's
///   interceptors in order, then the endpoint's. Each sees the previous one's output.
///   Throwing ends the task with that error (a ``NetworkError``, or `transport` for others).
/// - **retry**, after every failed attempt except cancellation and deadline expiry: the
///   endpoint's interceptors in order, then the pool's. The first answer other than
///   ``RetryDecision/doNotRetry`` wins.
/// - **isCurrent**, right before an adapted request is handed to the transport: an interceptor that
///   says the request is no longer current (a credential it applied has been replaced since) has it
///   adapted again, so that no request goes out with what its adaptation no longer stands for.
///
/// ```swift
/// struct Signer: RequestInterceptor {
///     func adapt(_ request: URLRequest, context: AttemptContext) async throws -> URLRequest {
///         var signed = request
///         signed.setValue(signature(of: request), forHTTPHeaderField: "X-Signature")
///         return signed
///     }
/// }
/// let pool = TaskPool(configuration: .init(interceptors: [Signer(), RetryPolicy()]))
/// ```
public protocol RequestInterceptor: Sendable {
    /// The request to send for this attempt. The default returns it unchanged.
    func adapt(_ request: URLRequest, context: AttemptContext) async throws -> URLRequest

    /// What to do after `request` failed with `failure`. The default is ``RetryDecision/doNotRetry``.
    func retry(_ request: URLRequest, failing failure: NetworkError, context: AttemptContext) async -> RetryDecision

    /// Whether `request`, as adapted for this attempt, may still be sent now. The pool asks every
    /// interceptor right before it hands the request to the transport, on that thread, so the answer
    /// must come at once; any `false` has the request adapted again (up to 16 times an attempt: the
    /// 16th adaptation is sent whatever the answer, so an interceptor that always says `false` cannot
    /// hold a task forever). The default is `true`.
    /// ``AuthenticationInterceptor`` answers `false` while a renewal runs or once the credential on the
    /// request has been replaced.
    func isCurrent(_ request: URLRequest, context: AttemptContext) -> Bool
}

extension RequestInterceptor {
    /// Returns the request unchanged.
    public func adapt(_ request: URLRequest, context: AttemptContext) async throws -> URLRequest { request }

    /// `true`: an adapted request stays current.
    public func isCurrent(_ request: URLRequest, context: AttemptContext) -> Bool { true }

    /// Does not retry.
    public func retry(
        _ request: URLRequest, failing failure: NetworkError, context: AttemptContext
    ) async
        -> RetryDecision
    { .doNotRetry }
}

/// What an interceptor decides after a failed attempt.
public enum RetryDecision: Sendable {
    /// Send again after this many seconds (0 for at once), under the same task id.
    case retry(after: TimeInterval)
    /// Let the next interceptor decide; if none retries, the task fails with its error.
    case doNotRetry
    /// Fail now, with this error instead of the attempt's.
    case fail(NetworkError)
}

/// What an interceptor knows about the attempt at hand.
public struct AttemptContext: Sendable {
    /// The task's id.
    public let taskID: String
    /// The attempt, from 1.
    public let attempt: Int
    /// The request method.
    public let method: HTTPMethod
    /// Whether the endpoint wants credentials; `false` for e.g. login calls. See ``Endpoint/requiresAuthentication``.
    public let requiresAuthentication: Bool
    /// Seconds since the task started.
    public let elapsed: TimeInterval
    /// Seconds left before the task's deadline, or `nil` when it has none.
    public let remaining: TimeInterval?
    /// How many times this attempt's request has been adapted, from 1. When an interceptor says the adapted
    /// request is no longer current (``RequestInterceptor/isCurrent(_:context:)``: a credential was renewed
    /// meanwhile), every interceptor adapts the attempt's request again, with this one more; that request
    /// is sent instead.
    public var adaptation = 1
    private let onWaitingForCredential: @Sendable () -> Void
    private let onCredentialRefreshed: @Sendable () -> Void

    /// Creates a context; the pool does this for every attempt.
    public init(
        taskID: String, attempt: Int, method: HTTPMethod, requiresAuthentication: Bool = true,
        elapsed: TimeInterval = 0,
        remaining: TimeInterval? = nil, onWaitingForCredential: @escaping @Sendable () -> Void = {},
        onCredentialRefreshed: @escaping @Sendable () -> Void = {}
    ) {
        self.onCredentialRefreshed = onCredentialRefreshed
        self.taskID = taskID
        self.attempt = attempt
        self.method = method
        self.requiresAuthentication = requiresAuthentication
        self.elapsed = elapsed
        self.remaining = remaining
        self.onWaitingForCredential = onWaitingForCredential
    }

    /// Tells the pool the attempt is waiting for a credential, so the task table says so.
    public func markWaitingForCredential() { onWaitingForCredential() }

    /// Tells the pool this attempt renewed the credential, so the log says so.
    public func markCredentialRefreshed() { onCredentialRefreshed() }
}
