import Testing

@testable import NetworkCore

@Suite("InlineFirstList")
struct InlineFirstListTests {
    @Test("keeps elements in the order they came, the first inline and the others after it")
    func order() {
        var list = InlineFirstList<Int>()
        #expect(list.isEmpty && list.count == 0 && Array(list) == [])
        list.append(1)
        #expect(!list.isEmpty && list.count == 1 && Array(list) == [1])
        for value in 2...5 { list.append(value) }
        #expect(list.count == 5 && Array(list) == [1, 2, 3, 4, 5])
    }

    @Test("remove(where:) takes the first match out, from inline or array, and keeps the order")
    func remove() {
        var list = InlineFirstList<Int>()
        for value in [10, 20, 30, 20] { list.append(value) }
        #expect(list.remove { $0 == 20 } == 20)
        #expect(Array(list) == [10, 30, 20])
        #expect(list.remove { $0 == 10 } == 10)  // the inline one: the next moves up
        #expect(Array(list) == [30, 20] && list.count == 2)
        #expect(list.remove { $0 == 99 } == nil)
        #expect(list.remove { _ in true } == 30)
        #expect(list.remove { _ in true } == 20)
        #expect(list.isEmpty && list.remove { _ in true } == nil)
        list.append(7)  // usable again once emptied
        #expect(Array(list) == [7])
    }

    @Test("last(where:) finds the latest match, the inline one included")
    func last() {
        var list = InlineFirstList<(number: Int, tag: String)>()
        #expect(list.last { _ in true } == nil)
        list.append((1, "a"))
        #expect(list.last { $0.number == 1 }?.tag == "a")
        list.append((2, "b"))
        list.append((1, "c"))
        #expect(list.last { $0.number == 1 }?.tag == "c")
        #expect(list.last { $0.number == 2 }?.tag == "b")
        #expect(list.last { $0.number == 3 } == nil)
    }
}
