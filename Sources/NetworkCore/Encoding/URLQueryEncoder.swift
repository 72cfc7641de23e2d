import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Encodes parameters as a URL query, RFC 3986 percent-encoded, with keys in sorted order.
///
/// Every character but `A–Z a–z 0–9 - . _ ~` is percent-encoded, so spaces, `&`, `=`, `+`, `/`
/// and non-ASCII text reach the server unchanged. Keys are sorted, so the same parameters
/// always give the same URL. A query already in the endpoint's path is kept, first.
///
/// | value | encoded as |
/// | --- | --- |
/// | `["q": "a b&c"]` | `q=a%20b%26c` |
/// | `["adult": false]` | `adult=false` (or `adult=0` with ``BoolStyle/numeric``) |
/// | `["ids": [1, 2]]` | `ids=1&ids=2` (see ``ArrayStyle``) |
/// | `["filter": ["year": 2020]]` | `filter%5Byear%5D=2020`, i.e. `filter[year]=2020` |
/// | `["list": [["a": 1]]]` | `list[0][a]=1`: lists of lists or dictionaries are always indexed |
/// | `["x": ParameterValue.null]` | `x=` |
/// | `["x": nil as String?]` | left out |
public struct URLQueryEncoder: ParameterEncoder, Hashable {
    /// How a list of plain values is written.
    public enum ArrayStyle: Hashable, Sendable {
        /// `ids=1&ids=2`: the key repeated (the default; read by most servers).
        case repeatKey
        /// `ids[]=1&ids[]=2`: PHP and Rails style.
        case brackets
        /// `ids=1,2`: one value, commas between items (a comma inside an item is encoded as `%2C`).
        case commaSeparated
    }

    /// How a boolean is written.
    public enum BoolStyle: Hashable, Sendable {
        /// `true` / `false` (the default).
        case literal
        /// `1` / `0`.
        case numeric
    }

    /// How lists of plain values are written.
    public var arrays: ArrayStyle
    /// How booleans are written.
    public var bools: BoolStyle

    /// Creates an encoder; the defaults are ``ArrayStyle/repeatKey`` and ``BoolStyle/literal``.
    public init(arrays: ArrayStyle = .repeatKey, bools: BoolStyle = .literal) {
        self.arrays = arrays
        self.bools = bools
    }

    /// The encoded query for `parameters`, without a leading `?`: `"page=1&query=star%20wars"`.
    public func query(for parameters: [String: ParameterValue]) throws(NetworkError) -> String {
        var pairs: [String] = []
        for key in parameters.keys.sorted() {
            try append(key: key, value: parameters[key]!, to: &pairs)
        }
        return pairs.joined(separator: "&")
    }

    /// Appends the parameters to the request URL's query, after any query it already has.
    public func encode(_ parameters: [String: ParameterValue], into request: inout URLRequest) throws(NetworkError) {
        let query = try query(for: parameters)
        guard !query.isEmpty, let url = request.url else { return }
        var string = url.absoluteString
        var fragment = ""
        if let hash = string.firstIndex(of: "#") {
            fragment = String(string[hash...])
            string = String(string[..<hash])
        }
        let separator = string.contains("?") ? (string.hasSuffix("?") || string.hasSuffix("&") ? "" : "&") : "?"
        let merged = string + separator + query + fragment
        guard let mergedURL = URL(string: merged) else {
            throw .invalidEndpoint(url: merged, reason: "the query made the URL invalid")
        }
        request.url = mergedURL
    }

    private func append(key: String, value: ParameterValue, to pairs: inout [String]) throws(NetworkError) {
        switch value {
        case .dictionary(let dictionary):
            for subkey in dictionary.keys.sorted() {
                try append(key: "\(key)[\(subkey)]", value: dictionary[subkey]!, to: &pairs)
            }
        case .array(let items) where items.contains(where: \.isContainer):
            for (index, item) in items.enumerated() {
                try append(key: "\(key)[\(index)]", value: item, to: &pairs)
            }
        case .array(let items):
            guard !items.isEmpty else { return }
            let texts = try items.map { (item) throws(NetworkError) in
                try PercentEncoding.component(text(of: item, key: key))
            }
            switch arrays {
            case .repeatKey:
                let name = PercentEncoding.component(key)
                pairs.append(contentsOf: texts.map { "\(name)=\($0)" })
            case .brackets:
                let name = PercentEncoding.component(key + "[]")
                pairs.append(contentsOf: texts.map { "\(name)=\($0)" })
            case .commaSeparated:
                pairs.append("\(PercentEncoding.component(key))=\(texts.joined(separator: ","))")
            }
        default:
            pairs.append(
                "\(PercentEncoding.component(key))=\(PercentEncoding.component(try text(of: value, key: key)))")
        }
    }

    private func text(of value: ParameterValue, key: String) throws(NetworkError) -> String {
        switch value {
        case .string(let string): return string
        case .int(let number): return String(number)
        case .uint(let number): return String(number)
        case .double(let number):
            guard number.isFinite else {
                throw .encodingFailed(reason: "parameter '\(key)' is \(number), not a finite number")
            }
            return number.description
        case .bool(let flag): return bools == .literal ? (flag ? "true" : "false") : (flag ? "1" : "0")
        case .null: return ""
        case .array, .dictionary: preconditionFailure("containers are expanded before their items are written")
        }
    }
}

extension ParameterEncoder where Self == URLQueryEncoder {
    /// Parameters in the URL query, with the default styles.
    public static var urlQuery: URLQueryEncoder { URLQueryEncoder() }
}

extension ParameterValue {
    var isContainer: Bool {
        switch self {
        case .array, .dictionary: true
        default: false
        }
    }
}
