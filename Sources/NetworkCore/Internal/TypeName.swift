import Foundation

/// Type names as `String(describing:)` writes them, made once per type: the runtime spells a name anew on
/// each call, and an endpoint's default ``Endpoint/service`` is asked for on every event a task logs.
enum TypeName {
    private static let names = Locked<[ObjectIdentifier: String]>([:])

    static func of(_ type: Any.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = names.withLock({ $0[key] }) { return name }
        let name = String(describing: type)
        names.withLock { $0[key] = name }
        return name
    }
}
