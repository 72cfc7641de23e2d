import Dispatch
import Testing

@testable import NetworkCore

@Suite("MonotonicClock")
struct MonotonicClockTests {
    @Test("reads nanoseconds on Dispatch's clock: each reading lies between two DispatchTime readings")
    func sameClockAsDispatch() {
        var previous: UInt64 = 0
        for _ in 0..<1_000 {
            let before = DispatchTime.now().uptimeNanoseconds
            let reading = MonotonicClock.now()
            let after = DispatchTime.now().uptimeNanoseconds
            // Darwin's DispatchTime converts machine ticks to nanoseconds: allow its rounding, a microsecond.
            #expect(reading + 1_000 >= before && reading <= after + 1_000, "\(before) ≤ \(reading) ≤ \(after)")
            #expect(reading >= previous)
            previous = reading
        }
    }

    @Test("seconds between two readings")
    func seconds() {
        #expect(MonotonicClock.seconds(from: 1_000_000_000, to: 3_500_000_000) == 2.5)
        #expect(MonotonicClock.seconds(from: 7, to: 7) == 0)
    }
}
