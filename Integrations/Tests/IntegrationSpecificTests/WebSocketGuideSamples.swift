// swift-format-ignore-file
// The samples are shown in Docs/WebSockets.md as written here (GuideSamplesTests), so they keep its layout.
import Foundation
import NetworkCore
import NetworkCoreNIO

/// The samples of Docs/WebSockets.md, compiled with the tests (never run: they name a server that does
/// not exist; WebSocketNIOTests runs the same calls against real servers on the loopback address).
func webSocketGuide() async throws {
    // GUIDE-BEGIN
    enum Chat: Endpoint {
        case room(String)

        var baseURL: String { "wss://chat.example.com" }
        var path: String {
            switch self {
            case .room(let name): "rooms/\(name)"
            }
        }
    }

    let transport = NIOTransport()
    let pool = TaskPool(configuration: .init(transport: transport))

    let socket = try await pool.webSocket(Chat.room("swift"), id: "chat")
    try await socket.send("hello")
    for try await message in socket {
        switch message {
        case .text(let text): print("text:", text)
        case .binary(let data): print(data.count, "bytes")
        }
    }
    print("closed:", socket.closeCode?.description ?? "without a close frame")

    try await socket.send(Data([1, 2, 3]))
    await socket.close(.normalClosure, reason: "done")

    print(pool.activeTasks.map(\.id))  // ["chat"] while it is open
    pool.cancel(id: "chat")  // a close frame saying 1001 going away, then the connection dropped

    let options = WebSocketOptions(
        subprotocols: ["chat.v2", "chat.v1"], maximumMessageBytes: 1 << 20, pingInterval: 15, pongTimeout: 5)
    let live = try await pool.webSocket(Chat.room("live"), options: options)
    print(live.subprotocol ?? "the server chose no subprotocol")

    let lean = WebSocketOptions(
        compression: WebSocketCompression(clientContextTakeover: false, serverMaximumWindowBits: 10))
    let ticker = try await pool.webSocket(Chat.room("ticker"), options: lean)
    try await ticker.send("subscribe")

    let feed = try await pool.webSocket(
        Chat.room("scores"), id: "scores",
        options: WebSocketOptions(reconnection: WebSocketReconnection(maximumAttempts: 8, maximumDelay: 60)))
    for try await message in feed {
        print(message, "after", feed.reconnections, "reconnections")
    }

    do {
        for try await message in live { print(message) }
    } catch NetworkError.transport(let error as WebSocketError) {
        print("the socket failed:", error)
    } catch NetworkError.responseTooLarge(let limit) {
        print("a message of over", limit, "bytes")
    }
    // GUIDE-END
}
