import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Encodes parameters as an `application/x-www-form-urlencoded` body.
///
/// The body is written exactly as ``URLQueryEncoder`` writes a query (same percent-encoding,
/// sorted keys, list and boolean styles), so a server reads form and query parameters alike.
public struct FormBodyEncoder: ParameterEncoder, Hashable {
    /// The query writer whose output becomes the body.
    public var query: URLQueryEncoder

    /// Creates a form encoder with the given list and boolean styles.
    public init(arrays: URLQueryEncoder.ArrayStyle = .repeatKey, bools: URLQueryEncoder.BoolStyle = .literal) {
        query = URLQueryEncoder(arrays: arrays, bools: bools)
    }

    /// Sets the body and, unless the request has one, `Content-Type: application/x-www-form-urlencoded`.
    public func encode(_ parameters: [String: ParameterValue], into request: inout URLRequest) throws(NetworkError) {
        request.httpBody = Data(try query.query(for: parameters).utf8)
        request.setIfAbsent("application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
    }
}

extension ParameterEncoder where Self == FormBodyEncoder {
    /// Parameters as an `application/x-www-form-urlencoded` body.
    public static var form: FormBodyEncoder { FormBodyEncoder() }
}
