import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Finds bytes in bytes with the C library's `memmem`, several times faster than `Data.range(of:)`
/// on Linux (about 21 µs for a 9 KB body there), which matters because it runs on every response.
enum ByteSearch {
    private typealias MemMem =
        @convention(c) (UnsafeRawPointer?, Int, UnsafeRawPointer?, Int) -> UnsafeMutableRawPointer?

    /// `memmem`, looked up once: Swift's Glibc module does not export it.
    private static let memmem: MemMem? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "memmem").map {
        unsafeBitCast($0, to: MemMem.self)
    }

    static func contains(_ haystack: Data, _ needle: Data) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        guard let memmem else { return haystack.range(of: needle) != nil }
        return haystack.withUnsafeBytes { hay in
            needle.withUnsafeBytes { pin in memmem(hay.baseAddress, hay.count, pin.baseAddress, pin.count) != nil }
        }
    }
}
