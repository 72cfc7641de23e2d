import Foundation

/// Decodes a `Decodable` model with `JSONDecoder`, from the whole body or from a key path inside it.
///
/// ```swift
/// let page = DecodableParser<MoviePage>()                     // the whole body
/// let movies = DecodableParser<[Movie]>(keyPath: "results")   // just the "results" array
/// let user = DecodableParser<User>(keyPath: "data.user", decoder: myDecoder)
/// ```
/// The body is decoded once, directly into the model: a key path is followed by the decoder
/// itself, with no intermediate `JSONSerialization` pass.
public struct DecodableParser<Model: Decodable & Sendable>: JSONParser {
    /// The keys to descend through before decoding, e.g. `["data", "user"]`; empty for the whole body.
    public let keyPath: [String]
    private let decoder: JSONDecoder

    /// Creates a parser.
    /// - Parameters:
    ///   - keyPath: dot-separated keys to the model inside the body, e.g. `"results"` or `"data.user"`.
    ///   - decoder: the decoder whose settings (date strategy, key strategy…) are used; it is not modified.
    public init(keyPath: String? = nil, decoder: JSONDecoder = JSONDecoder()) {
        self.keyPath = keyPath.map { $0.split(separator: ".").map(String.init) } ?? []
        if self.keyPath.isEmpty {
            self.decoder = decoder
        } else {
            self.decoder = decoder.copy(adding: [keyPathUserInfoKey: self.keyPath])
        }
    }

    /// Decodes the body, or throws a ``DecodingFailure`` naming the path that failed.
    public func parse(_ data: Data) throws -> Model {
        if let reason = JSONGuard.rejection(of: data) {
            throw DecodingFailure(type: String(describing: Model.self), path: "", reason: reason)
        }
        do {
            if keyPath.isEmpty {
                return try decoder.decode(Model.self, from: data)
            }
            return try decodeAtKeyPath(data)
        } catch {
            throw DecodingFailure(decoding: Model.self, error: error)
        }
    }

    /// Decodes the model at ``keyPath``. A function of its own, so that a parse without a key path
    /// never asks the runtime for `KeyPathBox<Model>`'s metadata (a lookup on every call otherwise).
    @inline(never)
    private func decodeAtKeyPath(_ data: Data) throws -> Model {
        try decoder.decode(KeyPathBox<Model>.self, from: data).value
    }
}

private let keyPathUserInfoKey = CodingUserInfoKey(rawValue: "NetworkCore.keyPath")!

/// Decodes a value found by descending through the keys the decoder's user info names.
private struct KeyPathBox<Value: Decodable>: Decodable {
    let value: Value

    init(from decoder: any Decoder) throws {
        let keys = (decoder.userInfo[keyPathUserInfoKey] as? [String]) ?? []
        var container = try decoder.container(keyedBy: AnyCodingKey.self)
        for key in keys.dropLast() {
            container = try container.nestedContainer(keyedBy: AnyCodingKey.self, forKey: AnyCodingKey(key))
        }
        value = try container.decode(Value.self, forKey: AnyCodingKey(keys.last ?? ""))
    }
}

extension JSONDecoder {
    /// A new decoder with this one's settings and extra user info, leaving this one untouched.
    func copy(adding userInfo: [CodingUserInfoKey: any Sendable]) -> JSONDecoder {
        let copy = JSONDecoder()
        copy.dateDecodingStrategy = dateDecodingStrategy
        copy.dataDecodingStrategy = dataDecodingStrategy
        copy.nonConformingFloatDecodingStrategy = nonConformingFloatDecodingStrategy
        copy.keyDecodingStrategy = keyDecodingStrategy
        copy.allowsJSON5 = allowsJSON5
        copy.assumesTopLevelDictionary = assumesTopLevelDictionary
        copy.userInfo = self.userInfo.merging(userInfo) { _, new in new }
        return copy
    }
}
