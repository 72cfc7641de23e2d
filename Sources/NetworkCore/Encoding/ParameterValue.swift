/// One value in a request's parameters: a string, number, boolean, list, dictionary or null.
///
/// You rarely write this type: parameters are `[String: any ParameterConvertible]`, and `String`,
/// the integer and floating-point types, `Bool`, arrays, dictionaries and optionals convert
/// themselves. A `nil` optional is left out of the request.
/// ```swift
/// let parameters: Parameters = ["query": "star wars", "page": page, "year": year /* Int? */]
/// ```
public enum ParameterValue: Hashable, Sendable {
    /// Text.
    case string(String)
    /// A signed integer.
    case int(Int64)
    /// An unsigned integer too large for `Int64`.
    case uint(UInt64)
    /// A floating-point number; it must be finite to be encoded.
    case double(Double)
    /// A boolean, written as ``URLQueryEncoder/BoolStyle`` says in a query, `true`/`false` in JSON.
    case bool(Bool)
    /// A list.
    case array([ParameterValue])
    /// Named values.
    case dictionary([String: ParameterValue])
    /// An explicit null: `null` in JSON, an empty value (`key=`) in a query or form.
    case null
}

/// Request parameters: names mapped to values that convert themselves to ``ParameterValue``.
public typealias Parameters = [String: any ParameterConvertible]

/// A type that can stand as a request parameter.
public protocol ParameterConvertible: Sendable {
    /// This value as a parameter, or `nil` to leave the parameter out.
    var parameterValue: ParameterValue? { get }
}

extension ParameterValue: ParameterConvertible {
    /// The value itself.
    public var parameterValue: ParameterValue? { self }
}

extension String: ParameterConvertible {
    /// The string.
    public var parameterValue: ParameterValue? { .string(self) }
}

extension Substring: ParameterConvertible {
    /// The substring as a string.
    public var parameterValue: ParameterValue? { .string(String(self)) }
}

extension Bool: ParameterConvertible {
    /// The boolean.
    public var parameterValue: ParameterValue? { .bool(self) }
}

extension Int: ParameterConvertible {
    /// The integer.
    public var parameterValue: ParameterValue? { .int(Int64(self)) }
}

extension Int32: ParameterConvertible {
    /// The integer.
    public var parameterValue: ParameterValue? { .int(Int64(self)) }
}

extension Int64: ParameterConvertible {
    /// The integer.
    public var parameterValue: ParameterValue? { .int(self) }
}

extension UInt: ParameterConvertible {
    /// The integer.
    public var parameterValue: ParameterValue? { .uint(UInt64(self)) }
}

extension UInt64: ParameterConvertible {
    /// The integer.
    public var parameterValue: ParameterValue? { .uint(self) }
}

extension Double: ParameterConvertible {
    /// The number.
    public var parameterValue: ParameterValue? { .double(self) }
}

extension Float: ParameterConvertible {
    /// The number, widened to `Double`.
    public var parameterValue: ParameterValue? { .double(Double(self)) }
}

extension Optional: ParameterConvertible where Wrapped: ParameterConvertible {
    /// The wrapped value's parameter, or `nil` (left out) when there is none.
    public var parameterValue: ParameterValue? { self?.parameterValue }
}

extension Array: ParameterConvertible where Element: ParameterConvertible {
    /// A list of the elements; `nil` elements are left out.
    public var parameterValue: ParameterValue? { .array(compactMap(\.parameterValue)) }
}

extension Dictionary: ParameterConvertible where Key == String, Value: ParameterConvertible {
    /// A dictionary of the values; `nil` values are left out.
    public var parameterValue: ParameterValue? { .dictionary(compactMapValues(\.parameterValue)) }
}

extension ParameterValue {
    /// Converts parameters to values, leaving out those that are `nil`.
    static func values(of parameters: Parameters) -> [String: ParameterValue] {
        parameters.compactMapValues { $0.parameterValue }
    }
}

extension ParameterValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// A string literal: `"star wars"`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer literal: `42`.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A floating-point literal: `7.5`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A boolean literal: `true`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A list literal: `[1, "a", true]`.
    public init(arrayLiteral elements: ParameterValue...) { self = .array(elements) }
    /// A dictionary literal: `["year": 2020]`.
    public init(dictionaryLiteral elements: (String, ParameterValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
