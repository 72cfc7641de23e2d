import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the cache does for one request (RFC 9111): decided when its task is made, from the stored answer,
/// the policy and both sides' directives; then, with the network's answer, what the caller gets and what
/// is stored.
final class CacheTransaction: Sendable {
    /// What the cache does with a request before anything is sent.
    enum Lookup {
        /// Answer with the stored response; `revalidate`: and validate it in the background.
        case answer(CachedResponse, source: Response.Source, age: TimeInterval, revalidate: Bool)
        /// Send the request, the transaction (if any) handling the answer.
        case send(CacheTransaction?)
        /// Nothing stored may answer, and the network may not be asked.
        case notCached
    }

    let store: any CacheStore
    let key: String
    /// The stored answer whose validators the request carries, if any.
    let validating: CachedResponse?
    /// The stored answer that may stand in when the server cannot answer, if any.
    let fallback: CachedResponse?
    /// Whether the answer may be stored (a safe method, no `no-store` in the request).
    let mayStore: Bool
    /// Whether the request is unsafe (`POST`, `PUT`, `DELETE`, `PATCH`…): a success forgets what is
    /// stored for its URL (RFC 9111 §4.4).
    let invalidates: Bool

    private init(
        store: any CacheStore, key: String, validating: CachedResponse?, fallback: CachedResponse?, mayStore: Bool,
        invalidates: Bool
    ) {
        self.store = store
        self.key = key
        self.validating = validating
        self.fallback = fallback
        self.mayStore = mayStore
        self.invalidates = invalidates
    }

    /// The request headers that make an exchange one the cache leaves alone: the caller validates or asks
    /// for a part itself.
    private static let bypassing = [
        "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range",
        "Range",
    ]

    /// What to do for `request` with `store` under `policy` at `now`; `revalidating`: a background
    /// validation of a stale answer, which always asks the server.
    static func lookup(
        _ request: URLRequest, in store: any CacheStore, policy: CachePolicy, revalidating: Bool = false,
        now: Date = Date()
    ) -> Lookup {
        let method = request.httpMethod ?? "GET"
        guard method == "GET" || method == "HEAD" else {
            guard method != "OPTIONS", method != "TRACE" else { return .send(nil) }
            return .send(
                CacheTransaction(
                    store: store, key: key(for: request, method: method), validating: nil, fallback: nil,
                    mayStore: false, invalidates: true))
        }
        guard !bypassing.contains(where: { request.value(forHTTPHeaderField: $0) != nil }) else { return .send(nil) }
        var control = CacheControl(request.value(forHTTPHeaderField: "Cache-Control"))
        if request.value(forHTTPHeaderField: "Cache-Control") == nil,
            request.value(forHTTPHeaderField: "Pragma")?.lowercased().contains("no-cache") == true
        {
            control.noCache = true  // RFC 9111 §5.4: Pragma stands in for a missing Cache-Control
        }
        let key = key(for: request, method: method)
        let stored =
            policy == .networkOnly
            ? nil
            : store.response(forKey: key).flatMap { stored in
                stored.variance == variance(of: request, vary: stored.header("Vary")) ? stored : nil
            }
        func send(validating: CachedResponse?, fallback: CachedResponse?) -> Lookup {
            .send(
                CacheTransaction(
                    store: store, key: key, validating: validating?.hasValidators == true ? validating : nil,
                    fallback: fallback, mayStore: !control.noStore, invalidates: false))
        }
        guard let stored else {
            return policy == .cacheOnly || control.onlyIfCached ? .notCached : send(validating: nil, fallback: nil)
        }
        if revalidating { return send(validating: stored, fallback: nil) }
        let age = stored.age(at: now)
        let storedControl = stored.cacheControl
        let freshness = stored.freshness(control: storedControl)
        let isFresh = freshness.isFresh(age: age)
        switch policy {
        case .networkOnly:
            return send(validating: nil, fallback: nil)
        case .cacheOnly:
            return .answer(stored, source: isFresh ? .cache : .stale, age: age, revalidate: false)
        case .networkFirst:
            return send(validating: stored, fallback: stored)
        case .cacheFirst(let maxAge) where age <= maxAge:
            return .answer(stored, source: isFresh ? .cache : .stale, age: age, revalidate: false)
        case .cacheFirst, .followProtocol:
            switch freshness.use(age: age, stored: storedControl, request: control) {
            case .serve:
                return .answer(stored, source: isFresh ? .cache : .stale, age: age, revalidate: false)
            case .serveAndRevalidate:
                return .answer(stored, source: .stale, age: age, revalidate: true)
            case .validate:
                if control.onlyIfCached { return .notCached }
                let usable = freshness.usableOnError(age: age, stored: storedControl, request: control)
                return send(validating: stored, fallback: usable ? stored : nil)
            }
        }
    }

