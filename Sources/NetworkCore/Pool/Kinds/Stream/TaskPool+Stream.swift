import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TaskPool {
    /// Sends the endpoint's request and returns as soon as the response's head has arrived, with its body
    /// to read as it comes: as chunks, or as lines (``ResponseStream/lines``).
    ///
    /// The task stays in ``activeTasks`` until the body has been read to its end, the stream is let go,
    /// or the task is cancelled. A stream that has begun is never sent again by a retry; one that fails
    /// before its head arrives is retried as any send.
    /// - Throws: any ``NetworkError`` as ``send(_:id:)`` throws it, for the head; reading the body throws
    ///   the task's ``NetworkError`` if the transfer fails midway.
    public func stream(_ endpoint: some Endpoint, id: String? = nil) async throws(NetworkError) -> ResponseStream {
        ResponseStream(try await OpenStream(endpoint, id: id, pool: self) { _ in RawChunks() })
    }

    /// Subscribes to the endpoint's Server-Sent Events (`text/event-stream`): returns once the stream is
    /// open, with its events to read as they come.
    ///
    /// When the connection drops or the server closes it, the pool's interceptors decide whether to
    /// connect again, as for any retry (a ``RetryPolicy`` among them retries a lost connection); the next
    /// attempt sends `Last-Event-ID` with the last id received and waits the reconnection time the server
    /// asked for with `retry:`, if any, instead of the policy's delay. An event left unfinished by a drop
    /// is dropped, as the standard says; a status 204 ends the stream for good. An answer that is not
    /// `text/event-stream` is not an event stream: it fails with ``NetworkError/decodingFailed(_:)``, and a
    /// ``RetryPolicy`` does not connect again.
    /// ```swift
    /// for try await event in try await pool.events(Feed.live) where event.event == "price" {
    ///     print(event.data)
    /// }
    /// ```
    public func events(_ endpoint: some Endpoint, id: String? = nil) async throws(NetworkError) -> ServerSentEvents {
        ServerSentEvents(
            try await OpenStream(endpoint, id: id, pool: self, decoder: ServerSentEventParser.init(limit:)))
    }
}
