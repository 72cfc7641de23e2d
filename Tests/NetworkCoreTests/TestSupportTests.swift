import Foundation
import Testing

@Suite("Test support")
struct TestSupportTests {
    @Test("eventually stops waiting once its task is cancelled, and answers with the condition as it is")
    func eventuallyStopsWhenCancelled() async {
        let checks = Counter()
        let waiting = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await eventually(within: 10) {
                checks.increment()
                return false
            }
        }
        #expect(await waiting.value == false)
        // Once before the first pause, once after it: polling on without a pause would ask thousands of times.
        #expect(checks.count == 2)
    }

    @Test("eventually answers as soon as the condition holds")
    func eventuallyReturnsWhenTheConditionHolds() async {
        let checks = Counter()
        #expect(await eventually(within: 10) { checks.increment() >= 3 })
        #expect(checks.count == 3)
    }
}
