import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A download's file: the body is written to a partial file beside the destination, which replaces the
/// destination once the whole body has arrived. A cut transfer is resumed where it stopped, with
/// `Range` and `If-Range`, when the server named a validator; the partial file is removed when the task
/// ends without completing, so nothing is left behind. A download task's ``Delivery``.
final class DownloadFile: Delivery, @unchecked Sendable {
    // @unchecked Sendable: `state` is `Locked`; the rest is immutable.
    /// Where the file goes.
    let destination: URL
    /// Where the body is written until it is complete: a hidden file in the destination's directory, so
    /// that moving it into place is one rename on the same volume.
    let partial: URL

    private struct State {
        var handle: FileHandle?
        var written = 0
        /// `ETag` (strong only) or `Last-Modified` of the answer being written, for `If-Range`.
        var validator: String?
        var completed = false
    }
    private let state = Locked(State())

    /// Checks that `destination` can be written: its directory exists and it is not a directory itself.
    init(destination: URL) throws(NetworkError) {
        self.destination = destination
        let directory = destination.deletingLastPathComponent()
        partial = directory.appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString).download")
        var isDirectory: ObjCBool = false
        guard destination.isFileURL else {
            throw .fileAccessFailed(path: destination.absoluteString, reason: "the destination is not a file URL")
        }
        if FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .fileAccessFailed(path: destination.path, reason: "the destination is a directory")
        }
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw .fileAccessFailed(path: destination.path, reason: "its directory does not exist")
        }
        guard FileManager.default.isWritableFile(atPath: directory.path) else {
            throw .fileAccessFailed(path: destination.path, reason: "its directory is not writable")
        }
    }

    /// Where the next attempt resumes, when some was written and the server named a validator: the bytes
    /// kept, and the validator for `If-Range`; else `nil` (the next attempt starts over).
    private var resumePoint: (kept: Int, validator: String)? {
        state.withLock { state in state.written > 0 ? state.validator.map { (state.written, $0) } : nil }
    }

    /// The bytes the next attempt keeps: those written, when it will ask for the rest.
    var keptBytes: Int { resumePoint?.kept ?? 0 }

    /// Asks for the rest of the body with `Range` and `If-Range`, when the next attempt will not start over.
    func prepare(_ request: inout URLRequest) {
        guard let (kept, validator) = resumePoint else { return }
        request.setValue("bytes=\(kept)-", forHTTPHeaderField: "Range")
        request.setValue(validator, forHTTPHeaderField: "If-Range")
    }

    /// The file's place, for the response.
    var fileURL: URL? { destination }

    /// An accepted answer begins: a 206 whose range starts where the file ends continues it; anything
    /// else starts it over.
    func begin(_ response: HTTPURLResponse) throws(NetworkError) {
        let continues = response.statusCode == 206
        let start = ContentRange(response.value(forHTTPHeaderField: "Content-Range"))?.first
        try state.withLock { state throws(NetworkError) in
            try? state.handle?.close()
            state.handle = nil
            if continues, let start, start == state.written, state.written > 0 {
                state.handle = try open(truncating: false)
                do { try state.handle?.seekToEnd() } catch { throw failure(error) }
            } else {
                state.handle = try open(truncating: true)
                state.written = 0
                let etag = response.value(forHTTPHeaderField: "ETag")
                state.validator =
                    etag.flatMap { $0.hasPrefix("W/") ? nil : $0 }
                    ?? response.value(forHTTPHeaderField: "Last-Modified")
            }
        }
    }

    /// Appends body bytes.
    func write(_ data: Data) throws(NetworkError) {
        try state.withLock { state throws(NetworkError) in
            guard let handle = state.handle else { return }
            do { try handle.write(contentsOf: data) } catch { throw failure(error) }
            state.written += data.count
        }
    }

    /// The attempt's transfer ended: whole, the file takes the destination's place; cut, it stays for the
    /// next attempt to continue.
    func transferEnded(complete: Bool) throws(NetworkError) {
        if complete { try self.complete() } else { pause() }
    }

    /// The whole body has arrived: the file takes the destination's place.
    private func complete() throws(NetworkError) {
        try state.withLock { state throws(NetworkError) in
            do { try state.handle?.close() } catch { throw failure(error) }
            state.handle = nil
            // rename(2) replaces a file at the destination in one step, on the same volume.
            guard rename(partial.path, destination.path) == 0 else {
                let reason = String(cString: strerror(errno))
                throw .fileAccessFailed(
                    path: destination.path, reason: "could not move the download into place: \(reason)")
            }
            state.completed = true
        }
    }

    /// The attempt ended without the whole body: the file stays for the next attempt to continue.
    private func pause() {
        state.withLock { state in
            try? state.handle?.close()
            state.handle = nil
        }
    }

    /// The task has ended: a partial file left is removed.
    func taskEnded(with outcome: DataTask.Outcome) {
        state.withLock { state in
            try? state.handle?.close()
            state.handle = nil
            if !state.completed { try? FileManager.default.removeItem(at: partial) }
        }
    }

    private func open(truncating: Bool) throws(NetworkError) -> FileHandle {
        if truncating || !FileManager.default.fileExists(atPath: partial.path) {
            guard FileManager.default.createFile(atPath: partial.path, contents: nil) else {
                throw .fileAccessFailed(path: destination.path, reason: "could not create a file beside it")
            }
        }
        do { return try FileHandle(forWritingTo: partial) } catch { throw failure(error) }
    }

    private func failure(_ error: any Error) -> NetworkError {
        .fileAccessFailed(path: destination.path, error: error)
    }
}
