import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Retries transient failures with exponential backoff and full jitter, honouring `Retry-After`.
///
/// By default it retries, up to 3 attempts in all, only idempotent methods (`GET`, `HEAD`,
/// `PUT`, `DELETE`, `OPTIONS`), only on 408, 429, 500, 502, 503 and 504 and on transient
/// network errors (timed out, connection lost, cannot connect, not connected to the internet). It
/// never retries a cancelled task, nor one whose deadline has passed. In a pool with a connectivity
/// monitor (``TaskPool/Configuration/connectivity``), a retry decided while the network is gone waits
/// for it instead of the backoff.
///
/// The wait before attempt *n + 1* is a random time between 0 and
/// `min(maximumDelay, baseDelay × 2ⁿ⁻¹)` ("full jitter"), unless a 429 or 503 carries
/// `Retry-After` (seconds or an HTTP date): then exactly that, if it is at most
/// ``maximumRetryAfter``; a longer one is not waited for. A connection lost after the response's
/// head arrived (mid-body) is `networkConnectionLost`, and retried as such. Any wait, however long
/// a setting or a server asks for, is at most 10⁹ s, and cancelling the task ends it.
/// ```swift
/// let pool = TaskPool(configuration: .init(interceptors: [RetryPolicy(maximumAttempts: 4, baseDelay: 0.2)]))
/// ```
public struct RetryPolicy: RequestInterceptor {
    /// Attempts in all, the first included.
    public var maximumAttempts: Int
    /// The backoff before the second attempt, before jitter.
    public var baseDelay: TimeInterval
    /// The longest backoff, before jitter.
    public var maximumDelay: TimeInterval
    /// The longest `Retry-After` that is waited for; beyond it the task fails.
    public var maximumRetryAfter: TimeInterval
    /// Methods that are retried.
    public var methods: Set<HTTPMethod>
    /// HTTP statuses that are retried.
    public var statusCodes: Set<Int>
    /// `URLError` codes that are retried; a request timeout counts as `.timedOut`.
    public var urlErrorCodes: Set<URLError.Code>
    private let random: @Sendable (ClosedRange<Double>) -> Double

    /// Creates a policy; `random` draws the jitter (replace it to make delays predictable in tests).
    public init(
        maximumAttempts: Int = 3, baseDelay: TimeInterval = 0.5, maximumDelay: TimeInterval = 30,
        maximumRetryAfter: TimeInterval = 60,
        methods: Set<HTTPMethod> = [.get, .head, .put, .delete, .options],
        statusCodes: Set<Int> = [408, 429, 500, 502, 503, 504],
        urlErrorCodes: Set<URLError.Code> = [
            .timedOut, .networkConnectionLost, .cannotConnectToHost, .notConnectedToInternet,
        ],
        random: @escaping @Sendable (ClosedRange<Double>) -> Double = { Double.random(in: $0) }
    ) {
        self.maximumAttempts = maximumAttempts
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.maximumRetryAfter = maximumRetryAfter
        self.methods = methods
        self.statusCodes = statusCodes
        self.urlErrorCodes = urlErrorCodes
        self.random = random
    }

    /// Retries when the method, the failure and the attempt count allow it.
    public func retry(
        _ request: URLRequest, failing failure: NetworkError, context: AttemptContext
    ) async
        -> RetryDecision
    {
        guard context.attempt < maximumAttempts, methods.contains(context.method), isTransient(failure) else {
            return .doNotRetry
        }
        if let response = failure.response, [429, 503].contains(response.statusCode),
            let wait = RetryAfter.seconds(response.header("Retry-After"))
        {
            return wait <= maximumRetryAfter ? .retry(after: wait) : .doNotRetry
        }
        return .retry(after: delay(beforeAttempt: context.attempt + 1))
    }

    /// The jittered backoff before `attempt` (2 or more).
    public func delay(beforeAttempt attempt: Int) -> TimeInterval {
        let exponent = Double(max(0, attempt - 2))
        let backoff = baseDelay * pow(2, exponent)
        guard backoff > 0, maximumDelay > 0 else { return 0 }  // NaN too
        // At most 10⁹ s, so that a huge or infinite setting still makes a range `random` can draw from.
        return random(0...min(maximumDelay, backoff, 1e9))
    }

    private func isTransient(_ failure: NetworkError) -> Bool {
        switch failure {
        case .httpStatus(let response): statusCodes.contains(response.statusCode)
        case .timedOut: urlErrorCodes.contains(.timedOut)
        case .transport: failure.urlError.map { urlErrorCodes.contains($0.code) } ?? false
        default: false
        }
    }
}
