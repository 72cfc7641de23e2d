import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("WebSocket frames: the rules a client applies to what a server sends")
struct WebSocketFrameReaderTests {
    typealias Frame = WebSocketFrameReader.Frame

    /// Frames read in order by a reader that takes messages of up to 16 bytes, and what each called for.
    struct Row: CustomStringConvertible, Sendable {
        let name: String
        let frames: [Frame]
        let expected: [String]

        var description: String { name }
    }

    static func text(_ text: String, fin: Bool = true, opcode: UInt8 = 1) -> Frame {
        Frame(fin: fin, opcode: opcode, payload: Data(text.utf8))
    }

    static func bytes(_ bytes: [UInt8], fin: Bool = true, opcode: UInt8) -> Frame {
        Frame(fin: fin, opcode: opcode, payload: Data(bytes))
    }

    static func close(_ code: UInt16, _ reason: [UInt8] = []) -> Frame {
        bytes([UInt8(code >> 8), UInt8(code & 0xFF)] + reason, opcode: 8)
    }

    static let rows: [Row] = [
        Row(name: "a text message in one frame", frames: [text("hello")], expected: ["text hello"]),
        Row(
            name: "a text message in three fragments, a ping between them",
            frames: [
                text("he", fin: false), bytes([1], opcode: 9), text("ll", fin: false, opcode: 0), text("o", opcode: 0),
            ],
            expected: ["none", "ping 1", "none", "text hello"]),
        Row(name: "a binary message", frames: [bytes([0, 255, 7], opcode: 2)], expected: ["binary 3"]),
        Row(name: "an empty text message", frames: [text("")], expected: ["text "]),
        Row(name: "a pong", frames: [bytes([], opcode: 10)], expected: ["pong 0"]),
        Row(
            name: "a close with a code and a reason", frames: [close(1000, Array("bye".utf8))],
            expected: ["close 1000 bye"]),
        Row(name: "a close with no payload", frames: [bytes([], opcode: 8)], expected: ["close 1005 "]),
        Row(name: "a close with an application's code", frames: [close(4999)], expected: ["close 4999 "]),
        Row(
            name: "a character split between fragments",
            frames: [bytes([0xE2, 0x82], fin: false, opcode: 1), bytes([0xAC], opcode: 0)],
            expected: ["none", "text €"]),
        Row(
            name: "a message of exactly the limit", frames: [bytes(Array(repeating: 1, count: 16), opcode: 2)],
            expected: ["binary 16"]),
        // Broken rules.
        Row(
            name: "a reserved bit", frames: [Frame(opcode: 1, reservedBits: 0b100, payload: Data())],
            expected: ["fail 1002"]),
        Row(
            name: "a masked frame", frames: [Frame(opcode: 2, masked: true, payload: Data([1]))],
            expected: ["fail 1002"]),
        Row(name: "a reserved data opcode", frames: [bytes([], opcode: 3)], expected: ["fail 1002"]),
        Row(name: "a reserved control opcode", frames: [bytes([], opcode: 0xB)], expected: ["fail 1002"]),
        Row(name: "a fragmented ping", frames: [bytes([], fin: false, opcode: 9)], expected: ["fail 1002"]),
        Row(
            name: "a ping of 126 bytes", frames: [bytes(Array(repeating: 0, count: 126), opcode: 9)],
            expected: ["fail 1002"]),
        Row(name: "a continuation with no message begun", frames: [text("x", opcode: 0)], expected: ["fail 1002"]),
        Row(
            name: "a new message inside a fragmented one", frames: [text("a", fin: false), text("b")],
            expected: ["none", "fail 1002"]),
        Row(
            name: "a message over the limit, in fragments",
            frames: [
                bytes(Array(repeating: 1, count: 10), fin: false, opcode: 2),
                bytes(Array(repeating: 1, count: 7), opcode: 0),
            ], expected: ["none", "fail 1009"]),
        Row(
            name: "text that is not UTF-8, refused at its first fragment",
            frames: [bytes([0xCE, 0xBA, 0xFF], fin: false, opcode: 1)], expected: ["fail 1007"]),
        Row(
            name: "text that ends inside a character", frames: [bytes([0xE2, 0x82], opcode: 1)], expected: ["fail 1007"]
        ),
        Row(name: "a close with a 1-byte payload", frames: [bytes([3], opcode: 8)], expected: ["fail 1002"]),
        Row(name: "a close with the code 1005, which is never sent", frames: [close(1005)], expected: ["fail 1002"]),
        Row(name: "a close with the reserved code 2999", frames: [close(2999)], expected: ["fail 1002"]),
        Row(name: "a close with the code 999", frames: [close(999)], expected: ["fail 1002"]),
        Row(name: "a close whose reason is not UTF-8", frames: [close(1000, [0xC0, 0x80])], expected: ["fail 1007"]),
        Row(
            name: "every frame after a failure fails", frames: [bytes([], opcode: 3), text("fine")],
            expected: ["fail 1002", "fail 1002"]),
    ]

