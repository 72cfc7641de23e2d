import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A stream body sent over `URLSession`: written to a temporary file as it is produced, then sent from
/// that file, which is removed when the transfer ends. FoundationNetworking reads a body stream on its
/// session's queue and would hold every transfer of the session while a stream waits for its next
/// chunk; a file it reads as it sends.
final class SpooledUpload: TransportControl, @unchecked Sendable {
    // @unchecked Sendable: `state` is `Locked`; the rest is set once, before the spooling starts.
    private struct State {
        var cancelled = false
        var paused = false
        var entry: SessionDelegate.Entry?
        var spooling: Task<Void, Never>?
    }
    private let state = Locked(State())

    /// Spools `chunks` (`length` bytes, when known), then sends `request` with them as its body through
    /// `delegate` in `session`, reporting to `events`.
    init(
        _ request: URLRequest, chunks: AsyncThrowingStream<Data, any Error>, length: Int?,
        delegate: SessionDelegate, session: URLSession, events: TransportEvents
    ) {
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent(".networkcore-upload-\(UUID().uuidString)")
        let spooling = Task { [self] in
            let written: Int
            do {
                written = try await Self.spool(chunks, to: file, length: length)
            } catch {
                try? FileManager.default.removeItem(at: file)
                return events.fail(Task.isCancelled ? URLError(.cancelled) : error)
            }
            var request = request
            request.setValue(String(written), forHTTPHeaderField: "Content-Length")
            let events = events.reporting(to: RemovingFileReceiver(file: file, passingTo: events.receiver))
            guard !state.withLock({ $0.cancelled }) else { return events.fail(URLError(.cancelled)) }
            let entry = delegate.start(request, body: .file(file), in: session, events: events)
            let (cancelled, paused) = state.withLock { state in
                state.entry = entry
                return (state.cancelled, state.paused)
            }
            if cancelled { entry.cancel() } else if paused { entry.pauseReceiving() }
        }
        state.withLock { $0.spooling = spooling }
    }

    /// Writes the chunks to `file`; returns how many bytes, which must be `length` when it is known.
    private static func spool(
        _ chunks: AsyncThrowingStream<Data, any Error>, to file: URL, length: Int?
    ) async throws -> Int {
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw NetworkError.fileAccessFailed(path: file.path, reason: "the upload's spool file cannot be made")
        }
        let handle: FileHandle
        do { handle = try FileHandle(forWritingTo: file) } catch {
            throw NetworkError.fileAccessFailed(path: file.path, error: error)
        }
        defer { try? handle.close() }
        var written = 0
        for try await chunk in chunks {
            try Task.checkCancellation()
            do { try handle.write(contentsOf: chunk) } catch {
                throw NetworkError.fileAccessFailed(path: file.path, error: error)
            }
            written += chunk.count
        }
        if let length, written != length {
            throw NetworkError.encodingFailed(
                reason: "the request body stream gave \(written) bytes, not the \(length) it announced")
        }
        return written
    }

    func cancel() {
        let (entry, spooling) = state.withLock { state in
            state.cancelled = true
            return (state.entry, state.spooling)
        }
        spooling?.cancel()
        entry?.cancel()
    }

    func pauseReceiving() {
        state.withLock { state in
            state.paused = true
            return state.entry
        }?.pauseReceiving()
    }

    func resumeReceiving() {
        state.withLock { state in
            state.paused = false
            return state.entry
        }?.resumeReceiving()
    }
}

/// Passes every report of a transfer on, and removes a file once the transfer ends, however it ends: its
/// end, or the next receiver taking no more.
private final class RemovingFileReceiver: TransportReceiver, @unchecked Sendable {
    // @unchecked Sendable: `removed` is locked; the rest is immutable.
    private let file: URL
    private let next: any TransportReceiver
    private let removed = Locked(false)

    init(file: URL, passingTo next: any TransportReceiver) {
        self.file = file
        self.next = next
    }

    func receive(head: HTTPURLResponse) -> Bool { removingUnless(next.receive(head: head)) }
    func receive(body: Data) -> Bool { removingUnless(next.receive(body: body)) }
    func sent(totalBytes: Int, expected: Int?) { next.sent(totalBytes: totalBytes, expected: expected) }
    func redirected(statusCode: Int, to url: URL?) { next.redirected(statusCode: statusCode, to: url) }
    func carries(requestsAtOnce count: Int) { next.carries(requestsAtOnce: count) }

    func finish() {
        remove()
        next.finish()
    }

    func fail(_ error: any Error) {
        remove()
        next.fail(error)
    }

    private func removingUnless(_ accepted: Bool) -> Bool {
        if !accepted { remove() }
        return accepted
    }

    private func remove() {
        let first = removed.withLock { removed in
            defer { removed = true }
            return !removed
        }
        if first { try? FileManager.default.removeItem(at: file) }
    }
}
