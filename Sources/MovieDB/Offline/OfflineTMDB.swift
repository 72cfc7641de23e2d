import Foundation
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A stand-in for TheMovieDB that answers like the real API, from the bundled fixtures.
///
/// It powers offline mode and tests, in-process through ``transport(delay:)`` or over HTTP
/// behind any small server. It checks what TMDB checks:
/// - a credential is required: any API key or read token, except `invalid` and any starting
///   with `expired` (401, code 7), `read-only` (401, code 3, no permission) and `rate-limited`
///   (429, code 25, `Retry-After: 10`);
/// - `page` must be 1…500 (400, code 22); pages past the last are empty;
/// - movie details, videos and recommendations exist for the movies in the fixtures
///   (Fight Club, 550, in full); other ids are 404, code 34;
/// - images on the image host (`/t/p/{size}/{file}.jpg`) need no credential; each is the bundled
///   poster (``TMDBFixtures/poster``);
/// - login succeeds for ``username`` / ``password`` only (otherwise 401, code 30), and a
///   session is only created from the fixture's request token (otherwise 401, code 17);
/// - a rating (`POST movie/{id}/rating`) needs the fixtures' session or guest session
///   (``guestSessionID``; otherwise 401, code 3) and a value from 0.5 to 10 in steps of 0.5 (otherwise
///   400, codes 18, 19 and 20); it is answered 201, code 1, and kept by nobody.
public struct OfflineTMDB: Sendable {
    /// A key offline mode accepts.
    public static let apiKey = "offline-demo-key"
    /// The user name login accepts.
    public static let username = "demo"
    /// The password login accepts.
    public static let password = "demo"
    /// The guest session a rating may be made in: the one `authentication/guest_session/new` hands out.
    public static var guestSessionID: String {
        object(.guestSession)?["guest_session_id"] as? String ?? ""
    }

    private static let genreNames = [
        12: "Adventure", 14: "Fantasy", 16: "Animation", 18: "Drama", 28: "Action", 35: "Comedy", 53: "Thriller",
        80: "Crime", 878: "Science Fiction", 10749: "Romance", 10751: "Family",
    ]

    /// Creates the stand-in.
    public init() {}

    /// A transport that answers every request from this stand-in after `delay` seconds.
    public func transport(delay: TimeInterval = 0) -> StubTransport {
        StubTransport(delay: delay) { request, _ in respond(to: request) }
    }

    /// How long the stand-in's successful `GET` answers are fresh, in seconds: they carry
    /// `Cache-Control: public, max-age=600` and an `ETag`, and a request whose `If-None-Match` names that
    /// tag gets `304 Not Modified`, as a cached API's answers do.
    public static let maxAge = 600

    /// TMDB's answer to `request`, with the caching headers of ``maxAge``.
    public func respond(to request: URLRequest) -> StubResponse {
        var response = answer(to: request)
        guard request.httpMethod ?? "GET" == "GET", response.statusCode == 200,
            response.headers["Content-Type"]?.hasPrefix("application/json") == true
        else { return response }
        let tag = Self.entityTag(of: response.body)
        response.headers["Cache-Control"] = "public, max-age=\(Self.maxAge)"
        response.headers["ETag"] = tag
        if request.value(forHTTPHeaderField: "If-None-Match") == tag {
            return StubResponse(
                statusCode: 304, headers: ["Cache-Control": "public, max-age=\(Self.maxAge)", "ETag": tag])
        }
        return response
    }