    static func name(_ action: WebSocketFrameReader.Action) -> String {
        switch action {
        case .none: "none"
        case .message(.text(let text)): "text \(text)"
        case .message(.binary(let data)): "binary \(data.count)"
        case .ping(let data): "ping \(data.count)"
        case .pong(let data): "pong \(data.count)"
        case .compressedMessage(let isText, let data): "compressed \(isText ? "text" : "binary") \(data.count)"
        case .close(let code, let reason): "close \(code.rawValue) \(reason)"
        case .fail(let code, _): "fail \(code.rawValue)"
        }
    }

    @Test("each frame calls for what the rules say", arguments: rows)
    func reads(_ row: Row) {
        var reader = WebSocketFrameReader(maximumMessageBytes: 16)
        #expect(row.frames.map { Self.name(reader.read($0)) } == row.expected)
    }

    @Test("with permessage-deflate agreed on, RSV1 marks a compressed message on its first frame only")
    func compressedFrames() {
        var reader = WebSocketFrameReader(maximumMessageBytes: 16, acceptsCompressedMessages: true)
        #expect(reader.read(Frame(fin: false, opcode: 1, reservedBits: 0b100, payload: Data([1, 2]))) == .none)
        #expect(
            reader.read(Frame(opcode: 0, payload: Data([0xFF])))
                == .compressedMessage(isText: true, Data([1, 2, 0xFF])))
        #expect(
            reader.read(Frame(opcode: 2, reservedBits: 0b100, payload: Data([7])))
                == .compressedMessage(isText: false, Data([7])))
        #expect(reader.read(Frame(opcode: 2, payload: Data([7]))) == .message(.binary(Data([7]))))
        // Inflated, a text message must be UTF-8 and within the limit.
        #expect(reader.inflated(Data("héllo".utf8), isText: true) == .message(.text("héllo")))
        #expect(Self.name(reader.inflated(Data([0xC0, 0x80]), isText: true)) == "fail 1007")
        #expect(Self.name(reader.inflated(Data(count: 17), isText: false)) == "fail 1009")
        // RSV1 on a continuation, on a control frame, or RSV2: broken rules.
        for frames in [
            [Frame(fin: false, opcode: 1, payload: Data()), Frame(opcode: 0, reservedBits: 0b100, payload: Data())],
            [Frame(opcode: 9, reservedBits: 0b100, payload: Data())],
            [Frame(opcode: 1, reservedBits: 0b010, payload: Data())],
        ] {
            var reader = WebSocketFrameReader(maximumMessageBytes: 16, acceptsCompressedMessages: true)
            #expect(frames.map { Self.name(reader.read($0)) }.last == "fail 1002")
        }
    }

    @Test(
        "UTF-8 is checked byte by byte across pieces: overlong forms, surrogates and code points past U+10FFFF are refused",
        arguments: [
            ([0x41, 0xC3, 0xA9], true), ([0xF0, 0x9F, 0x98, 0x80], true), ([0xEF, 0xBF, 0xBF], true),
            ([0xF4, 0x8F, 0xBF, 0xBF], true), ([0xC0, 0x80], false), ([0xC1, 0xBF], false),
            ([0xE0, 0x80, 0x80], false),
            ([0xED, 0xA0, 0x80], false), ([0xF4, 0x90, 0x80, 0x80], false), ([0xF5], false), ([0x80], false),
            ([0xE2, 0x28, 0xA1], false),
        ] as [([UInt8], Bool)])
    func utf8(_ bytes: [UInt8], valid: Bool) {
        var whole = UTF8Validator()
        #expect(whole.take(bytes, final: true) == valid)
        // The same bytes one at a time say the same.
        var piecewise = UTF8Validator()
        var result = true
        for (index, byte) in bytes.enumerated() where result {
            result = piecewise.take([byte], final: index == bytes.count - 1)
        }
        #expect(result == valid)
    }

    @Test("a close frame's payload: the code, then the reason cut on a character's boundary to fit 125 bytes")
    func closePayload() {
        #expect(WebSocketFrameReader.closePayload(.goingAway, reason: "") == Data([0x03, 0xE9]))
        let long = String(repeating: "é", count: 100)
        let payload = WebSocketFrameReader.closePayload(.normalClosure, reason: long)
        #expect(payload.count == 124)  // 2 + 61 × 2 bytes: a 62nd "é" would pass 125
        #expect(String(data: payload.dropFirst(2), encoding: .utf8) == String(repeating: "é", count: 61))
        #expect(WebSocketFrameReader.closePayload(.abnormalClosure, reason: "x").isEmpty)
        var reader = WebSocketFrameReader(maximumMessageBytes: 16)
        #expect(
            Self.name(reader.read(Frame(opcode: 8, payload: payload)))
                == "close 1000 \(String(repeating: "é", count: 61))")
    }
}

