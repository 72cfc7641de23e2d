import Foundation
import NetworkCore
import Testing

@testable import MovieDB

@Suite("AuthService")
struct AuthServiceTests {
    let log = RequestLog()
    let store = InMemorySessionStore()

    var auth: AuthService {
        AuthService(pool: offlinePool(log: log), configuration: offlineConfiguration, store: store)
    }

    @Test("login: new token, validate with login, new session; the session is stored")
    func login() async throws {
        let session = try await auth.login(username: OfflineTMDB.username, password: OfflineTMDB.password)
        #expect(session.sessionID == "79191836ddaa0da3df76a5ffef6f07ad6ab0c641")
        #expect(store.session == .user(sessionID: session.sessionID))
        let requests = log.requests
        #expect(
            requests.map { "\($0.httpMethod!) \($0.url!.path)" } == [
                "GET /3/authentication/token/new", "POST /3/authentication/token/validate_with_login",
                "POST /3/authentication/session/new",
            ])
        #expect(
            requests[1].jsonBody == [
                "username": "demo", "password": "demo", "request_token": "ff5c7eeb5a8870efe3cd7fc5c282cffd26800ecd",
            ])
        #expect(requests[2].jsonBody == ["request_token": "ff5c7eeb5a8870efe3cd7fc5c282cffd26800ecd"])
    }

    @Test("a wrong login is TMDB's code 30, and nothing is stored")
    func wrongLogin() async throws {
        let error = try #require(
            await failure { () async throws(NetworkError) in try await auth.login(username: "demo", password: "wrong") }
        )
        #expect(error.statusCode == 401)
        #expect(error.serverError?.code == 30)
        #expect(store.session == nil)
        #expect(log.requests.count == 2)
    }

    @Test("an empty login is TMDB's code 26")
    func emptyLogin() async throws {
        let error = try #require(
            await failure { () async throws(NetworkError) in try await auth.login(username: "", password: "") })
        #expect(error.serverError?.code == 26)
    }

    @Test("a session from a token that was never validated is denied, code 17")
    func sessionDenied() async throws {
        let pool = offlinePool()
        let error = try #require(
            await failure { () async throws(NetworkError) in
                try await pool.send(offlineConfiguration.prepare(AuthEndpoint.newSession(requestToken: "forged")))
            })
        #expect(error.serverError?.code == 17)
    }

    @Test("a guest session is stored with its expiry")
    func guest() async throws {
        let guest = try await auth.guestSession()
        guard case .guest(let id, let expiry) = store.session else {
            Issue.record("no guest session stored")
            return
        }
        #expect(id == guest.guestSessionID)
        #expect(expiry == guest.expiresAt)
        #expect(expiry != nil)
    }

    @Test("logout deletes the session on TMDB and forgets it")
    func logout() async throws {
        _ = try await auth.login(username: "demo", password: "demo")
        try await auth.logout()
        #expect(store.session == nil)
        let delete = try #require(log.requests.last)
        #expect(delete.httpMethod == "DELETE")
        #expect(delete.url?.path == "/3/authentication/session")
        #expect(delete.jsonBody == ["session_id": "79191836ddaa0da3df76a5ffef6f07ad6ab0c641"])
    }

    @Test("logout of a session TMDB no longer knows still forgets it")
    func logoutUnknown() async throws {
        store.save(.user(sessionID: "expired"))
        try await auth.logout()
        #expect(store.session == nil)
        #expect(log.requests.count == 1)
    }

    @Test("logout keeps the session when the network fails, so it can be retried")
    func logoutOffline() async throws {
        store.save(.user(sessionID: "s1"))
        let auth = AuthService(
            pool: TaskPool(
                configuration: .init(transport: StubTransport.failing(with: URLError(.notConnectedToInternet)))),
            configuration: offlineConfiguration, store: store)
        let error = try #require(await failure { () async throws(NetworkError) in try await auth.logout() })
        #expect(error.urlError?.code == .notConnectedToInternet)
        #expect(store.session == .user(sessionID: "s1"))
    }

    @Test("logout without a user session sends nothing")
    func logoutGuest() async throws {
        store.save(.guest(guestSessionID: "g", expiresAt: nil))
        try await auth.logout()
        #expect(store.session == nil)
        #expect(log.requests.isEmpty)
    }

    @Test("completion variants")
    func completions() async throws {
        let session: Session = try await withCheckedThrowingContinuation { continuation in
            auth.login(username: "demo", password: "demo") { continuation.resume(with: $0) }
        }
        #expect(store.session == .user(sessionID: session.sessionID))
        try await withCheckedThrowingContinuation { continuation in auth.logout { continuation.resume(with: $0) } }
        #expect(store.session == nil)
        let guest: GuestSession = try await withCheckedThrowingContinuation { continuation in
            auth.guestSession { continuation.resume(with: $0) }
        }
        #expect(guest.success)
    }

    @Test("no credential ever appears in an auth task id")
    func taskIDs() {
        let endpoints: [AuthEndpoint] = [
            .newToken, .validateWithLogin(username: "u", password: "hunter2", requestToken: "rt"),
            .newSession(requestToken: "rt"), .deleteSession(sessionID: "sid"), .newGuestSession,
        ]
        for endpoint in endpoints {
            #expect(
                !endpoint.taskID.contains("hunter2") && !endpoint.taskID.contains("rt")
                    && !endpoint.taskID.contains("sid"))
        }
    }
}