    /// A strong entity tag for `body`: its 64-bit FNV-1a digest, quoted.
    static func entityTag(of body: Data) -> String {
        let digest = body.reduce(UInt64(14_695_981_039_346_656_037)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
        return "\"" + String(digest, radix: 16) + "\""
    }

    /// TMDB's answer to `request`, before caching headers.
    private func answer(to request: URLRequest) -> StubResponse {
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return fixture(.notFound, status: 404)
        }
        // Images (`…/t/p/w500/abc.jpg` on the image host) need no credential: every one is the bundled poster.
        if components.path.contains("/t/p/"), components.path.hasSuffix(".jpg") || components.path.hasSuffix(".png") {
            guard request.httpMethod ?? "GET" == "GET", let image = TMDBFixtures.poster else {
                return fixture(.notFound, status: 404)
            }
            return StubResponse(
                statusCode: 200, headers: ["Content-Type": "image/jpeg", "Content-Length": String(image.count)],
                body: image)
        }
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
        let bearer = request.value(forHTTPHeaderField: "Authorization").flatMap { value in
            value.hasPrefix("Bearer ") ? String(value.dropFirst(7)) : nil
        }
        switch query["api_key"] ?? bearer {
        case nil, "", "invalid": return fixture(.invalidAPIKey, status: 401)
        case let credential? where credential.hasPrefix("expired"): return fixture(.invalidAPIKey, status: 401)
        case "rate-limited": return fixture(.rateLimited, status: 429, headers: ["Retry-After": "10"])
        case "read-only": return fixture(.noPermission, status: 401)
        default: break
        }
        var route = components.path.split(separator: "/").map(String.init)
        if route.first == "3" { route.removeFirst() }
        let method = request.httpMethod ?? "GET"
        let body = Self.jsonBody(of: request)
        switch (method, route) {
        case ("GET", ["movie", "now_playing"]): return list(.nowPlaying, query: query)
        case ("GET", ["movie", "popular"]): return list(.popular, query: query)
        case ("GET", ["movie", "top_rated"]): return list(.topRated, query: query)
        case ("GET", ["movie", "upcoming"]): return list(.upcoming, query: query)
        case ("GET", ["search", "movie"]): return search(query)
        case ("GET", let path) where path.count >= 2 && path[0] == "movie" && Int(path[1]) != nil:
            return movie(id: Int(path[1])!, rest: Array(path.dropFirst(2)), query: query)
        case ("POST", let path) where path.count == 3 && path[0] == "movie" && path[2] == "rating":
            return rate(movie: Int(path[1]) ?? 0, query: query, body: body)
        case ("GET", ["authentication", "token", "new"]): return fixture(.newToken)
        case ("GET", ["authentication", "guest_session", "new"]): return fixture(.guestSession)
        case ("POST", ["authentication", "token", "validate_with_login"]): return validate(body)
        case ("POST", ["authentication", "session", "new"]):
            return body["request_token"] as? String == fixtureToken
                ? fixture(.newSession) : fixture(.sessionDenied, status: 401)
        case ("DELETE", ["authentication", "session"]):
            return body["session_id"] as? String == fixtureSession
                ? fixture(.deleteSession) : fixture(.notFound, status: 404)
        default: return fixture(.notFound, status: 404)
        }
    }

    // MARK: Routes

    private func list(_ name: TMDBFixtures.Name, query: [String: String]) -> StubResponse {
        if let refusal = pageRefusal(in: query) { return refusal }
        let page = Int(query["page"] ?? "1") ?? 1
        guard page > 1, var object = Self.object(name) else { return fixture(name) }
        object["page"] = page
        object["results"] = [Any]()
        return json(object)
    }

    private func search(_ query: [String: String]) -> StubResponse {
        if let refusal = pageRefusal(in: query) { return refusal }
        let page = Int(query["page"] ?? "1") ?? 1
        let text = (query["query"] ?? "").lowercased()
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { return fixture(.validationError, status: 422) }
        let matches =
            text.isEmpty
            ? []
            : Self.knownMovies.filter { movie in
                [movie["title"], movie["original_title"]].contains {
                    ($0 as? String)?.lowercased().contains(text) == true
                }
            }
        return json([
            "page": page, "results": page == 1 ? matches : [], "total_pages": matches.isEmpty ? 0 : 1,
            "total_results": matches.count,
        ])
    }

    private func movie(id: Int, rest: [String], query: [String: String]) -> StubResponse {
        guard let movie = Self.knownMovies.first(where: { $0["id"] as? Int == id }) else {
            return fixture(.notFound, status: 404)
        }
        switch rest {
        case []:
            if id == 550 { return fixture(.movieDetails) }
            var details = movie
            details["genres"] = ((movie["genre_ids"] as? [Int]) ?? []).map {
                ["id": $0, "name": Self.genreNames[$0] ?? "Other"]
            }
            details["genre_ids"] = nil
            return json(details)
        case ["videos"]:
            return id == 550 ? fixture(.videos) : json(["id": id, "results": [Any]()])
        case ["recommendations"]:
            if let refusal = pageRefusal(in: query) { return refusal }
            let page = Int(query["page"] ?? "1") ?? 1
            if id == 550 { return list(.recommendations, query: query) }
            return json(["page": page, "results": [Any](), "total_pages": 0, "total_results": 0])
        default:
            return fixture(.notFound, status: 404)
        }
    }

