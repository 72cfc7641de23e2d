import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Applies a credential to every request and renews it when it is rejected or expired: once,
/// however many requests need it at the same time.
///
/// - Requests sent while a renewal runs wait for it instead of going out with the old credential; so
///   does a request adapted with the old credential just before the renewal began, but not yet handed
///   to the transport (see ``isCurrent(_:context:)``): no request goes out with a credential once its
///   renewal has begun.
/// - When a renewal succeeds, every request that waited or was rejected is sent again, under
///   its own task id, with the new credential.
/// - When it fails, the credential is cleared and every waiting request fails with
///   ``NetworkError/authenticationFailed(_:)`` carrying the error; nothing loops.
/// - At most ``maximumRefreshes`` renewals run within ``refreshWindow`` seconds: a server that
///   rejects every new credential gets ``AuthenticationFailure/tooManyRefreshes(count:within:)``,
///   not a storm of renewals.
/// - A credential the authenticator reports as expired is renewed before it is used.
///
/// Endpoints whose ``Endpoint/requiresAuthentication`` is `false` (a login call) pass untouched.
/// ```swift
/// let auth = AuthenticationInterceptor(authenticator: BearerAuthenticator(tokens: tokens), credential: saved)
/// let pool = TaskPool(configuration: .init(interceptors: [auth, RetryPolicy()]))
/// ```
public actor AuthenticationInterceptor<A: Authenticator>: RequestInterceptor {
    /// The authenticator that applies and renews credentials.
    public let authenticator: A
    /// How many renewals may run within ``refreshWindow``.
    public let maximumRefreshes: Int
    /// The window, in seconds, for ``maximumRefreshes``.
    public let refreshWindow: TimeInterval

    private var credential: A.Credential? {
        didSet { gate.withLock { $0.credential = credential } }
    }
    private var lastFailure: AuthenticationFailure?
    private var refreshTask: Task<A.Credential, any Error>?
    /// The credential in use and whether a renewal runs, as ``isCurrent(_:context:)`` reads them without
    /// waiting for the actor: changed with them, in the same step on the actor.
    private nonisolated let gate: Locked<(credential: A.Credential?, renewing: Bool)>
    private var recentRefreshes: [UInt64] = []
    private var refreshes = 0

    /// Creates the interceptor with the credential to start from (`nil` if there is none yet).
    public init(
        authenticator: A, credential: A.Credential?, maximumRefreshes: Int = 3, refreshWindow: TimeInterval = 30
    ) {
        self.authenticator = authenticator
        gate = Locked((credential, false))
        self.credential = credential
        self.maximumRefreshes = maximumRefreshes
        self.refreshWindow = refreshWindow
    }

    /// The credential in use, or `nil` after a failed renewal.
    public var currentCredential: A.Credential? { credential }

    /// How many renewals have been started.
    public var refreshCount: Int { refreshes }

    /// Replaces the credential, e.g. after the user logs in again.
    public func setCredential(_ credential: A.Credential?) {
        self.credential = credential
        lastFailure = nil
    }

    /// Puts the current credential on the request; waits for a renewal in progress, and renews
    /// an expired credential first.
    public func adapt(_ request: URLRequest, context: AttemptContext) async throws -> URLRequest {
        guard context.requiresAuthentication else { return request }
        let credential: A.Credential
        if let refreshTask {
            context.markWaitingForCredential()
            credential = try await result(of: refreshTask).get()
        } else if let current = self.credential {
            if authenticator.isExpired(current) {
                context.markWaitingForCredential()
                credential = try await refresh(for: context).get()
            } else {
                credential = current
            }
        } else {
            throw NetworkError.authenticationFailed(lastFailure ?? .noCredential)
        }
        var adapted = request
        authenticator.apply(credential, to: &adapted)
        return adapted
    }

    /// Whether `request` carries the credential in use, with no renewal running: `false` has the pool
    /// adapt it again (waiting for the renewal), so that a request adapted just before a renewal began
    /// does not go out with the credential it replaces. Endpoints that need no authentication are
    /// always current.
    public nonisolated func isCurrent(_ request: URLRequest, context: AttemptContext) -> Bool {
        guard context.requiresAuthentication else { return true }
        let (credential, renewing) = gate.withLock { ($0.credential, $0.renewing) }
        guard !renewing else { return false }
        guard let credential else { return true }
        return authenticator.isRequest(request, authenticatedWith: credential)
    }

    /// After a rejection: sends again at once if the credential was renewed since the request
    /// went out; otherwise renews it (once for everyone) and sends again.
    public func retry(
        _ request: URLRequest, failing failure: NetworkError, context: AttemptContext
    ) async
        -> RetryDecision
    {
        guard context.requiresAuthentication, authenticator.isRejection(failure, of: request) else {
            return .doNotRetry
        }
        if let refreshTask {
            context.markWaitingForCredential()
            return decision(await result(of: refreshTask))
        }
        guard let current = credential else {
            return .fail(.authenticationFailed(lastFailure ?? .noCredential))
        }
        if !authenticator.isRequest(request, authenticatedWith: current) {
            return .retry(after: 0)
        }
        context.markWaitingForCredential()
        return decision(await refresh(for: context))
    }

    private func decision(_ result: Result<A.Credential, NetworkError>) -> RetryDecision {
        switch result {
        case .success: .retry(after: 0)
        case .failure(let error): .fail(error)
        }
    }

    /// Starts a renewal unless one runs, and waits for it.
    private func refresh(for context: AttemptContext) async -> Result<A.Credential, NetworkError> {
        if let refreshTask { return await result(of: refreshTask) }
        let now = MonotonicClock.now()
        let window = MonotonicClock.nanoseconds(refreshWindow)
        recentRefreshes.removeAll { now &- $0 > window }
        guard recentRefreshes.count < maximumRefreshes else {
            credential = nil
            let failure = AuthenticationFailure.tooManyRefreshes(count: recentRefreshes.count, within: refreshWindow)
            lastFailure = failure
            return .failure(.authenticationFailed(failure))
        }
        recentRefreshes.append(now)
        refreshes += 1
        let authenticator = self.authenticator
        let stale = credential
        // No request goes out with the credential from here on (see `isCurrent`): marked before the
        // renewal can begin.
        gate.withLock { $0.renewing = true }
        let task = Task { try await authenticator.refresh(stale) }
        refreshTask = task
        let outcome = await result(of: task)
        refreshTask = nil
        switch outcome {
        case .success(let renewed):
            credential = renewed
            lastFailure = nil
            context.markCredentialRefreshed()
        case .failure(let error):
            credential = nil
            if case .authenticationFailed(let failure) = error { lastFailure = failure }
        }
        // The new credential is in place before a request can be found current again.
        gate.withLock { $0.renewing = false }
        return outcome
    }

    private func result(of task: Task<A.Credential, any Error>) async -> Result<A.Credential, NetworkError> {
        do {
            return .success(try await task.value)
        } catch {
            return .failure(.authenticationFailed(.refreshFailed(error)))
        }
    }
}
