import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which redirects a task follows: set per pool (``TaskPool/Configuration/redirectPolicy``), per
/// endpoint (``Endpoint/redirectPolicy``), the endpoint's winning.
///
/// Whatever the policy, a followed redirect is safe:
/// - to another origin (scheme, host or port), the request loses its credentials: `Authorization`,
///   `Proxy-Authorization`, `Cookie` and every header ``Redactor`` counts as sensitive (`X-Api-Key`,
///   `X-Auth-Token`…), as browsers, curl and OkHttp do;
/// - 307 and 308 keep the method and the body (RFC 9110 §15.4.8, §15.4.9); 301 and 302 turn a
///   `POST` into a `GET` without body, as browsers do, and 303 turns every method but `HEAD` into a
///   `GET` without body.
///
/// Each hop is a ``TaskEvent/Kind/redirected`` event, and the task's row counts them (``TaskSnapshot/redirects``).
/// A redirect that is not followed ends the task with the 3xx response itself
/// (``NetworkError/httpStatus(_:)`` unless ``Validation`` accepts it).
public struct RedirectPolicy: Hashable, Sendable, CustomStringConvertible {
    private enum Rule: Hashable, Sendable {
        case follow, sameOrigin, never
    }

    private let rule: Rule
    /// The most redirects followed in one attempt; the next one is not followed.
    public let maximumHops: Int

    /// Follows redirects to any origin, up to `maximumHops` (credentials stay behind when the origin changes).
    public static func follow(maximumHops: Int = 10) -> RedirectPolicy {
        RedirectPolicy(rule: .follow, maximumHops: maximumHops)
    }

    /// Follows every redirect, up to 10 hops; the default.
    public static let follow = RedirectPolicy.follow()

    /// Follows redirects only within the request's origin (same scheme, host and port), up to 10 hops.
    public static let sameOrigin = RedirectPolicy(rule: .sameOrigin, maximumHops: 10)

    /// Follows no redirect: the task ends with the 3xx response.
    public static let never = RedirectPolicy(rule: .never, maximumHops: 0)

    /// `"follow"`, `"same origin"` or `"never"`.
    public var description: String {
        switch rule {
        case .follow: maximumHops == 10 ? "follow" : "follow (at most \(maximumHops) hops)"
        case .sameOrigin: "same origin"
        case .never: "never"
        }
    }

    /// Whether to follow hop number `hop` (from 1) from `from` to `to`.
    func allows(hop: Int, from: URL?, to: URL?) -> Bool {
        guard hop <= maximumHops else { return false }
        switch rule {
        case .follow: return true
        case .sameOrigin:
            guard let origin = URLParts.origin(of: from) else { return false }
            return origin == URLParts.origin(of: to)
        case .never: return false
        }
    }

    /// The request to send next when an answer with `status` and `location` (resolved against `request`'s
    /// URL) is a redirect this policy follows as hop `hop` (from 1); `nil` when the answer is the answer.
    func next(after request: URLRequest, status: Int, location: String?, hop: Int) -> URLRequest? {
        guard Self.isRedirect(status), let location,
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL
        else { return nil }
        return self.request(forHop: hop, after: request, statusCode: status, to: target)
    }

    /// Whether `status` redirects: 301, 302, 303, 307 or 308.
    static func isRedirect(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    /// For a transport that follows redirects itself: the request to send for redirect number `hop`
    /// (from 1) of `previous`, answered with `statusCode` and a `Location` that resolves to `target`, or
    /// `nil` when this policy does not follow it (the answer is then the 3xx itself).
    ///
    /// The method and body change as the status says, and credentials stay behind when the origin
    /// changes (see ``RedirectPolicy``). When the method is kept (307, 308) the body is to be sent
    /// again: a transport that cannot send its body a second time (a stream) does not follow.
    /// Report each hop it follows with ``TransportEvents/redirected(statusCode:to:)``.
    /// ```swift
    /// if let next = events.context.redirectPolicy.request(forHop: hops + 1, after: request, statusCode: 302, to: location) {
    ///     events.redirected(statusCode: 302, to: next.url)
    /// }
    /// ```
    public func request(forHop hop: Int, after previous: URLRequest, statusCode: Int, to target: URL?) -> URLRequest? {
        guard let target, allows(hop: hop, from: previous.url, to: target) else { return nil }
        return Self.nextRequest(after: previous, statusCode: statusCode, to: target)
    }

    /// The request to send for a redirect with `statusCode` from `previous` to `url` (a platform's own next
    /// request is not trusted with method, body or headers): method and body by the status, credentials
    /// dropped when the origin changes.
    static func nextRequest(after previous: URLRequest, statusCode: Int, to url: URL) -> URLRequest {
        var next = previous
        next.url = url
        let method = (previous.httpMethod ?? "GET").uppercased()
        switch statusCode {
        case 307, 308:
            break  // method and body as they were
        case 303 where method != "HEAD", 301 where method == "POST", 302 where method == "POST":
            next.httpMethod = "GET"
            next.httpBody = nil
            for name in ["Content-Type", "Content-Length", "Content-Encoding"] {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        default:
            break
        }
        let from = URLParts.origin(of: previous.url)
        if from == nil || from != URLParts.origin(of: next.url) {
            for name in (next.allHTTPHeaderFields ?? [:]).keys where Redactor.default.isSensitive(name) {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return next
    }
}
