import Foundation
import NetworkCore

/// Reads TMDB's bare acknowledgement, `{"success": true}`, as a `Bool`.
///
/// Written by hand: there is no model worth declaring for one flag.
public struct SuccessParser: JSONParser {
    /// Creates the parser.
    public init() {}

    /// The `success` flag, or a `DecodingFailure` when the body has none.
    public func parse(_ data: Data) throws -> Bool {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw DecodingFailure(type: "Bool", path: "", reason: "the body is not a JSON object")
        }
        guard let success = object["success"] as? Bool else {
            throw DecodingFailure(type: "Bool", path: "success", reason: "expected true or false")
        }
        return success
    }
}
