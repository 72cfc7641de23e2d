/// A URL string cut into what comes before the query, the query's `name=value` pairs as written,
/// and the fragment; used to redact and to derive ids without re-encoding anything.
struct URLParts {
    var head: String
    var pairs: [(name: String, rawPair: String)]
    var fragment: String?

    init(_ string: String) {
        var rest = Substring(string)
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        guard let mark = rest.firstIndex(of: "?") else {
            head = String(rest)
            pairs = []
            return
        }
        head = String(rest[..<mark])
        pairs = rest[rest.index(after: mark)...].split(separator: "&").map { pair in
            let name = pair.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return (name: (name.removingPercentEncoding ?? name), rawPair: String(pair))
        }
    }

    /// The URL again, from the head and the given pairs, without the fragment.
    static func join(head: String, pairs: [String]) -> String {
        pairs.isEmpty ? head : head + "?" + pairs.joined(separator: "&")
    }
}
