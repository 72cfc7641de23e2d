#if canImport(FoundationNetworking)
    import Foundation
    import FoundationNetworking
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// A file's bytes as the body stream of a FoundationNetworking task: with a length announced, exactly that
    /// many (a file that has become shorter fails the transfer; bytes it gained are not sent), else the whole
    /// file, sent chunked.
    ///
    /// FoundationNetworking's own file upload (`uploadTask(with:fromFile:)`) pauses the transfer for each
    /// read of the file and resumes it when the read is done; a transfer that ends in between (cancelled,
    /// timed out, its connection lost) makes that resume trap the process ("'try!' expression unexpectedly
    /// raised an error: libcurl.Easy Code=43"). A body stream is read when the connection takes bytes, with no
    /// pause to resume, so every file body on Linux goes this way.
    ///
    /// Read on the session's queue only, one call at a time, as FoundationNetworking does.
    final class FileBodyStream: InputStream {
        // The descriptor and counts are used by FoundationNetworking's queue alone; `failure`, locked, is
        // read once the transfer has ended.
        private let path: String
        private let length: Int?
        private var descriptor: Int32 = -1
        private var sent = 0
        private var status: Stream.Status = .notOpen
        private let failureLock = Locked<NetworkError?>(nil)

        /// Why the body could not be sent whole, once the stream has refused to go on: the file could not be
        /// opened or read, or it is shorter than the length announced.
        var failure: NetworkError? { failureLock.withLock { $0 } }

        /// A stream of the file at `url`; with `length`, exactly that many bytes or a failure.
        init(url: URL, length: Int?) {
            path = url.path
            self.length = length
            super.init(data: Data())
        }

        deinit { release() }

        override var streamStatus: Stream.Status { status }

        override var streamError: (any Error)? { failure }

        override func open() {
            guard status == .notOpen else { return }
            descriptor = openFile(path)
            if descriptor < 0 {
                fail("it cannot be opened for reading: \(String(cString: strerror(errno)))")
            } else {
                status = .open
            }
        }

        override func close() {
            release()
            if status != .error { status = .closed }
        }

        /// Closes the file, once: at the body's end or failure (FoundationNetworking never closes the stream).
        private func release() {
            if descriptor >= 0 { _ = closeFile(descriptor) }
            descriptor = -1
        }

        /// True until the last byte has been read: FoundationNetworking ends the body when this is false, so it
        /// is true after a failure too, for the next read to report it.
        override var hasBytesAvailable: Bool { status != .atEnd && status != .closed }

        override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
            guard status == .open, maxLength > 0 else { return status == .error ? -1 : 0 }
            let wanted = length.map { min(maxLength, $0 - sent) } ?? maxLength
            // The announced length is sent: bytes a file gained since are not part of this request.
            if wanted == 0 { return end() }
            var count: Int
            repeat { count = readFile(descriptor, buffer, wanted) } while count < 0 && errno == EINTR
            if count < 0 { return fail("reading it failed: \(String(cString: strerror(errno)))") }
            if count == 0 {
                if let length { return fail("the file became shorter while it was sent (\(sent) of \(length) bytes)") }
                return end()
            }
            sent += count
            return count
        }

        override func getBuffer(
            _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
        ) -> Bool { false }

        private func end() -> Int {
            release()
            status = .atEnd
            return 0
        }

        @discardableResult
        private func fail(_ reason: String) -> Int {
            release()
            failureLock.withLock { $0 = NetworkError.fileAccessFailed(path: path, reason: reason) }
            status = .error
            return -1
        }
    }

    // The C calls by other names: inside the stream, `open`, `read` and `close` are its own methods.
    private func openFile(_ path: String) -> Int32 { open(path, O_RDONLY | O_CLOEXEC) }
    private func readFile(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
        read(descriptor, buffer, count)
    }
    private func closeFile(_ descriptor: Int32) -> Int32 { close(descriptor) }
#endif