@Suite("WebSocket tasks in the pool, over a transport the test drives", .timeLimit(.minutes(1)))
struct WebSocketPoolTests {
    static let endpoint = TestEndpoint(baseURL: "wss://chat.example.com", path: "room")

    /// A pool over a ``HoldingTransport`` with a socket the server has opened, as the transfer at 0.
    static func openSocket(
        _ configuration: TaskPool.Configuration = .init(), id: String? = nil, options: WebSocketOptions = .init()
    ) async throws -> (HoldingTransport, TaskPool, WebSocket) {
        let transport = HoldingTransport()
        var configuration = configuration
        configuration.transport = transport
        let pool = TaskPool(configuration: configuration)
        let opening = immediately { try await pool.webSocket(Self.endpoint, id: id, options: options) }
        await transport.starts.reaches(1)  // at once, unless interceptors adapt the request first
        transport.open(0)
        return (transport, pool, try await opening.value)
    }

    @Test(
        "an open socket is a task under its id; messages come in order; a send reaches the connection; a normal close ends both"
    )
    func openSendReceiveClose() async throws {
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        let opening = immediately { try await pool.webSocket(Self.endpoint, id: "chat") }
        #expect(transport.starts.count == 1)
        #expect(transport.open(0, headers: ["Sec-WebSocket-Protocol": "chat.v2"]))
        let socket = try await opening.value
        #expect(socket.response.statusCode == 101)
        #expect(socket.subprotocol == "chat.v2")
        #expect(pool.task(id: "chat") === socket.task)
        #expect(pool.activeTasks.map(\.id) == ["chat"])
        try await socket.send("hello")
        try await socket.send(Data([1, 2]))
        #expect(transport.socket(0)?.sent == [.text("hello"), .binary(Data([1, 2]))])
        #expect(transport.push(.text("one"), at: 0))
        #expect(transport.push(.binary(Data([9])), at: 0))
        transport.serverCloses(0, code: .normalClosure, reason: "bye")
        var received: [WebSocketMessage] = []
        for try await message in socket { received.append(message) }
        #expect(received == [.text("one"), .binary(Data([9]))])
        #expect(socket.closeCode == .normalClosure)
        #expect(socket.closeReason == "bye")
        #expect(socket.task.state == .completed)
        #expect(socket.task.bytesReceived == 4)
        #expect(pool.activeTasks.isEmpty)
        await #expect(throws: NetworkError.self) { try await socket.send("late") }
    }

