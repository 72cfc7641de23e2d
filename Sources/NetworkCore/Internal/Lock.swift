import Foundation

/// A mutual-exclusion lock with a scoped `withLock`, usable on every platform NetworkCore supports.
final class Lock: @unchecked Sendable {  // NSLock is thread-safe; the class only adds a scoped API.
    private let base = NSLock()

    func withLock<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        base.lock()
        defer { base.unlock() }
        return try body()
    }
}

/// A value guarded by its own lock.
final class Locked<Value>: @unchecked Sendable {  // every access to `value` goes through `lock`.
    private let lock = Lock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T, Failure: Error>(_ body: (inout Value) throws(Failure) -> T) throws(Failure) -> T {
        try lock.withLock { () throws(Failure) -> T in try body(&value) }
    }
}
