import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What is wrong with an endpoint's base URL and path.
private enum URLProblem {
    /// The base URL's, with the reason.
    case base(String)
    /// A `.` or `..` segment, as written, in the base URL's path or the path.
    case dotSegment(String)
}

extension Endpoint {
    /// Base URL and path joined by one `/`, as a request is built from them, for error messages.
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
        try urlRequest(defaultHeaders: defaultHeaders, checked: false, timeout: timeout).request
    }

    /// Builds the request; `checked`: `defaultHeaders` have been checked and spelled canonically
    /// already (``HeaderName/checked(_:)``), as a pool does once for its own, rather than per request.
    /// `bases`: the base URLs checked before (a pool's), looked in and added to. `origin`: the request's
    /// origin (``URLParts/origin(of:)``) when it was read from its base URL and no encoder of the caller's
    /// could have changed its URL; `nil` without `bases`.
    func urlRequest(
        defaultHeaders: [String: String], checked: Bool, timeout: TimeInterval, bases: CheckedBaseURLs? = nil
    ) throws(NetworkError) -> (request: URLRequest, origin: String?) {
        let (url, origin) = try validatedURL(bases: bases)
        var request = URLRequest(url: url)
        // A request is a GET until told otherwise; FoundationNetworking's setter compares case-insensitively.
        let method = self.method
        if method != .get {
            // A method is a token: anything else (a space, a line break) would rewrite the request line.
            guard HeaderName.isToken(method.rawValue) else {
                throw .invalidEndpoint(
                    url: urlString, reason: "\(String(reflecting: method.rawValue)) is not a valid HTTP method")
            }
            request.httpMethod = method.rawValue
        }
        let seconds = self.timeout ?? timeout
        guard seconds > 0, seconds.isFinite else {
            throw .invalidEndpoint(
                url: urlString, reason: "the timeout must be a positive number of seconds, not \(seconds)")
        }
        request.timeoutInterval = seconds
        let endpointHeaders = headers
        var fields: [String: String]
        if checked {
            fields = defaultHeaders  // shared, not copied, unless the endpoint adds headers
            if !endpointHeaders.isEmpty { fields.reserveCapacity(fields.count + endpointHeaders.count) }
        } else {
            fields = [:]
            fields.reserveCapacity(defaultHeaders.count + endpointHeaders.count)  // one allocation, no regrowth
            try merge(defaultHeaders, into: &fields)
        }
        try merge(endpointHeaders, into: &fields)
        // Read once: an endpoint's `task` is usually a `switch` that builds its parameters anew.
        let task = self.task
        if case .parameters(_, _, _, let taskHeaders) = task { try merge(taskHeaders, into: &fields) }
        // One assignment: `setValue(_:forHTTPHeaderField:)` copies the whole dictionary per header.
        request.allHTTPHeaderFields = fields
        try apply(task, to: &request)
        return (request, Self.keepsURL(task) ? origin : nil)
    }

    /// Whether `task` leaves the URL's origin as it is: all but a body encoder other than NetworkCore's.
    private static func keepsURL(_ task: HTTPTask) -> Bool {
        switch task {
        case .bodyParameters(_, let encoder), .parameters(_, _, let encoder, _):
            encoder is JSONBodyEncoder || encoder is FormBodyEncoder
        default:
            true
        }
    }

    /// The URL, and its base URL's origin when `bases` is given.
    private func validatedURL(bases: CheckedBaseURLs?) throws(NetworkError) -> (url: URL, origin: String?) {
        var base = baseURL.trimmingWhitespace()
        var path = path.trimmingWhitespace()
        let known = bases?.origin(ofChecked: base)
        // Read from the bytes, without making strings: every send builds its URL here. A base URL checked
        // before needs no second look; the path always does.
        let problem = base.withUTF8 { base in
            path.withUTF8 { path in
                known == nil
                    ? Self.problem(ofBase: base, path: path) : Self.dotSegment(in: path).map(URLProblem.dotSegment)
            }
        }
        switch problem {
        case .none: break
        case .base(let reason): throw .invalidEndpoint(url: base, reason: reason)
        case .dotSegment(let segment):
            // A `..` would be resolved on the way (`files/../../admin` reaches `/admin`): the request would go
            // somewhere the endpoint does not name. Names taken from input belong in a path encoded as data.
            throw .invalidEndpoint(
                url: Self.join(base, path), reason: "the path has a '\(segment)' segment; dot segments are not sent")
        }
        let joined = Self.join(base, path)
        guard let url = URL(string: joined) else {
            throw .invalidEndpoint(url: joined, reason: "base URL and path do not form a valid URL")
        }
        guard let bases else { return (url, nil) }
        if let known { return (url, known) }
        let origin = base.withUTF8(URLParts.origin(in:))
        if let origin { bases.remember(base, origin: origin) }
        return (url, origin)
    }

    /// What is wrong with a base URL and a path, or `nil`. The base URL needs a scheme (a letter, then
    /// letters, digits, `+`, `-` or `.`) ending in `://`, no query or fragment, and a host after any user
    /// info (`user@`) and before any port; neither its path nor `path` may have a dot segment.
    private static func problem(
        ofBase bytes: UnsafeBufferPointer<UInt8>, path: UnsafeBufferPointer<UInt8>
    ) -> URLProblem? {
        let slash = UInt8(ascii: "/")
        guard let separator = URLParts.schemeSeparator(in: bytes), separator > 0, isLetter(bytes[0]),
            bytes[..<separator].allSatisfy(isSchemeByte)
        else {
            return .base("the base URL needs a scheme such as https://")
        }
        guard !bytes.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) else {
            return .base("the base URL must not carry a query or fragment; put them in the path or task")
        }
        let authority = separator + 3
        let authorityEnd = bytes[authority...].firstIndex(of: slash) ?? bytes.count
        let host = bytes[authority..<authorityEnd].lastIndex(of: UInt8(ascii: "@")).map { $0 + 1 } ?? authority
        guard host < authorityEnd, bytes[host] != UInt8(ascii: ":") else { return .base("the base URL has no host") }
        let segment = dotSegment(in: UnsafeBufferPointer(rebasing: bytes[authorityEnd...])) ?? dotSegment(in: path)
        return segment.map(URLProblem.dotSegment)
    }

    /// The first `.` or `..` segment (also written `%2e`) in `path`, up to any `?`.
    private static func dotSegment(in path: UnsafeBufferPointer<UInt8>) -> String? {
        let slash = UInt8(ascii: "/")
        var end = 0
        while end < path.count, path[end] != UInt8(ascii: "?") { end += 1 }
        // One pass without allocating: only a segment of at most 6 bytes that starts with `.` or `%` is looked at.
        var start = 0
        while start <= end {
            var stop = start
            while stop < end, path[stop] != slash { stop += 1 }
            if stop > start, stop - start <= 6, path[start] == UInt8(ascii: ".") || path[start] == UInt8(ascii: "%") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: path[start..<stop]), as: UTF8.self)
                let decoded = text.lowercased().replacingOccurrences(of: "%2e", with: ".")
                if decoded == "." || decoded == ".." { return text }
            }
            start = stop + 1
        }
        return nil
    }

    /// `base`, one `/` and `path`: the path up to any `?` percent-encoded where it must be
    /// (``PercentEncoding/encodePath(_:into:at:)``), the query as written; one string, built from the bytes.
    private static func join(_ base: String, _ path: String) -> String {
        guard !path.isEmpty else { return base }
        var base = base  // `withUTF8` needs mutable strings; native ones are not copied
        var path = path
        return base.withUTF8 { baseBytes in path.withUTF8 { join(baseBytes, $0) } }
    }

    private static func join(_ base: UnsafeBufferPointer<UInt8>, _ path: UnsafeBufferPointer<UInt8>) -> String {
        let slash = UInt8(ascii: "/")
        let mark = path.firstIndex(of: UInt8(ascii: "?")) ?? path.count
        let query = UnsafeBufferPointer(rebasing: path[mark...])
        guard mark > 0 else { return String(decoding: base, as: UTF8.self) + String(decoding: query, as: UTF8.self) }
        let head = base.last == slash ? UnsafeBufferPointer(rebasing: base.dropLast()) : base
        let tail = UnsafeBufferPointer(rebasing: path[(path[0] == slash ? 1 : 0)..<mark])
        let capacity = head.count + 1 + PercentEncoding.maxEncodedCount(tail.count) + query.count
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            var end = buffer.initialize(fromContentsOf: head)
            buffer[end] = slash
            end = PercentEncoding.encodePath(tail, into: buffer, at: end + 1)
            return UnsafeMutableBufferPointer(rebasing: buffer[end...]).initialize(fromContentsOf: query) + end
        }
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
        case .file(let url, let contentType):
            let length = try RequestBody.readableLength(of: url)
            request.setIfAbsent(contentType, forHTTPHeaderField: "Content-Type")
            request.setValue(String(length), forHTTPHeaderField: "Content-Length")
        case .multipart(let form):
            // The boundary is the form's: a Content-Type of the endpoint's own would not name it.
            let encoding = try form.encoding()
            request.setValue(encoding.contentType, forHTTPHeaderField: "Content-Type")
            if form.hasFiles {
                request.setValue(String(encoding.length), forHTTPHeaderField: "Content-Length")
            } else {
                request.httpBody = form.encoded(boundary: encoding.boundary)
            }
        }
    }

    /// The body of `request`, built from this endpoint, that is not bytes in the request: a file, checked
    /// again, or a form with files, streamed with the boundary `request` names. A file that changed size
    /// since the request was made fails with ``NetworkError/fileAccessFailed(path:reason:)``.
    func upload(for request: URLRequest) throws(NetworkError) -> Upload {
        switch task {
        case .file(let url, _):
            _ = try RequestBody.readableLength(of: url)
            return .file(url)
        case .multipart(let form) where form.hasFiles:
            let contentType = request.value(forHTTPHeaderField: "Content-Type") ?? ""
            let boundary = contentType.range(of: "boundary=").map { String(contentType[$0.upperBound...]) }
            let encoding = try form.encoding(boundary: boundary)
            if let declared = request.value(forHTTPHeaderField: "Content-Length"), declared != String(encoding.length) {
                throw .fileAccessFailed(
                    path: form.filePaths.joined(separator: ", "),
                    reason: "a file changed size while the request was made")
            }
            return .form(encoding)
        default:
            return .none
        }
    }

    /// Adds the headers under their canonical names (``HeaderName/merge(_:into:)``), throwing for the
    /// first one that cannot be sent.
    private func merge(_ headers: [String: String], into fields: inout [String: String]) throws(NetworkError) {
        switch HeaderName.merge(headers, into: &fields) {
        case nil: return
        case .invalidName(let name):
            throw .invalidEndpoint(url: urlString, reason: "\(String(reflecting: name)) is not a valid header name")
        case .invalidValue(let name):
            throw .invalidEndpoint(
                url: urlString, reason: "the value of header \(String(reflecting: name)) contains a line break")
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".")
    }

}
