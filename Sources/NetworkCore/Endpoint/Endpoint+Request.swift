import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Endpoint {
    /// Base URL and path joined by one `/`, as written, for error messages.
    var urlString: String {
        Self.join(baseURL.trimmingWhitespace(), path.trimmingWhitespace())
    }

    /// Builds the `URLRequest` this endpoint describes.
    ///
    /// Headers are applied in this order, later ones winning: `defaultHeaders`, ``headers``,
    /// then the headers of an ``HTTPTask/parameters(url:body:bodyEncoder:headers:)`` task. Names are
    /// compared without regard to case and set capitalized word by word (`x-api-key` → `X-Api-Key`).
    /// Encoders add `Content-Type` only where none was set.
    /// - Throws: ``NetworkError/invalidEndpoint(url:reason:)`` for a base URL without scheme or host,
    ///   a URL that cannot be formed, a bad header or timeout; ``NetworkError/encodingFailed(reason:)``
    ///   for parameters or a body that cannot be encoded.
    public func urlRequest(
        defaultHeaders: [String: String] = [:], timeout: TimeInterval = 60
    ) throws(NetworkError)
        -> URLRequest
    {
        let url = try validatedURL()
        var request = URLRequest(url: url)
        // A request is a GET until told otherwise; FoundationNetworking's setter compares case-insensitively.
        if method != .get { request.httpMethod = method.rawValue }
        let seconds = self.timeout ?? timeout
        guard seconds > 0, seconds.isFinite else {
            throw .invalidEndpoint(
                url: urlString, reason: "the timeout must be a positive number of seconds, not \(seconds)")
        }
        request.timeoutInterval = seconds
        let endpointHeaders = headers
        var fields: [String: String] = [:]
        fields.reserveCapacity(defaultHeaders.count + endpointHeaders.count)  // one allocation, no regrowth
        try merge(defaultHeaders, into: &fields)
        try merge(endpointHeaders, into: &fields)
        if case .parameters(_, _, _, let taskHeaders) = task { try merge(taskHeaders, into: &fields) }
        // One assignment: `setValue(_:forHTTPHeaderField:)` copies the whole dictionary per header.
        request.allHTTPHeaderFields = fields
        try apply(task, to: &request)
        return request
    }

    private func validatedURL() throws(NetworkError) -> URL {
        let base = baseURL.trimmingWhitespace()
        let head = URLParts.split(head: base)
        let scheme = head.prefix.utf8.dropLast(3)
        guard let first = scheme.first, Self.isLetter(first),
            scheme.allSatisfy({ Self.isLetter($0) || Self.isDigit($0) || "+-.".utf8.contains($0) })
        else {
            throw .invalidEndpoint(url: base, reason: "the base URL needs a scheme such as https://")
        }
        guard !head.authority.isEmpty else { throw .invalidEndpoint(url: base, reason: "the base URL has no host") }
        guard !base.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) else {
            throw .invalidEndpoint(
                url: base, reason: "the base URL must not carry a query or fragment; put them in the path or task")
        }
        var path = self.path.trimmingWhitespace()
        var query = ""
        if let mark = path.utf8.firstIndex(of: UInt8(ascii: "?")) {
            query = String(path[mark...])
            path = String(path[..<mark])
        }
        let joined = Self.join(base, PercentEncoding.path(path)) + query
        guard let url = URL(string: joined), let host = url.host, !host.isEmpty else {
            throw .invalidEndpoint(url: joined, reason: "base URL and path do not form a valid URL")
        }
        return url
    }

    private static func join(_ base: String, _ path: String) -> String {
        guard !path.isEmpty else { return base }
        let trimmedBase = base.hasSuffix("/") ? String(base.dropLast()) : base
        let trimmedPath = path.hasPrefix("/") ? String(path.dropFirst()) : path
        return trimmedBase + "/" + trimmedPath
    }

    private func apply(_ task: HTTPTask, to request: inout URLRequest) throws(NetworkError) {
        switch task {
        case .plain:
            break
        case .urlParameters(let parameters, let encoder):
            try encoder.encode(ParameterValue.values(of: parameters), into: &request)
        case .bodyParameters(let parameters, let encoder):
            try encoder.encode(ParameterValue.values(of: parameters), into: &request)
        case .parameters(let url, let body, let bodyEncoder, _):  // headers were merged with the others
            try URLQueryEncoder().encode(ParameterValue.values(of: url), into: &request)
            try bodyEncoder.encode(ParameterValue.values(of: body), into: &request)
        case .jsonEncodable(let value, let encoder):
            do {
                request.httpBody = try encoder.encode(value)
            } catch {
                throw .encodingFailed(reason: "\(type(of: value)) could not be encoded as JSON: \(error)")
            }
            request.setIfAbsent("application/json", forHTTPHeaderField: "Content-Type")
        case .data(let data, let contentType):
            request.httpBody = data
            request.setIfAbsent(contentType, forHTTPHeaderField: "Content-Type")
        }
    }

    /// Adds the headers under their canonical names (a later spelling of a name replaces an earlier
    /// one), rejecting names that are not HTTP tokens and values with line breaks, which would
    /// otherwise smuggle in headers of their own (Foundation would drop them silently).
    private func merge(_ headers: [String: String], into fields: inout [String: String]) throws(NetworkError) {
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte) else {
                throw .invalidEndpoint(url: urlString, reason: "'\(name)' is not a valid header name")
            }
            guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
                throw .invalidEndpoint(url: urlString, reason: "the value of header '\(name)' contains a line break")
            }
            fields[HeaderName.canonical(name)] = value
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}