    /// `request` with the stored answer's validators, when it is being validated.
    func conditional(_ request: URLRequest) -> URLRequest {
        guard let validating else { return request }
        var conditional = request
        if let tag = validating.header("ETag") { conditional.setValue(tag, forHTTPHeaderField: "If-None-Match") }
        if let modified = validating.header("Last-Modified") {
            conditional.setValue(modified, forHTTPHeaderField: "If-Modified-Since")
        }
        return conditional
    }

    /// The network's answer as the caller gets it: a 304 to a validation becomes the stored answer with
    /// the new headers (``Response/Source/revalidated``); what may be stored is stored; an unsafe request's
    /// success forgets the URL's stored answers.
    func resolve(_ response: Response, request: URLRequest, now: Date = Date()) -> Response {
        let requestDate = now.addingTimeInterval(-max(0, response.duration))
        if invalidates {
            if (200..<400).contains(response.statusCode) {
                for method in ["GET", "HEAD"] { store.removeResponse(forKey: Self.key(for: request, method: method)) }
            }
            return response
        }
        if response.statusCode == 304, let validating {
            var merged = validating
            // The stored answer is now as old as the 304 says (RFC 9111 §4.3.4): its own `Age` goes.
            Self.removeField("Age", from: &merged.headers)
            for (name, value) in Self.storedFields(of: response.headers)
            where !Self.notUpdatedBy304.contains(name.lowercased()) {
                Self.removeField(name, from: &merged.headers)
                merged.headers[name] = value
            }
            merged.requestDate = requestDate
            merged.responseDate = now
            if mayStore, !merged.cacheControl.noStore { store.store(merged, forKey: key) }
            return Self.response(merged, for: request, source: .revalidated, age: merged.age(at: now), like: response)
        }
        if mayStore, let entry = storable(response, request: request, requestDate: requestDate, now: now) {
            store.store(entry, forKey: key)
        }
        return response
    }

    /// The stored answer standing in for a failure the cache may cover (the server unreachable, too slow,
    /// or answering 500, 502, 503 or 504): ``Response/Source/stale``, or ``Response/Source/cache`` while
    /// still fresh; `nil` otherwise.
    func fallback(
        for error: NetworkError, request: URLRequest, now: Date = Date()
    )
        -> Response?
    {
        guard let fallback else { return nil }
        switch error {
        case .transport, .timedOut: break
        case .httpStatus(let response) where [500, 502, 503, 504].contains(response.statusCode): break
        default: return nil
        }
        let age = fallback.age(at: now)
        let source: Response.Source = fallback.freshness().isFresh(age: age) ? .cache : .stale
        return Self.response(fallback, for: request, source: source, age: age, like: error.response)
    }

    /// Headers a 304 does not change in the stored answer (RFC 9111 §3.2).
    private static let notUpdatedBy304: Set<String> = [
        "content-length", "content-encoding", "transfer-encoding", "content-range", "set-cookie",
    ]

    /// The entry to store for `response`, or `nil` when it may not be stored (RFC 9111 §3): `no-store` of
    /// either side, a `Vary: *`, a partial (206) or not-modified answer, or neither explicit freshness nor a
    /// status that may have a heuristic one. A complete answer that carries `Content-Range` is stored like
    /// any other, the field with it.
    private func storable(_ response: Response, request: URLRequest, requestDate: Date, now: Date) -> CachedResponse? {
        let control = CacheControl(response.header("Cache-Control"))
        let status = response.statusCode
        let vary = response.header("Vary")
        guard !control.noStore, status >= 200, status != 206, status != 304,
            vary?.split(separator: ",").contains(where: { String($0).trimmingWhitespace() == "*" }) != true
        else { return nil }
        let explicit = control.maxAge != nil || response.header("Expires") != nil || control.isPublic
        guard explicit || Freshness.heuristicallyCacheable.contains(status) else { return nil }
        return CachedResponse(
            url: Redactor.default.redact(request.url), statusCode: status,
            headers: Self.storedFields(of: response.headers),
            body: response.body, requestDate: requestDate, responseDate: now,
            variance: Self.variance(of: request, vary: vary))
    }

