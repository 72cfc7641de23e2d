import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A renewal the test holds: it says when it has begun, and ends when the test lets it.
final class HeldRenewal: Sendable {
    let began = Latch()
    let finish = Latch()
    let token: String

    init(token: String = "token-1") { self.token = token }

    func renew() async -> String {
        began.open()
        await finish.wait()
        return token
    }
}

/// A transport that notes, as each request is handed to it, its path, its token and whether the renewal had
/// begun; it answers the old token with 401 and any other with 200.
final class HandOffLog: Transport, @unchecked Sendable {
    // @unchecked Sendable: `entries` is locked.
    let renewal: HeldRenewal
    private let entries = Locked<[(path: String, token: String, afterRenewalBegan: Bool)]>([])

    init(renewal: HeldRenewal) { self.renewal = renewal }

    var handedOff: [(path: String, token: String, afterRenewalBegan: Bool)] { entries.withLock { $0 } }

    func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
        let token = String(request.value(forHTTPHeaderField: "Authorization")?.dropFirst("Bearer ".count) ?? "")
        entries.withLock { $0.append((request.url?.path ?? "", token, renewal.began.isOpen)) }
        return AsyncTransfer(reportingTo: events) { events in
            let status = token == "token-0" ? 401 : 200
            let head = HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: nil, headerFields: nil)!
            events.receive(head: head)
        }
    }
}

/// Holds the first adaptation of `/held` after the credential is applied, until the test lets it go.
struct HoldAfterCredential: RequestInterceptor {
    let arrived = Latch()
    let release = Latch()

    func adapt(_ request: URLRequest, context: AttemptContext) async throws -> URLRequest {
        guard request.url?.path == "/held", !release.isOpen else { return request }
        arrived.open()
        await release.wait()
        return request
    }
}

@Suite("Credentials: no request goes out with a credential once its renewal has begun")
struct CredentialGateTests {
    static func rejection(_ url: URL) -> NetworkError {
        .httpStatus(
            Response(
                request: URLRequest(url: url),
                httpResponse: HTTPURLResponse(url: url, statusCode: 401, httpVersion: nil, headerFields: nil)!,
                body: Data(), duration: 0))
    }

    @Test("a request adapted before a renewal began is not current once it has, nor after it; one adapted after it is")
    func interceptorGate() async throws {
        let renewal = HeldRenewal()
        let interceptor = AuthenticationInterceptor(
            authenticator: TokenAuthenticator(renew: { _ in await renewal.renew() }), credential: "token-0")
        let context = AttemptContext(taskID: "t", attempt: 1, method: .get)
        let url = URL(string: "https://api.example.com/a")!
        let adapted = try await interceptor.adapt(URLRequest(url: url), context: context)
        #expect(adapted.value(forHTTPHeaderField: "Authorization") == "Bearer token-0")
        #expect(interceptor.isCurrent(adapted, context: context))
        // A 401 starts the renewal, which the test holds.
        let decision = Task { await interceptor.retry(adapted, failing: Self.rejection(url), context: context) }
        await renewal.began.wait()
        #expect(!interceptor.isCurrent(adapted, context: context), "the renewal has begun")
        renewal.finish.open()
        guard case .retry(let delay) = await decision.value else {
            Issue.record("the rejected request is not sent again")
            return
        }
        #expect(delay == 0)
        #expect(!interceptor.isCurrent(adapted, context: context), "its credential was replaced")
        let again = try await interceptor.adapt(URLRequest(url: url), context: context)
        #expect(again.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
        #expect(interceptor.isCurrent(again, context: context))
        // A call that needs no credential is always current.
        let login = AttemptContext(taskID: "login", attempt: 1, method: .post, requiresAuthentication: false)
        #expect(interceptor.isCurrent(adapted, context: login))
    }

    @Test("a request adapted with the old token just before the renewal began is adapted again, sent with the new one")
    func poolGate() async throws {
        let renewal = HeldRenewal()
        let transport = HandOffLog(renewal: renewal)
        let hold = HoldAfterCredential()
        let interceptor = AuthenticationInterceptor(
            authenticator: TokenAuthenticator(renew: { _ in await renewal.renew() }), credential: "token-0")
        let pool = TaskPool(configuration: .init(transport: transport, interceptors: [interceptor, hold]))
        // `held` is adapted with token-0, then held before it is handed to the transport.
        let held = Task { try await pool.send(TestEndpoint(baseURL: "https://api.example.com", path: "held")) }
        await hold.arrived.wait()
        // `trigger` goes out with token-0, is rejected, and begins the renewal, which the test holds.
        let trigger = Task { try await pool.send(TestEndpoint(baseURL: "https://api.example.com", path: "trigger")) }
        await renewal.began.wait()
        // Now `held` goes on: its token-0 is no longer current, so it is adapted again (and waits for the renewal).
        hold.release.open()
        renewal.finish.open()
        #expect(try await held.value.statusCode == 200)
        #expect(try await trigger.value.statusCode == 200)
        let handedOff = transport.handedOff
        #expect(handedOff.filter { $0.token == "token-0" && $0.afterRenewalBegan }.isEmpty, "\(handedOff)")
        #expect(handedOff.filter { $0.path == "/held" }.map(\.token) == ["token-1"])
        #expect(handedOff.filter { $0.path == "/trigger" }.map(\.token) == ["token-0", "token-1"])
        #expect(await interceptor.refreshCount == 1)
    }
}
