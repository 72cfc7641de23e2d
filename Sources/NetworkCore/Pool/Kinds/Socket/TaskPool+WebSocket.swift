import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TaskPool {
    /// Opens a WebSocket to the endpoint (its URL `ws`, `wss`, `http` or `https`) and returns once it is
    /// open: a task of the pool under `id`, as any other.
    ///
    /// The opening request goes through the pool's and the endpoint's interceptors (credentials, headers),
    /// and is retried as any request until the socket is open (a `401` renews the credential once). An
    /// open socket takes none of the pool's slots, so that it never holds back the requests to its host,
    /// and has no deadline: its keep-alive (``WebSocketOptions/pingInterval``) watches it.
    ///
    /// The pool's transport must open sockets: `NIOTransport` does on every platform, `URLSessionTransport`
    /// on Apple platforms. Others refuse at once
    /// with ``NetworkError/transport(_:)`` and ``WebSocketError/unsupported(transport:reason:)``.
    /// ```swift
    /// let socket = try await pool.webSocket(Chat.room("swift"), id: "chat")
    /// try await socket.send("hello")
    /// pool.cancel(id: "chat")  // a close frame, 1001 going away
    /// ```
    /// - Throws: ``NetworkError/httpStatus(_:)`` when the server answers the opening request with
    ///   another status, any other ``NetworkError`` as ``send(_:id:)`` throws it.
    public func webSocket(
        _ endpoint: some Endpoint, id: String? = nil, options: WebSocketOptions = WebSocketOptions()
    ) async throws(NetworkError) -> WebSocket {
        var options = options
        let limit = options.maximumMessageBytes ?? endpoint.maximumResponseBytes ?? configuration.maximumResponseBytes
        options.maximumMessageBytes = max(1, limit)
        let delivery = SocketDelivery(
            options: options,
            framePreview: configuration.inspector.map { min($0.bodyPreviewLimit, RecentFrames.kept) } ?? 0)
        let open = try await OpenStream(
            endpoint, id: id, pool: self, body: delivery.messages, delivery: delivery,
            elementLimit: max(1, limit))
        return WebSocket(open, delivery: delivery)
    }
}
