import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HTTPURLResponse {
    /// The headers as the transport reports them, names and values as strings.
    var headerFields: [String: String] {
        var result: [String: String] = [:]
        for (name, value) in allHeaderFields {
            result[String(describing: name)] = String(describing: value)
        }
        return result
    }
}
