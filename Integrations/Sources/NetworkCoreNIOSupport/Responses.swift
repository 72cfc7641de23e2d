import Foundation
import NIOCore
import NIOHTTP1
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Data {
    /// The readable bytes of `buffer` without copying them: the `Data` holds the buffer until it is freed
    /// (a large download moves each chunk to its file without a copy in memory).
    package init(sharing buffer: ByteBuffer) {
        let count = buffer.readableBytes
        guard count > 0 else {
            self.init()
            return
        }
        self = buffer.withUnsafeReadableBytes { bytes in
            Data(
                bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), count: count,
                deallocator: .custom { _, _ in withExtendedLifetime(buffer) {} })
        }
    }
}

extension HTTPURLResponse {
    /// A response head as `URLSession` gives it: repeated fields joined with commas, under the name they
    /// were first seen with.
    package static func head(status: Int, version: HTTPVersion, headers: HTTPHeaders, url: URL?) -> HTTPURLResponse {
        var fields: [String: String] = [:]
        fields.reserveCapacity(headers.count)
        // The names seen, compared without regard to case and without a lowercased copy of each: every
        // answer's head comes through here, and most repeat no name.
        var names = Set<FoldedName>(minimumCapacity: headers.count)
        for (name, value) in headers {
            let (inserted, seen) = names.insert(FoldedName(name))
            if inserted {
                fields[name] = value
            } else {
                fields[seen.name, default: ""] += ", " + value
            }
        }
        // Both are valid here: a URL from the request, and a status the HTTP parser read.
        return HTTPURLResponse(
            url: url ?? URL(fileURLWithPath: "/"), statusCode: status, httpVersion: versionText(version),
            headerFields: fields)!
    }

    /// `HTTP/1.1`, as `URLSession` writes the version; the common ones without building a string.
    private static func versionText(_ version: HTTPVersion) -> String {
        switch (version.major, version.minor) {
        case (1, 1): "HTTP/1.1"
        case (1, 0): "HTTP/1.0"
        case (2, 0): "HTTP/2.0"
        default: "HTTP/\(version.major).\(version.minor)"
        }
    }
}

/// A header name that equals another spelt in other cases (`Set-Cookie`, `set-cookie`): compared and hashed
/// byte by byte with ASCII letters folded, eight bytes to a word, without a lowercased copy.
private struct FoldedName: Hashable {
    let name: String

    init(_ name: String) { self.name = name }

    static func == (left: FoldedName, right: FoldedName) -> Bool {
        left.name.utf8.count == right.name.utf8.count
            && zip(left.name.utf8, right.name.utf8).allSatisfy { folded($0) == folded($1) }
    }

    func hash(into hasher: inout Hasher) {
        var word: UInt64 = 0
        var shift: UInt64 = 0
        for byte in name.utf8 {
            word |= UInt64(Self.folded(byte)) << shift
            shift += 8
            if shift == 64 {
                hasher.combine(word)
                word = 0
                shift = 0
            }
        }
        hasher.combine(word)
        hasher.combine(name.utf8.count)
    }

    private static func folded(_ byte: UInt8) -> UInt8 { (0x41...0x5a).contains(byte) ? byte | 0x20 : byte }
}
