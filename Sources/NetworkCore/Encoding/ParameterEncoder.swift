import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Puts parameters into a request: into its URL's query, or into its body.
///
/// NetworkCore ships three: ``URLQueryEncoder``, ``JSONBodyEncoder`` and ``FormBodyEncoder``.
/// Each sets `Content-Type` only when the request has none yet.
public protocol ParameterEncoder: Sendable {
    /// Adds `parameters` to `request`, or throws ``NetworkError/encodingFailed(reason:)``.
    func encode(_ parameters: [String: ParameterValue], into request: inout URLRequest) throws(NetworkError)
}

extension URLRequest {
    /// Sets a header only when the request has no value for it yet (names compare case-insensitively).
    mutating func setIfAbsent(_ value: String, forHTTPHeaderField name: String) {
        if self.value(forHTTPHeaderField: name) == nil {
            setValue(value, forHTTPHeaderField: name)
        }
    }
}
