import Foundation

/// The rules a WebSocket client applies to the frames a server sends (RFC 6455 §5): it joins fragments
/// into messages and says what each frame calls for, or which rule it broke. A value with no I/O, for a
/// transport that reads frames itself (NIOTransport does, with SwiftNIO's frame decoder).
///
/// A frame is refused, with the close code to send, when: a reserved bit is set (no extension was agreed
/// on), its opcode is reserved, it is masked (servers never mask), a control frame is fragmented or longer
/// than 125 bytes, a continuation comes with no message begun or a new message begins before the last
/// ended, a message grows past the limit, a text message (checked as it arrives, so that a bad byte is
/// refused at once) or a close reason is not UTF-8, or a close frame has a 1-byte payload or a code that
/// may not be sent.
public struct WebSocketFrameReader: Sendable {
    /// One frame as read off the wire, its payload unmasked.
    public struct Frame: Sendable, Equatable {
        /// Whether it ends its message.
        public var fin: Bool
        /// The opcode: 0 continuation, 1 text, 2 binary, 8 close, 9 ping, 10 pong; others are reserved.
        public var opcode: UInt8
        /// The three reserved bits, RSV1 the highest (`0b100`).
        public var reservedBits: UInt8
        /// Whether the frame came masked.
        public var masked: Bool
        /// Its payload.
        public var payload: Data

        /// A frame.
        public init(fin: Bool = true, opcode: UInt8, reservedBits: UInt8 = 0, masked: Bool = false, payload: Data) {
            self.fin = fin
            self.opcode = opcode
            self.reservedBits = reservedBits
            self.masked = masked
            self.payload = payload
        }
    }

    /// What a frame calls for.
    public enum Action: Sendable, Equatable {
        /// Nothing yet: a fragment of a message not ended.
        case none
        /// A whole message arrived.
        case message(WebSocketMessage)
        /// A ping: answer with a pong carrying the same bytes.
        case ping(Data)
        /// A pong: the connection is alive.
        case pong(Data)
        /// A whole message the server compressed (permessage-deflate, RFC 7692), its payload as it came:
        /// the transport inflates it, then checks it with ``inflated(_:isText:)``.
        case compressedMessage(isText: Bool, Data)
        /// The server closes with this code (``WebSocketCloseCode/noStatusReceived`` when it gave none) and
        /// reason: answer with a close frame, then the socket is closed.
        case close(WebSocketCloseCode, reason: String)
        /// The frame broke a rule: send a close frame with this code, then drop the connection.
        case fail(WebSocketCloseCode, String)
    }

    /// The most bytes one message may have (compressed, as it comes, and once inflated).
    public let maximumMessageBytes: Int
    /// Whether permessage-deflate was agreed on: a data message's first frame may then set RSV1, for a
    /// compressed message.
    public let acceptsCompressedMessages: Bool
    private var message: (opcode: UInt8, bytes: Data, compressed: Bool)?
    private var validator = UTF8Validator()
    private var failed = false

    /// A reader that takes messages of up to `maximumMessageBytes`, compressed ones too when
    /// `acceptsCompressedMessages` (permessage-deflate was agreed on).
    public init(maximumMessageBytes: Int, acceptsCompressedMessages: Bool = false) {
        self.maximumMessageBytes = max(0, maximumMessageBytes)
        self.acceptsCompressedMessages = acceptsCompressedMessages
    }

    /// Reads the next frame. Once a frame has failed, every later one fails too: the connection is over.
    public mutating func read(_ frame: Frame) -> Action {
        guard !failed else { return .fail(.protocolError, "a frame after the connection failed") }
        let action = apply(frame)
        if case .fail = action {
            failed = true
            message = nil
        }
        return action
    }

    private mutating func apply(_ frame: Frame) -> Action {
        // RSV1 marks a compressed message, on its first frame only, once permessage-deflate was agreed on.
        let compressed =
            frame.reservedBits == 0b100 && acceptsCompressedMessages && (frame.opcode == 1 || frame.opcode == 2)
        if frame.reservedBits != 0, !compressed {
            return .fail(.protocolError, "a reserved bit is set, with no extension agreed for it")
        }
        if frame.masked { return .fail(.protocolError, "a frame from the server is masked") }
        switch frame.opcode {
        case 0x8, 0x9, 0xA:
            guard frame.fin else { return .fail(.protocolError, "a control frame is fragmented") }
            guard frame.payload.count <= 125 else { return .fail(.protocolError, "a control frame is over 125 bytes") }
            switch frame.opcode {
            case 0x9: return .ping(frame.payload)
            case 0xA: return .pong(frame.payload)
            default: return Self.close(frame.payload)
            }
        case 0x1, 0x2:
            guard message == nil else { return .fail(.protocolError, "a new message began before the last ended") }
            message = (frame.opcode, Data(), compressed)
            validator = UTF8Validator()
            return append(frame)
        case 0x0:
            guard message != nil else { return .fail(.protocolError, "a continuation frame with no message begun") }
            return append(frame)
        default:
            return .fail(.protocolError, "the reserved opcode \(frame.opcode)")
        }
    }

