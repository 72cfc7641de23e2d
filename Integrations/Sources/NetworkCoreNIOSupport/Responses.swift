import Foundation
import NIOCore
import NIOHTTP1
import NetworkCore

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

extension ResponseHead {
    /// The head NIO read, its fields as they came: the pool reads the few it needs, and the
    /// `HTTPURLResponse` is made only when something asks for it.
    package init(status: Int, version: HTTPVersion, headers: HTTPHeaders, url: URL?) {
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(headers.count)
        for (name, value) in headers { fields.append((name, value)) }
        self.init(statusCode: status, httpVersion: Self.versionText(version), fields: fields, url: url)
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
