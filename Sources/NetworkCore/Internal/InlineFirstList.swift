/// A list that keeps its first element inline and only the others in an array: a task nearly always
/// has exactly one waiter and makes exactly one attempt, and an array would cost an allocation for it.
struct InlineFirstList<Element>: Sequence {
    private var first: Element?
    private var others: [Element] = []  // empty while `first` is nil

    var isEmpty: Bool { first == nil }
    var count: Int { first == nil ? 0 : 1 + others.count }

    mutating func append(_ element: Element) {
        if first == nil { first = element } else { others.append(element) }
    }

    /// Removes and returns the first element that `matches`, if there is one.
    mutating func remove(where matches: (Element) -> Bool) -> Element? {
        if let element = first, matches(element) {
            first = others.isEmpty ? nil : others.removeFirst()
            return element
        }
        return others.firstIndex(where: matches).map { others.remove(at: $0) }
    }

    /// Replaces the first element that `matches` with `element`. Returns whether there was one.
    mutating func replace(where matches: (Element) -> Bool, with element: Element) -> Bool {
        if let current = first, matches(current) {
            first = element
            return true
        }
        guard let index = others.firstIndex(where: matches) else { return false }
        others[index] = element
        return true
    }

    /// The last element that `matches`, if there is one.
    func last(where matches: (Element) -> Bool) -> Element? {
        if let element = others.last(where: matches) { return element }
        return first.flatMap { matches($0) ? $0 : nil }
    }

    func makeIterator() -> Iterator { Iterator(first: first, others: others.makeIterator()) }

    struct Iterator: IteratorProtocol {
        fileprivate var first: Element?
        fileprivate var others: IndexingIterator<[Element]>

        mutating func next() -> Element? {
            guard let element = first else { return others.next() }
            first = nil
            return element
        }
    }
}

extension InlineFirstList: Sendable where Element: Sendable {}