    private func rate(movie id: Int, query: [String: String], body: [String: Any]) -> StubResponse {
        guard query["session_id"].map({ $0 == fixtureSession }) ?? (query["guest_session_id"] == Self.guestSessionID)
        else { return fixture(.noPermission, status: 401) }
        guard Self.knownMovies.contains(where: { $0["id"] as? Int == id }) else {
            return fixture(.notFound, status: 404)
        }
        let value = body["value"] as? Double ?? 0
        let refusal: (code: Int, message: String)? =
            if value <= 0 {
                (18, "Value too low: Value must be greater than 0.0.")
            } else if value > 10 {
                (19, "Value too high: Value must be less than, or equal to, 10.0.")
            } else if (value * 2).rounded() != value * 2 {
                (20, "Value invalid: Values must be a multiple of 0.50.")
            } else {
                nil
            }
        if let refusal {
            var response = json(["success": false, "status_code": refusal.code, "status_message": refusal.message])
            response.statusCode = 400
            return response
        }
        return fixture(.ratingAdded, status: 201)
    }

    private func validate(_ body: [String: Any]) -> StubResponse {
        guard let username = body["username"] as? String, let password = body["password"] as? String,
            !username.isEmpty, !password.isEmpty
        else { return fixture(.missingLogin, status: 400) }
        guard username == Self.username, password == Self.password, body["request_token"] as? String == fixtureToken
        else { return fixture(.invalidLogin, status: 401) }
        return fixture(.validatedToken)
    }

    // MARK: Helpers

    private var fixtureToken: String? { Self.object(.newToken)?["request_token"] as? String }
    private var fixtureSession: String? { Self.object(.newSession)?["session_id"] as? String }

    /// The page number in the query: 1 when absent, `nil` when TMDB would reject it.
    /// TMDB's answer to a page it does not serve: past 500, its validation error (HTTP 422, an `errors`
    /// array); not a positive number, its `status_code` 22 (HTTP 400); `nil` for a page it serves.
    private func pageRefusal(in query: [String: String]) -> StubResponse? {
        guard let text = query["page"] else { return nil }
        guard let page = Int(text), page >= 1 else { return fixture(.invalidPage, status: 400) }
        guard page <= 500 else {
            var response = json(["errors": ["page must be less than or equal to 500"]])
            response.statusCode = 422
            return response
        }
        return nil
    }

    /// Every movie in the list fixtures, once each, in fixture order.
    private static var knownMovies: [[String: Any]] {
        var seen = Set<Int>()
        let lists: [TMDBFixtures.Name] = [.nowPlaying, .popular, .topRated, .upcoming, .recommendations]
        return lists.flatMap { (object($0)?["results"] as? [[String: Any]]) ?? [] }.filter { movie in
            guard let id = movie["id"] as? Int else { return false }
            return seen.insert(id).inserted
        }
    }

    private static func object(_ name: TMDBFixtures.Name) -> [String: Any]? {
        TMDBFixtures.data(name).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    private static func jsonBody(of request: URLRequest) -> [String: Any] {
        request.httpBody.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
    }

    private func fixture(_ name: TMDBFixtures.Name, status: Int = 200, headers: [String: String] = [:]) -> StubResponse
    {
        StubResponse(
            statusCode: status, headers: headers.merging(Self.jsonHeaders) { mine, _ in mine },
            body: TMDBFixtures.data(name) ?? Data())
    }

    private func json(_ object: [String: Any]) -> StubResponse {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return StubResponse(statusCode: 200, headers: Self.jsonHeaders, body: body)
    }

    private static let jsonHeaders = ["Content-Type": "application/json;charset=utf-8"]
}
