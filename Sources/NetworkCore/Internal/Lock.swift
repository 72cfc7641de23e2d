#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A mutual-exclusion lock with a scoped `withLock`, usable on every platform NetworkCore supports.
/// Copies share one mutex.
///
/// Creating a lock or a ``Locked`` costs one allocation, the mutex inside it, where a `Locked` built on
/// `NSLock` costs several. Every response and every transport send creates a `Locked`, so this shows in
/// the cost of a request.
struct Lock: @unchecked Sendable {  // the mutex serialises every access; the struct only adds a scoped API.
    private let buffer = MutexBuffer.make(())

    func withLock<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        try buffer.withMutex(body)
    }
}

/// A value guarded by its own mutex, both in one allocation. Copies share the value and the mutex.
struct Locked<Value>: @unchecked Sendable {  // every access to the value goes through the mutex.
    private let buffer: MutexBuffer<Value>

    init(_ value: Value) { buffer = MutexBuffer.make(value) }

    func withLock<T, Failure: Error>(_ body: (inout Value) throws(Failure) -> T) throws(Failure) -> T {
        try buffer.withLock(body)
    }
}

/// The storage behind ``Lock`` and ``Locked``: the value as the header of a `ManagedBuffer`, a `pthread_mutex_t`
/// as its one element, so the mutex never moves and needs no allocation of its own.
private final class MutexBuffer<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    static func make(_ value: Value) -> MutexBuffer {
        let buffer = create(minimumCapacity: 1) { _ in value }
        buffer.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            defer { pthread_mutexattr_destroy(&attributes) }
            #if canImport(Glibc)
                // Adaptive: a thread that finds the mutex held spins briefly before it sleeps in the kernel. The
                // pool's critical sections are a few field updates, and its lock is taken both by the thread
                // sending and by the tasks running beside it, so a short spin usually finds it free again
                // rather than paying for a sleep and a wake-up.
                pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
            #endif
            let result = pthread_mutex_init(mutex, &attributes)
            precondition(result == 0, "pthread_mutex_init failed: \(result)")
        }
        return unsafeDowncast(buffer, to: MutexBuffer.self)
    }

    deinit {
        withUnsafeMutablePointerToElements { mutex in
            pthread_mutex_destroy(mutex)
            _ = mutex.deinitialize(count: 1)
        }
    }

    /// Runs `body` with the mutex held, without touching the value. A `Lock` uses this: with a `Void`
    /// value behind `withLock`, ThreadSanitizer reported the `inout` access to that value as racing
    /// with the unlocked read at the start of the next `withLock` (49 reports in one CI run, every
    /// one through `Lock`, none through a `Locked` of a real value).
    func withMutex<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        try withUnsafeMutablePointerToElements { (mutex) throws(Failure) -> T in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body()
        }
    }

    func withLock<T, Failure: Error>(_ body: (inout Value) throws(Failure) -> T) throws(Failure) -> T {
        try withMutex { () throws(Failure) -> T in
            try withUnsafeMutablePointerToHeader { (value) throws(Failure) -> T in try body(&value.pointee) }
        }
    }
}
