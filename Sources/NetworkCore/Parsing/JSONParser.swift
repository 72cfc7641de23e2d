import Foundation

/// Turns a response body into a model.
///
/// ``DecodableParser`` covers `Decodable` models. Write your own conformer for payloads that
/// read better by hand:
/// ```swift
/// struct LineCountParser: JSONParser {
///     func parse(_ data: Data) throws -> Int {
///         String(decoding: data, as: UTF8.self).split(separator: "\n").count
///     }
/// }
/// ```
/// Errors a parser throws reach the caller as ``NetworkError/decodingFailed(_:)``.
public protocol JSONParser: Sendable {
    /// The type the parser produces.
    associatedtype Model: Sendable

    /// Parses a body into the model, or throws.
    func parse(_ data: Data) throws -> Model
}
