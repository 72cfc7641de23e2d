/// Which responses a pool accepts as success.
///
/// A response is accepted when its status is in ``acceptableStatusCodes`` and, if
/// ``detectsServerRefusal`` is on, its body does not say the call failed
/// (`"success": false` for the default ``JSONStatusReader``).
public struct Validation: Sendable {
    /// Status codes that count as success; `200...299` by default.
    public var acceptableStatusCodes: Set<Int>
    /// Whether an accepted body that says it failed becomes ``NetworkError/serverRefused(_:)``.
    public var detectsServerRefusal: Bool

    /// Creates a validation rule.
    public init(acceptableStatusCodes: Set<Int> = Set(200...299), detectsServerRefusal: Bool = true) {
        self.acceptableStatusCodes = acceptableStatusCodes
        self.detectsServerRefusal = detectsServerRefusal
    }

    /// 2xx is success, and so is a 2xx body that does not say it failed.
    public static let `default` = Validation()
}
