import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NetworkCore

/// Counts the bytes of a request body as the connection takes them, and reports them to the task.
package struct SentCounter: Sendable {
    private let report: @Sendable (_ total: Int) -> Void
    private let total = NIOLockedValueBox(0)

    /// Reports to `events`, of `expected` bytes when known.
    package init(events: TransportEvents, expected: Int?) {
        self.init { events.sent(totalBytes: $0, expected: expected) }
    }

    /// Reports each new total to `report`.
    package init(report: @escaping @Sendable (_ total: Int) -> Void) {
        self.report = report
    }

    package func add(_ count: Int) {
        report(
            total.withLockedValue { total in
                total += count
                return total
            })
    }
}

/// A sequence of byte buffers whose sizes are reported to a ``SentCounter`` as they are taken.
package struct CountedBuffers<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable
where Base.Element == ByteBuffer {
    let base: Base
    let counter: SentCounter

    package struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let counter: SentCounter

        package mutating func next() async throws -> ByteBuffer? {
            guard let buffer = try await base.next() else { return nil }
            counter.add(buffer.readableBytes)
            return buffer
        }
    }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), counter: counter)
    }
}

extension AsyncSequence where Self: Sendable, Element == ByteBuffer {
    package func counted(by counter: SentCounter) -> CountedBuffers<Self> {
        CountedBuffers(base: self, counter: counter)
    }
}

/// Bytes in memory, in pieces of `pieceSize`.
package struct DataPieces: AsyncSequence, Sendable {
    let data: Data
    let pieceSize: Int

    package init(data: Data, pieceSize: Int) {
        self.data = data
        self.pieceSize = pieceSize
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        let data: Data
        let pieceSize: Int
        var offset: Int

        package mutating func next() async -> ByteBuffer? {
            guard offset < data.endIndex else { return nil }
            let end = Swift.min(offset + pieceSize, data.endIndex)
            defer { offset = end }
            return ByteBuffer(bytes: data[offset..<end])
        }
    }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(data: data, pieceSize: pieceSize, offset: data.startIndex)
    }
}

/// A stream body's chunks as byte buffers; a stream that gives more or fewer bytes than it announced
/// fails typed, as it would over `URLSessionTransport`.
package struct StreamPieces: AsyncSequence, Sendable {
    let chunks: AsyncThrowingStream<Data, any Error>
    let length: Int?

    package init(chunks: AsyncThrowingStream<Data, any Error>, length: Int?) {
        self.chunks = chunks
        self.length = length
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: AsyncThrowingStream<Data, any Error>.AsyncIterator
        let length: Int?
        var given = 0

        package mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await chunks.next() else {
                if let length, given != length { throw mismatch(length) }
                return nil
            }
            given += chunk.count
            if let length, given > length { throw mismatch(length) }
            return ByteBuffer(bytes: chunk)
        }

        private func mismatch(_ length: Int) -> NetworkError {
            .encodingFailed(reason: "the request body stream gave \(given) bytes, not the \(length) it announced")
        }
    }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(chunks: chunks.makeAsyncIterator(), length: length)
    }
}

/// A file's contents in pieces, read on a thread of NIO's blocking pool as the connection takes them;
/// the file is opened by the first read and closed at its end, or when the request is dropped.
package struct FileChunks: AsyncSequence, Sendable {
    let file: URL
    let length: Int

    package init(file: URL, length: Int) {
        self.file = file
        self.length = length
    }

    package func makeAsyncIterator() -> FileReader { FileReader(path: file.path, length: length) }
}
