#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Nanoseconds from a clock that never goes backwards; for durations, not for dates.
enum MonotonicClock {
    /// Read from the C library directly: `DispatchTime.now()` does several times the work on Linux,
    /// and a task reads the clock three or four times.
    static func now() -> UInt64 {
        #if canImport(Darwin)
            clock_gettime_nsec_np(CLOCK_UPTIME_RAW)
        #else
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
        #endif
    }

    /// `seconds` as nanoseconds, for a wait or a timer: a time from a server or a configuration may be
    /// anything, so NaN and anything not positive is 0, and anything past 10⁹ s (about 31 years) is 10⁹ s,
    /// rather than a conversion that traps.
    static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }  // NaN too
        return UInt64(min(seconds, 1e9) * 1e9)
    }

    static func seconds(from start: UInt64, to end: UInt64) -> Double {
        Double(end &- start) / 1_000_000_000
    }
}
