import Foundation

extension String {
    /// The string without leading and trailing `CharacterSet.whitespaces`. Returns the string itself,
    /// without Foundation's bridging, when it starts and ends with a visible ASCII character.
    func trimmingWhitespace() -> String {
        guard let first = utf8.first, let last = utf8.last else { return self }
        let visible = UInt8(ascii: "!")...UInt8(ascii: "~")
        if visible.contains(first), visible.contains(last) { return self }
        return trimmingCharacters(in: .whitespaces)
    }
}