    /// Fields never stored (RFC 9111 §3.1, RFC 9110 §7.6.1): those meant for one connection or one proxy,
    /// and `Set-Cookie`, a credential.
    private static let unstoredFields: Set<String> = [
        "connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade", "proxy-authenticate",
        "proxy-authentication-info", "proxy-authorization", "set-cookie",
    ]

    /// `headers` as a cache keeps them: without ``unstoredFields`` and without the fields `Connection` names.
    static func storedFields(of headers: [String: String]) -> [String: String] {
        let connection = headers.first { HeaderName.same($0.key, "Connection") }?.value
        let named = Set(
            (connection ?? "").split(separator: ",").map { String($0).trimmingWhitespace().lowercased() })
        var stored = headers
        for name in headers.keys {
            let lowercased = name.lowercased()
            if unstoredFields.contains(lowercased) || named.contains(lowercased) { stored.removeValue(forKey: name) }
        }
        return stored
    }

    /// Removes the field `name` from `fields`, under every spelling of its name.
    private static func removeField(_ name: String, from fields: inout [String: String]) {
        for key in fields.keys where HeaderName.same(key, name) { fields.removeValue(forKey: key) }
    }

    /// The pool's answer made from a stored one. One used without validation (``Response/Source/cache``,
    /// ``Response/Source/stale``) carries an `Age` field of its current age in place of any stored
    /// (RFC 9111 §4); a revalidated one carries what the server's 304 left.
    static func response(
        _ stored: CachedResponse, for request: URLRequest, source: Response.Source, age: TimeInterval,
        statusReader: (any ServerStatusReader)? = nil, like template: Response? = nil
    ) -> Response {
        let url = request.url ?? URL(string: "http://localhost/")!
        let ageField = source == .revalidated ? nil : Freshness.ageField(age)
        let head = stored.head.head(for: url, status: stored.statusCode, headers: stored.headers, age: ageField) {
            // Fields never stored are left out here too: an entry an earlier release stored may hold them.
            var fields = storedFields(of: stored.headers)
            if let ageField {
                removeField("Age", from: &fields)
                fields["Age"] = ageField
            }
            return HTTPURLResponse(
                url: url, statusCode: stored.statusCode, httpVersion: "HTTP/1.1", headerFields: fields)
                ?? HTTPURLResponse(url: url, statusCode: stored.statusCode, httpVersion: nil, headerFields: nil)!
        }
        return Response(
            request: request, httpResponse: head, body: request.httpMethod == "HEAD" ? Data() : stored.body,
            duration: template?.duration ?? 0,
            statusReader: statusReader ?? template?.statusReader ?? JSONStatusReader(),
            timing: template?.timing, source: source, age: age)
    }

    /// The cache key of `request` sent with `method`: a SHA-256 of the method, the URL (its query and any
    /// credential in it included, the fragment left out) and every credential header (`Authorization`,
    /// `Cookie`, and what ``Redactor`` counts as secret), so answers for different credentials never
    /// share a key, and a key shows none of them.
    static func key(for request: URLRequest, method: String) -> String {
        var text = method + "\n"
        if let url = request.url?.absoluteString {
            text += (url.firstIndex(of: "#").map { String(url[..<$0]) } ?? url) + "\n"
        }
        let headers = (request.allHTTPHeaderFields ?? [:]).map { ($0.key.lowercased(), $0.value) }
            .filter { !commonHeaders.contains($0.0) && Redactor.default.isSensitive($0.0) }
            .sorted { $0.0 < $1.0 }
        for (name, value) in headers { text += name + ": " + value + "\n" }
        return SHA256.hex(text)
    }

    /// Headers nearly every request has that are never credentials: not asked of the ``Redactor``.
    private static let commonHeaders: Set<String> = [
        "accept", "user-agent", "accept-language", "accept-encoding", "content-type", "content-length",
    ]

    /// For each header `vary` names, a digest of `request`'s value ("" when it has none).
    static func variance(of request: URLRequest, vary: String?) -> [String: String] {
        guard let vary else { return [:] }
        var variance: [String: String] = [:]
        for name in vary.split(separator: ",").map({ String($0).trimmingWhitespace().lowercased() }) where !name.isEmpty
        {
            variance[name] = request.value(forHTTPHeaderField: name).map { SHA256.hex($0.trimmingWhitespace()) } ?? ""
        }
        return variance
    }
}
