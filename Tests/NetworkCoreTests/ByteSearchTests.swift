import Foundation
import Testing

@testable import NetworkCore

@Suite("ByteSearch: finding the success key in bodies")
struct ByteSearchTests {
    /// Whether `needle` occurs in `haystack`, position by position: the answer `ByteSearch` must give.
    static func naive(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    @Test("the needle at every position of bodies of every length up to 70 bytes, and one byte off")
    func everyPosition() {
        let needle = Array(#""success""#.utf8)
        var checked = 0
        for length in 0...70 {
            for position in 0...max(0, length - needle.count) where length >= needle.count {
                var body = [UInt8](repeating: UInt8(ascii: "s"), count: length)  // the probes' byte everywhere
                body.replaceSubrange(position..<position + needle.count, with: needle)
                #expect(ByteSearch.contains(Data(body), Data(needle)), "length \(length), at \(position)")
                body[position + needle.count - 1] = UInt8(ascii: "x")  // its last byte wrong: no match
                #expect(!ByteSearch.contains(Data(body), Data(needle)), "length \(length), at \(position)")
                checked += 2
            }
            let without = [UInt8](repeating: UInt8(ascii: "\""), count: length)
            #expect(!ByteSearch.contains(Data(without), Data(needle)))
        }
        #expect(checked == 2 * (1...62).reduce(0, +))  // lengths 9...70 have length − 8 positions each
    }

    @Test("2,000 random bodies and needles of every length from 1 to 20 agree with a search position by position")
    func randomAgainstNaive() {
        var generator = SeededRandom(seed: 7)
        var found = 0
        var mismatches: [(body: [UInt8], needle: [UInt8])] = []
        let alphabet = Array(#"ab"s:{} "#.utf8)  // few letters, so partial and full matches are frequent
        for round in 0..<2_000 {
            let needle = (0..<(1 + round % 20)).map { _ in alphabet.randomElement(using: &generator)! }
            var body = (0..<Int.random(in: 0...200, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator)!
            }
            if round % 3 == 0, body.count >= needle.count {  // plant it a third of the time
                let at = Int.random(in: 0...(body.count - needle.count), using: &generator)
                body.replaceSubrange(at..<at + needle.count, with: needle)
            }
            let expected = Self.naive(body, needle)
            if ByteSearch.contains(Data(body), Data(needle)) != expected { mismatches.append((body, needle)) }
            if expected { found += 1 }
        }
        // One expectation for all, not one a round: the suite runs beside timing-sensitive tests on two cores.
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, e.g. \(mismatches.prefix(3))")
        #expect(found > 600)  // the planted ones at least; the rest must not all agree by being absent
    }

    @Test("a slice of a larger buffer is searched from its own first byte, and an empty needle is always found")
    func slicesAndEdges() {
        let whole = Data(#"xx"success"yy"#.utf8)
        #expect(ByteSearch.contains(whole.dropFirst(2), Data(#""success""#.utf8)))
        #expect(!ByteSearch.contains(whole.dropFirst(3), Data(#""success""#.utf8)))
        #expect(ByteSearch.contains(Data(), Data()))
        #expect(!ByteSearch.contains(Data(), Data("a".utf8)))
        #expect(ByteSearch.contains(Data("a".utf8), Data("a".utf8)))
    }
}
