import Dispatch

/// Nanoseconds from a clock that never goes backwards; for durations, not for dates.
enum MonotonicClock {
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    static func seconds(from start: UInt64, to end: UInt64) -> Double {
        Double(end &- start) / 1_000_000_000
    }
}
