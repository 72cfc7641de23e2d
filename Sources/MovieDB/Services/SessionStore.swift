import Foundation

/// The session a TMDB client acts in: a logged-in user's, or a guest's.
public enum TMDBSession: Codable, Hashable, Sendable {
    /// A user's session id.
    case user(sessionID: String)
    /// A guest session id and when it expires.
    case guest(guestSessionID: String, expiresAt: Date?)
}

/// Keeps the current session; inject one that persists (keychain, file) in an app.
public protocol SessionStore: Sendable {
    /// The current session, if any.
    var session: TMDBSession? { get }
    /// Replaces the current session.
    func save(_ session: TMDBSession)
    /// Forgets the current session.
    func clear()
}

/// A session store in memory: the default, and what tests use.
public final class InMemorySessionStore: SessionStore, @unchecked Sendable {
    // @unchecked Sendable: `stored` is only read and written under `lock`.
    private let lock = NSLock()
    private var stored: TMDBSession?

    /// Creates a store, optionally holding a session already.
    public init(session: TMDBSession? = nil) { stored = session }

    /// The current session, if any.
    public var session: TMDBSession? { lock.withLock { stored } }

    /// Replaces the current session.
    public func save(_ session: TMDBSession) { lock.withLock { stored = session } }

    /// Forgets the current session.
    public func clear() { lock.withLock { stored = nil } }
}
