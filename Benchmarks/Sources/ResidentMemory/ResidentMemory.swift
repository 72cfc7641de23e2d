// The process's resident memory, as the benchmarks read it (Linux's /proc/self/statm).
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Resident bytes now, from /proc/self/statm, without trimming the heap first.
public func currentResident() -> Int {
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
    return (statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Resident bytes after returning free heap pages to the system (glibc's `malloc_trim`, where there is one).
public func residentBytes() -> Int {
    typealias Trim = @convention(c) (Int) -> Int32
    if let symbol = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(symbol, to: Trim.self)(0) }
    return currentResident()
}
