import Foundation
import NIOCore
import NIOPosix
import NetworkCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a file of `length` bytes in pieces, on a thread of NIO's blocking pool, one piece a call:
/// a transport asks for the next piece once the connection has taken the last. The file is opened
/// by the first read and closed after the last, or when the reader is dropped (a cancelled request).
package final class FileReader: AsyncIteratorProtocol {
    /// The size of a piece.
    package static let pieceSize = 256 << 10

    private let path: String
    private var remaining: Int
    private var descriptor: CInt = -1

    package init(path: String, length: Int) {
        self.path = path
        remaining = length
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    package func next() async throws -> ByteBuffer? {
        guard remaining > 0 else {
            closeFile()
            return nil
        }
        if descriptor < 0 {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw Self.failure(path, errno) }
        }
        let (file, count, path) = (descriptor, min(remaining, Self.pieceSize), path)
        let piece = try await NIOThreadPool.singleton.runIfActive { () throws(NetworkError) -> ByteBuffer in
            var piece = ByteBufferAllocator().buffer(capacity: count)
            var failure: CInt = 0
            piece.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { bytes in
                let read = read(file, bytes.baseAddress, count)
                if read < 0 { failure = errno }
                return max(read, 0)
            }
            if failure != 0 { throw Self.failure(path, failure) }
            return piece
        }
        guard piece.readableBytes > 0 else {
            closeFile()
            throw NetworkError.fileAccessFailed(path: path, reason: "the file became shorter while it was sent")
        }
        remaining -= piece.readableBytes
        return piece
    }

    private func closeFile() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    private static func failure(_ path: String, _ code: CInt) -> NetworkError {
        .fileAccessFailed(path: path, reason: String(cString: strerror(code)))
    }
}