    @Test(
        "the inspector shows an open socket's last 20 messages, oldest first, payloads redacted and cut as bodies are; a pool without one keeps none"
    )
    func inspectedMessages() async throws {
        let inspector = PoolInspector(bodyPreviewLimit: 32)
        let (transport, _, socket) = try await Self.openSocket(.init(inspector: inspector), id: "chat")
        let json = #"{"items":[1,2,3,4,5,6,7,8,9,10,11,12]}"#
        try await socket.send(#"{"password":"pa55-SECRET"}"#)
        #expect(transport.push(.text(String(repeating: "abcdefgh", count: 8)), at: 0))
        #expect(transport.push(.text(json), at: 0))
        #expect(transport.push(.binary(Data([1, 2, 3])), at: 0))
        let messages = try #require(inspector.task(id: "chat")?.details?.recentMessages)
        #expect(messages.map(\.direction) == [.sent, .received, .received, .received])
        #expect(messages.map(\.isText) == [true, true, true, false])
        #expect(messages.map(\.size) == [26, 64, json.utf8.count, 3])
        #expect(
            messages.map(\.payload) == [
                #"{"password":"<redacted>"}"#, String(repeating: "abcdefgh", count: 4) + "… <32 more bytes>",
                "<\(json.utf8.count) bytes, not shown: over the inspector's preview limit of 32 bytes>",
                "<3 bytes, binary>",
            ])
        #expect(zip(messages, messages.dropFirst()).allSatisfy { $0.at <= $1.at })
        for number in 0..<30 { #expect(transport.push(.text("m\(number)"), at: 0)) }
        let kept = try #require(inspector.task(id: "chat")?.details?.recentMessages)
        #expect(kept.map(\.payload) == (10..<30).map { "m\($0)" })
        // A pool without an inspector keeps none.
        let (_, plain, other) = try await Self.openSocket(id: "plain")
        try await other.send("not kept")
        #expect(plain.task(id: "plain")?.recentFrames.isEmpty == true)
        #expect(plain.task(id: "plain")?.snapshot.socket?.messagesSent == 1)
    }

    @Test("a paused pool opens no socket until it resumes; one cancelled meanwhile never starts")
    func pausedPool() async throws {
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        pool.pause()
        let later = immediately { try await pool.webSocket(Self.endpoint, id: "later") }
        let dropped = immediately { try await pool.webSocket(Self.endpoint, id: "dropped") }
        var tries = 0
        while pool.queuedCount < 2, tries < 200 {
            tries += 1
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(pool.queuedCount == 2)
        #expect(transport.starts.count == 0)
        #expect(pool.activeTaskSnapshots.map(\.phase) == ["queued", "queued"])
        #expect(pool.activeTaskSnapshots.map(\.queuePosition) == [1, 2])
        #expect(pool.cancel(id: "dropped"))
        await #expect(throws: NetworkError.self) { try await dropped.value }
        pool.resume()
        await transport.starts.reaches(1)
        #expect(transport.open(0))
        let socket = try await later.value
        #expect(socket.task.id == "later")
        #expect(transport.starts.count == 1)
        await socket.close()
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("two readers at once take turns: each message goes to one of them, none twice or lost; both end at the close")
    func twoReaders() async throws {
        let (transport, _, socket) = try await Self.openSocket()
        let readers = (0..<2).map { _ in
            Task {
                var read: [WebSocketMessage] = []
                for try await message in socket { read.append(message) }
                return read
            }
        }
        // Both readers waiting before the first message (else one could read everything alone).
        try await Task.sleep(for: .milliseconds(50))
        for number in 0..<100 { #expect(transport.push(.text("m\(number)"), at: 0)) }
        transport.serverCloses(0, code: .normalClosure)
        var all: [String] = []
        for reader in readers {
            for case .text(let text) in try await reader.value { all.append(text) }
        }
        #expect(all.sorted() == (0..<100).map { "m\($0)" }.sorted())
        #expect(socket.task.state == .completed)
    }

    @Test("cancel by id sends going away, ends the task cancelled once, and its reader throws cancelled")
    func cancelByID() async throws {
        let logger = InMemoryLogger()
        let (transport, pool, socket) = try await Self.openSocket(.init(logger: logger), id: "live")
        #expect(pool.cancel(id: "live"))
        #expect(transport.socket(0)?.closes == ["1001 "])
        #expect(transport.socket(0)?.cancels == 1)
        do {
            for try await _ in socket {}
            Issue.record("the reader did not throw")
        } catch {
            #expect((error as? NetworkError)?.isCancelled == true)
        }
        #expect(logger.count(.cancelled) == 1)
        #expect(logger.count(.finished) + logger.count(.failed) == 0)
        #expect(pool.activeTasks.isEmpty)
        #expect(!pool.cancel(id: "live"))
    }

    @Test("the caller's close waits for the server's answer; the task ends finished, its code the one sent")
    func callerCloses() async throws {
        let (transport, pool, socket) = try await Self.openSocket()
        await socket.close(.normalClosure, reason: "done")
        #expect(transport.socket(0)?.closes == ["1000 done"])
        #expect(socket.task.state == .completed)
        #expect(socket.closeCode == .normalClosure)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("a close by the server with another code fails the reader with that code")
    func abnormalClose() async throws {
        let (transport, pool, socket) = try await Self.openSocket()
        transport.push(.text("last"), at: 0)
        transport.serverCloses(0, code: .internalServerError, reason: "oops")
        var iterator = socket.makeAsyncIterator()
        #expect(try await iterator.next() == .text("last"))
        do {
            _ = try await iterator.next()
            Issue.record("the reader did not throw")
        } catch NetworkError.transport(let error as WebSocketError) {
            #expect(error == .closed(.internalServerError, reason: "oops"))
        }
        #expect(socket.closeCode == .internalServerError)
        #expect(socket.task.state == .failed)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("an open socket takes no slot: with one task per host, a request to its host runs beside it")
    func takesNoSlot() async throws {
        let (transport, pool, socket) = try await Self.openSocket(.init(maximumTasksPerHost: 1), id: "socket")
        let request = immediately {
            try await pool.send(TestEndpoint(baseURL: "https://chat.example.com", path: "history"), id: "history")
        }
        #expect(transport.starts.count == 2)
        #expect(pool.task(id: "history")?.phase == .sending)
        transport.answer(at: 1)
        #expect(try await request.value.statusCode == 200)
        #expect(socket.task.state == .running)
        pool.cancelAll()
    }

    @Test("an opening answered with another status fails as that status, with its body; nothing is left open")
    func refusedOpening() async throws {
        let transport = HoldingTransport()
        let pool = TaskPool(configuration: .init(transport: transport))
        let opening = immediately { try await pool.webSocket(Self.endpoint, id: "denied") }
        transport.answer(.json(#"{"error":"no"}"#, statusCode: 403), at: 0)
        do {
            _ = try await opening.value
            Issue.record("the opening did not fail")
        } catch NetworkError.httpStatus(let response) {
            #expect(response.statusCode == 403)
            #expect(String(decoding: response.body, as: UTF8.self) == #"{"error":"no"}"#)
        }
        #expect(pool.activeTasks.isEmpty)
    }

    // MARK: Reconnection

    static let lost = NetworkError.transport(WebSocketError.closed(.abnormalClosure, reason: "lost"))

    /// One row: a failure the delivery is told of, and the wait it asks for (`nil`: it does not open again).
    struct Reopening: CustomTestStringConvertible, Sendable {
        enum Event: Sendable {
            case opened
            case message
            case failed(NetworkError)
            case closedByApp
        }
        let name: String
        let events: [Event]
        /// The answer to each `failed` event, in order.
        let waits: [TimeInterval?]
        var testDescription: String { name }
    }

    static func response(_ status: Int) -> NetworkError {
        let url = URL(string: "wss://chat.example.com/room")!
        let head = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: [:])!
        return .httpStatus(Response(request: URLRequest(url: url), head: ResponseHead(head), body: Data(), duration: 0))
    }

    static let reopenings: [Reopening] = [
        .init(name: "before the first opening: left to the retriers", events: [.failed(lost)], waits: [nil]),
        .init(
            name: "a lost connection waits 1, 2, 4, then 8 (the cap), then gives up after 5 in a row",
            events: [.opened] + Array(repeating: .failed(lost), count: 6), waits: [1, 2, 4, 8, 8, nil]),
        .init(
            name: "a message from the server starts the count again",
            events: [.opened, .failed(lost), .failed(lost), .opened, .message, .failed(lost)], waits: [1, 2, 1]),
        .init(
            name: "an opening alone does not: a server that accepts and drops is given up on",
            events: [.opened, .failed(lost), .opened, .failed(lost)], waits: [1, 2]),
        .init(
            name: "codes that ask to come back later, no pong, a transport error, a timeout, 5xx, 408 and 429",
            events: [.opened]
                + [1001, 1011, 1012].map {
                    .failed(.transport(WebSocketError.closed(WebSocketCloseCode(rawValue: $0), reason: "")))
                } + [
                    .message, .failed(.transport(WebSocketError.pongTimeout(seconds: 1))), .message,
                    .failed(.transport(URLError(.networkConnectionLost))), .message, .failed(.timedOut(seconds: 5)),
                    .message, .failed(response(503)), .message, .failed(response(408)), .message,
                    .failed(response(429)),
                ],
            waits: [1, 2, 4, 1, 1, 1, 1, 1, 1]),
        .init(
            name: "never after a cancel, a protocol violation, too large a message, another code, 401 or 404",
            events: [
                .opened, .failed(.cancelled), .failed(.transport(WebSocketError.protocolViolation(.protocolError, ""))),
                .failed(.responseTooLarge(limit: 10)),
                .failed(.transport(WebSocketError.closed(WebSocketCloseCode(rawValue: 4001), reason: ""))),
                .failed(.transport(WebSocketError.closed(.normalClosure, reason: ""))), .failed(response(401)),
                .failed(response(404)),
            ],
            waits: [nil, nil, nil, nil, nil, nil, nil]),
        .init(
            name: "never once the app has closed it", events: [.opened, .closedByApp, .failed(lost)], waits: [nil]),
    ]

    @Test("a socket's delivery decides when it opens again", arguments: reopenings)
    func reopens(_ row: Reopening) throws {
        let policy = WebSocketReconnection(maximumAttempts: 5, initialDelay: 1, maximumDelay: 8, jitter: 0.5)
        let delivery = SocketDelivery(options: .init(reconnection: policy), random: { 0 })
        let url = try #require(URL(string: "wss://chat.example.com/room"))
        let head = try #require(HTTPURLResponse(url: url, statusCode: 101, httpVersion: "HTTP/1.1", headerFields: [:]))
        var waits: [TimeInterval?] = []
        var opens = 0
        for event in row.events {
            switch event {
            case .opened:
                try delivery.begin(head)
                opens += 1
                #expect(delivery.reopened == (opens > 1))
            case .message: try delivery.receive(message: .text("x"))
            case .failed(let failure): waits.append(delivery.reopens(after: failure))
            case .closedByApp: #expect(delivery.close() == nil)
            }
        }
        #expect(waits == row.waits)
        #expect(delivery.reconnections == max(0, opens - 1))
        #expect(SocketDelivery(options: .init(), random: { 0 }).reopens(after: Self.lost) == nil)
    }

    @Test(
        "a reconnection's wait: doubled from the first, capped, jittered within its share both ways, never below 0",
        arguments: [
            (1, 0.0, 0.5), (2, 0.0, 1.0), (3, 0.0, 2.0), (7, 0.0, 10.0), (63, 0.0, 10.0), (Int.max, 0.0, 10.0),
            (1, 1.0, 0.6), (1, -1.0, 0.4), (3, 1.0, 2.4), (7, 1.0, 10.0), (7, -1.0, 8.0), (0, 0.0, 0.5),
            (2, 7.0, 1.2),
        ])
    func reconnectionDelay(attempt: Int, random: Double, expected: TimeInterval) {
        let policy = WebSocketReconnection(initialDelay: 0.5, maximumDelay: 10, jitter: 0.2)
        #expect(abs(policy.delay(before: attempt, random: random) - expected) < 1e-9)
    }

    @Test("out-of-range settings are brought within range, never a crash")
    func reconnectionSettings() {
        let odd = WebSocketReconnection(maximumAttempts: -3, initialDelay: -1, maximumDelay: .nan, jitter: 9)
        #expect(odd == WebSocketReconnection(maximumAttempts: 0, initialDelay: 0, maximumDelay: 30, jitter: 1))
        #expect(WebSocketReconnection(initialDelay: 5, maximumDelay: 1).maximumDelay == 5)
    }

    @Test(
        "a lost connection opens again: one message sequence across connections, retrying and reconnected logged, the opening through the interceptors"
    )
    func reconnects() async throws {
        let logger = InMemoryLogger()
        let (transport, pool, socket) = try await Self.openSocket(
            .init(logger: logger), id: "live",
            options: .init(reconnection: WebSocketReconnection(initialDelay: 0, jitter: 0)))
        #expect(transport.push(.text("one"), at: 0))
        transport.drop(0)
        await transport.starts.reaches(2)
        #expect(socket.task.state == .running)
        await #expect(throws: NetworkError.self) { try await socket.send("while away") }
        #expect(transport.open(1))
        #expect(transport.push(.text("two"), at: 1))
        try await socket.send("back")
        #expect(transport.socket(1)?.sent == [.text("back")])
        transport.serverCloses(1, code: .normalClosure)
        var received: [WebSocketMessage] = []
        for try await message in socket { received.append(message) }
        #expect(received == [.text("one"), .text("two")])
        #expect(socket.reconnections == 1)
        #expect(socket.task.state == .completed)
        #expect(socket.task.attempts == 2)
        #expect(logger.count(.retrying) == 1)
        #expect(logger.count(.reconnected) == 1)
        #expect(logger.events(.reconnected).first?.attempt == 2)
        #expect(logger.count(.finished) == 1)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test(
        "a reconnection answered 401 renews the credential and opens; a 404 ends the socket with that status"
    )
    func reconnectionStatuses() async throws {
        let auth = AuthenticationInterceptor(authenticator: TokenAuthenticator { _ in "fresh" }, credential: "stale")
        let (transport, pool, socket) = try await Self.openSocket(
            .init(interceptors: [auth]),
            options: .init(reconnection: WebSocketReconnection(initialDelay: 0, jitter: 0)))
        transport.drop(0)
        await transport.starts.reaches(2)
        #expect(transport.requests[1].value(forHTTPHeaderField: "Authorization") == "Bearer stale")
        transport.answer(.json("{}", statusCode: 401), at: 1)
        await transport.starts.reaches(3)
        #expect(transport.requests[2].value(forHTTPHeaderField: "Authorization") == "Bearer fresh")
        #expect(transport.open(2))
        #expect(transport.push(.text("back"), at: 2))
        var iterator = socket.makeAsyncIterator()
        #expect(try await iterator.next() == .text("back"))
        #expect(socket.reconnections == 1)
        transport.drop(2)
        await transport.starts.reaches(4)
        transport.answer(.json("{}", statusCode: 404), at: 3)
        do {
            _ = try await iterator.next()
            Issue.record("the reader did not fail")
        } catch NetworkError.httpStatus(let response) {
            #expect(response.statusCode == 404)
        }
        #expect(socket.task.state == .failed)
        #expect(pool.activeTasks.isEmpty)
    }

    @Test(
        "a socket's row: open, its messages and bytes each way, its last activity; not open while it waits to open again; in the inspector too"
    )
    func row() async throws {
        let inspector = PoolInspector()
        let (transport, pool, socket) = try await Self.openSocket(
            .init(inspector: inspector), id: "row",
            options: .init(reconnection: WebSocketReconnection(initialDelay: 60, jitter: 0)))
        let opened = try #require(pool.activeTaskSnapshots.first)
        #expect(opened.phase == "open")
        #expect(opened.socket == SocketActivity(isOpen: true))
        try await socket.send("hello")
        try await socket.send(Data([1, 2, 3]))
        #expect(transport.push(.text("héllo"), at: 0))
        let row = try #require(pool.activeTaskSnapshots.first?.socket)
        let counts: [Int] = [row.messagesSent, row.bytesSent, row.messagesReceived, row.bytesReceived]
        #expect(counts == [2, 8, 1, 6])
        #expect(row.isOpen)
        #expect(row.lastActivity != nil)
        #expect(row.summary == "sent 2 (8 B), received 1 (6 B)")
        #expect(pool.debugDescription.contains("sent 2 (8 B), received 1 (6 B)"))
        #expect(inspector.inspection.active.first?.socket == row)
        transport.drop(0)
        let away = try #require(pool.activeTaskSnapshots.first)
        #expect(away.phase == "backing off before attempt 2")
        #expect(away.socket?.isOpen == false)
        #expect(away.socket?.messagesReceived == 1)
        pool.cancelAll()
    }

    @Test("no reconnection after a cancel, or when the app closes while the socket waits to open again")
    func noReconnection() async throws {
        let logger = InMemoryLogger()
        let options = WebSocketOptions(reconnection: WebSocketReconnection(initialDelay: 60, jitter: 0))
        let (transport, pool, cancelled) = try await Self.openSocket(
            .init(logger: logger), id: "cancelled", options: options)
        #expect(pool.cancel(id: "cancelled"))
        #expect(cancelled.task.state == .cancelled)
        let second = immediately { try await pool.webSocket(Self.endpoint, id: "closed", options: options) }
        transport.open(1)
        let closed = try await second.value
        transport.drop(1)
        // The wait of 60 s has begun: the close ends the socket now, as cancelled.
        await closed.close()
        #expect(closed.task.state == .cancelled)
        #expect(transport.starts.count == 2)
        #expect(logger.count(.retrying) == 1)
        #expect(logger.count(.reconnected) == 0)
        #expect(pool.activeTasks.isEmpty)
    }

    static let refusing: [(any Transport, String)] = [
        (StubTransport { _, _ in .json("{}") }, "StubTransport"), (URLSessionTransport(), "URLSessionTransport"),
    ]

    @Test(
        "a transport without sockets refuses at once, naming itself and the transport that opens them",
        arguments: 0..<2)
    func refusedByTransport(_ index: Int) async {
        let (transport, name) = Self.refusing[index]
        let pool = TaskPool(configuration: .init(transport: transport))
        do {
            _ = try await pool.webSocket(Self.endpoint)
            Issue.record("the opening did not fail")
        } catch NetworkError.transport(let error as WebSocketError) {
            guard case .unsupported(let transport, _) = error else {
                Issue.record("not unsupported: \(error)")
                return
            }
            #expect(transport == name)
            #expect(error.description.contains("NIOTransport"))
            #if canImport(FoundationNetworking)
                if name == "URLSessionTransport" { #expect(error.description.contains("libcurl")) }
            #endif
        } catch {
            Issue.record("another error: \(error)")
        }
        #expect(pool.activeTasks.isEmpty)
    }

    @Test("a socket through a RecordingTransport: its messages pass, and its opening is in the HAR once it ends")
    func recorded() async throws {
        let transport = HoldingTransport()
        let recorder = HARRecorder()
        let pool = TaskPool(configuration: .init(transport: RecordingTransport(transport, recorder: recorder)))
        let opening = immediately { try await pool.webSocket(Self.endpoint) }
        transport.open(0)
        let socket = try await opening.value
        #expect(transport.push(.text("through"), at: 0))
        transport.serverCloses(0, code: .normalClosure)
        var received: [WebSocketMessage] = []
        for try await message in socket { received.append(message) }
        #expect(received == [.text("through")])
        #expect(recorder.har.log.entries.map(\.response.status) == [101])
        #expect(recorder.har.log.entries.first?.request.url == "wss://chat.example.com/room")
    }
}
