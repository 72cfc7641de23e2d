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
        var names: [String: String] = [:]  // lowercased → as first seen
        for (name, value) in headers {
            let key = name.lowercased()
            if let seen = names[key] {
                fields[seen, default: ""] += ", " + value
            } else {
                names[key] = name
                fields[name] = value
            }
        }
        // Both are valid here: a URL from the request, and a status the HTTP parser read.
        return HTTPURLResponse(
            url: url ?? URL(fileURLWithPath: "/"), statusCode: status,
            httpVersion: "HTTP/\(version.major).\(version.minor)", headerFields: fields)!
    }
}
