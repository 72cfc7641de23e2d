import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TaskPool {
    /// Downloads the endpoint's response body to the file at `destination`, as it arrives, and returns
    /// the response (its ``Response/body`` empty, ``Response/fileURL`` the destination).
    ///
    /// The body is written beside the destination and moved into place once complete, replacing a file
    /// that was there; nothing is left behind when the task fails or is cancelled. When an interceptor
    /// (a ``RetryPolicy``) retries a transfer cut midway, the next attempt asks for the rest only
    /// (`Range`, with `If-Range` when the server gave an `ETag` or `Last-Modified`) and continues the file.
    /// An answer with a status the pool does not accept is not written: it fails the task as
    /// ``NetworkError/httpStatus(_:)`` with its body in memory.
    ///
    /// `progress`, when given, is called with the task's ``TransferProgress`` as the body arrives (the
    /// newest value when calls fall behind), on another thread, and with its last value before this
    /// method returns; others can follow the task by id with ``DataTask/progressUpdates``.
    /// ```swift
    /// let file = FileManager.default.temporaryDirectory.appendingPathComponent("poster.jpg")
    /// try await pool.download(Images.poster(path: "/abc.jpg"), to: file) { progress in
    ///     print(progress.bytesReceived, "of", progress.bytesExpected ?? -1)
    /// }
    /// ```
    /// - Throws: ``NetworkError/fileAccessFailed(path:reason:)`` when the destination cannot be written
    ///   (its directory is missing or read-only, it is a directory, the disk is full); any other
    ///   ``NetworkError`` as ``send(_:id:)`` throws it.
    @discardableResult
    public func download(
        _ endpoint: some Endpoint, to destination: URL, id: String? = nil,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(NetworkError)
        -> Response
    {
        let file = try DownloadFile(destination: destination)
        let sent = try submit(endpoint, id: id, delivery: file)
        return try await wait(for: sent, progress: progress).get()
    }
}
