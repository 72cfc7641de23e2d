import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response whose body arrives as a sequence of chunks, from ``TaskPool/stream(_:id:)``.
///
/// The status and headers are there as soon as it is returned; iterate for the body, or read
/// ``lines``. The transfer runs as the task ``task`` of the pool: cancel it by id, or stop iterating
/// and let go of the stream. When the consumer falls behind by more than a megabyte, the transfer is
/// paused (where the transport can) until it catches up. Iterate from one Swift task at a time;
/// errors thrown are ``NetworkError``s.
/// ```swift
/// let stream = try await pool.stream(Logs.tail)
/// for try await line in stream.lines { print(line) }
/// ```
public final class ResponseStream: AsyncSequence, Sendable {
    /// A chunk of the body, as it arrived.
    public typealias Element = Data

    let open: OpenStream<RawChunks>

    init(_ open: OpenStream<RawChunks>) { self.open = open }

    /// The response's status and headers.
    public var httpResponse: HTTPURLResponse { open.httpResponse }
    /// The task in the pool that carries the transfer.
    public var task: DataTask { open.task }

    /// The HTTP status.
    public var statusCode: Int { httpResponse.statusCode }

    /// The value of a response header, its name in any case.
    public func header(_ name: String) -> String? { httpResponse.value(forHTTPHeaderField: name) }

    /// Reads the chunks in order.
    public func makeAsyncIterator() -> Iterator { Iterator(open: open) }

    /// The body as lines of UTF-8 text, without their `\n` or `\r\n`; a last line without a line break
    /// is yielded at the end. A line longer than the pool's ``TaskPool/Configuration/maximumResponseBytes``
    /// (or the endpoint's) ends the task with ``NetworkError/responseTooLarge(limit:)``: a server cannot
    /// fill memory with a line that never ends.
    public var lines: Lines { Lines(stream: self) }

    /// Reads the chunks of a ``ResponseStream``.
    public struct Iterator: AsyncIteratorProtocol {
        let open: OpenStream<RawChunks>

        /// The next chunk, `nil` at the end; throws the task's ``NetworkError``.
        public mutating func next() async throws -> Data? { try await open.next() }
    }

    /// The lines of a ``ResponseStream``.
    public struct Lines: AsyncSequence, Sendable {
        /// A line, without its line break.
        public typealias Element = String
        let stream: ResponseStream

        /// Reads the lines in order.
        public func makeAsyncIterator() -> Iterator {
            Iterator(chunks: stream.makeAsyncIterator(), splitter: LineSplitter(limit: stream.open.elementLimit))
        }

        /// Reads the lines of a ``ResponseStream``.
        public struct Iterator: AsyncIteratorProtocol {
            var chunks: ResponseStream.Iterator
            var splitter: LineSplitter
            var ready: [String] = []
            var ended = false

            /// The next line, `nil` at the end; throws the task's ``NetworkError``, and
            /// ``NetworkError/responseTooLarge(limit:)`` for a line longer than the pool's
            /// ``TaskPool/Configuration/maximumResponseBytes``, which ends the task.
            public mutating func next() async throws -> String? {
                while ready.isEmpty {
                    if ended { return nil }
                    if let chunk = try await chunks.next() {
                        do {
                            ready = try splitter.lines(in: chunk).reversed()
                        } catch {
                            chunks.open.end(with: error)
                            throw error
                        }
                    } else {
                        ended = true
                        ready = splitter.finish().map { [$0] } ?? []
                    }
                }
                return ready.removeLast()
            }
        }
    }
}

/// Splits bytes into lines at `\n`, `\r\n` or `\r`, keeping a line that has not ended for the next chunk.
struct LineSplitter: Sendable {
    private var pending: [UInt8] = []
    private var afterCR = false
    /// The longest line kept, in bytes.
    let limit: Int

    init(limit: Int = .max) { self.limit = limit }

    /// The lines these bytes end; throws ``NetworkError/responseTooLarge(limit:)`` when a line grows past
    /// ``limit``, however the bytes were cut into chunks.
    mutating func lines(in data: Data) throws(NetworkError) -> [String] {
        var lines: [String] = []
        for byte in data {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }  // the \n of a \r\n
            }
            switch byte {
            case 0x0A:
                lines.append(String(decoding: pending, as: UTF8.self))
                pending.removeAll(keepingCapacity: true)
            case 0x0D:
                lines.append(String(decoding: pending, as: UTF8.self))
                pending.removeAll(keepingCapacity: true)
                afterCR = true
            default:
                guard pending.count < limit else { throw .responseTooLarge(limit: limit) }
                pending.append(byte)
            }
        }
        return lines
    }

    /// The last line, if the bytes ended without a line break.
    mutating func finish() -> String? {
        defer { pending.removeAll() }
        return pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
    }

    /// Whether part of a line is kept.
    var hasPending: Bool { !pending.isEmpty }

    /// Drops what is kept.
    mutating func reset() {
        pending.removeAll()
        afterCR = false
    }
}