    private mutating func append(_ frame: Frame) -> Action {
        guard let (opcode, start, compressed) = message else { return .none }
        guard frame.payload.count <= maximumMessageBytes - start.count else {
            return .fail(.messageTooBig, "a message of over \(maximumMessageBytes) bytes")
        }
        if opcode == 0x1, !compressed {
            guard validator.take(frame.payload, final: frame.fin) else {
                return .fail(.invalidPayload, "a text message that is not UTF-8")
            }
        }
        // The first fragment is kept as it came: a message in one frame is not copied.
        var bytes = start
        if bytes.isEmpty { bytes = frame.payload } else { bytes.append(frame.payload) }
        guard frame.fin else {
            message = (opcode, bytes, compressed)
            return .none
        }
        message = nil
        if compressed { return .compressedMessage(isText: opcode == 0x1, bytes) }
        return .message(opcode == 0x1 ? .text(String(decoding: bytes, as: UTF8.self)) : .binary(bytes))
    }

    /// A compressed message once its transport inflated it: the message, or the rule it broke (a message
    /// past the limit, text that is not UTF-8).
    public func inflated(_ bytes: Data, isText: Bool) -> Action {
        guard bytes.count <= maximumMessageBytes else {
            return .fail(.messageTooBig, "a message of over \(maximumMessageBytes) bytes, inflated")
        }
        guard isText else { return .message(.binary(bytes)) }
        var validator = UTF8Validator()
        guard validator.take(bytes, final: true) else {
            return .fail(.invalidPayload, "a text message that is not UTF-8")
        }
        return .message(.text(String(decoding: bytes, as: UTF8.self)))
    }

    /// A close frame's code and reason, or the rule it broke.
    static func close(_ payload: Data) -> Action {
        guard !payload.isEmpty else { return .close(.noStatusReceived, reason: "") }
        guard payload.count >= 2 else { return .fail(.protocolError, "a close frame with a 1-byte payload") }
        let start = payload.startIndex
        let code = WebSocketCloseCode(rawValue: UInt16(payload[start]) << 8 | UInt16(payload[start + 1]))
        guard code.mayBeSent else {
            return .fail(.protocolError, "the close code \(code.rawValue), which may not be sent")
        }
        let reason = payload.dropFirst(2)
        var validator = UTF8Validator()
        guard validator.take(reason, final: true) else {
            return .fail(.invalidPayload, "a close reason that is not UTF-8")
        }
        return .close(code, reason: String(decoding: reason, as: UTF8.self))
    }

    /// The payload of a close frame with `code` and `reason` (the reason cut, on a character's boundary, to
    /// fit a control frame's 125 bytes); empty for a code that may not be sent.
    public static func closePayload(_ code: WebSocketCloseCode, reason: String) -> Data {
        guard code.mayBeSent else { return Data() }
        var payload = Data([UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)])
        var kept = Substring(reason)
        while kept.utf8.count > 123 { kept = kept.dropLast() }
        payload.append(contentsOf: kept.utf8)
        return payload
    }
}

/// Checks UTF-8 as it arrives, piece by piece (RFC 3629: no overlong forms, no surrogates, nothing past
/// U+10FFFF): a piece may end inside a character, which the next completes.
struct UTF8Validator: Sendable {
    /// Continuation bytes the character under way still needs.
    private var needed = 0
    /// The range the next continuation byte must fall in (it narrows after some lead bytes).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// Takes the next bytes; `final` when no more follow. Returns `false` at the first byte that cannot be
    /// UTF-8 (or, when final, a character left unfinished).
    mutating func take(_ bytes: some Sequence<UInt8>, final: Bool) -> Bool {
        for byte in bytes {
            if needed == 0 {
                switch byte {
                case 0x00...0x7F: continue
                case 0xC2...0xDF: needed = 1
                case 0xE0: (needed, lower, upper) = (2, 0xA0, 0xBF)
                case 0xE1...0xEC, 0xEE...0xEF: needed = 2
                case 0xED: (needed, lower, upper) = (2, 0x80, 0x9F)
                case 0xF0: (needed, lower, upper) = (3, 0x90, 0xBF)
                case 0xF1...0xF3: needed = 3
                case 0xF4: (needed, lower, upper) = (3, 0x80, 0x8F)
                default: return false
                }
            } else {
                guard byte >= lower, byte <= upper else { return false }
                (lower, upper) = (0x80, 0xBF)
                needed -= 1
            }
        }
        return !final || needed == 0
    }
}
