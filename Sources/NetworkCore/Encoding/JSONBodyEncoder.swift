import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Encodes parameters as a JSON object body, keys sorted so the same parameters give the same bytes.
///
/// `nil` optionals are left out; ``ParameterValue/null`` is written as `null`. A number that is
/// not finite (`.nan`, `.infinity`) cannot be written in JSON and is an ``NetworkError/encodingFailed(reason:)``.
public struct JSONBodyEncoder: ParameterEncoder, Hashable {
    /// Creates a JSON body encoder.
    public init() {}

    /// Sets the body and, unless the request has one, `Content-Type: application/json`.
    public func encode(_ parameters: [String: ParameterValue], into request: inout URLRequest) throws(NetworkError) {
        request.httpBody = try JSONWriter.data(for: .dictionary(parameters))
        request.setIfAbsent("application/json", forHTTPHeaderField: "Content-Type")
    }
}

extension ParameterEncoder where Self == JSONBodyEncoder {
    /// Parameters as a JSON object body.
    public static var json: JSONBodyEncoder { JSONBodyEncoder() }
}
