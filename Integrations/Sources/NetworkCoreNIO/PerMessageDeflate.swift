import CompressNIO
import Foundation
import NIOCore
import NIOHTTP1
import NetworkCore

/// permessage-deflate (RFC 7692) as agreed on with a server: its answer to the offer read and checked, and a
/// compressor and a decompressor (zlib's raw DEFLATE, through CompressNIO) kept for the socket's life, each
/// reset after every message when its side keeps no context.
final class PerMessageDeflate {
    /// What the server agreed to.
    struct Agreement: Equatable {
        var serverNoContextTakeover = false
        var clientNoContextTakeover = false
        var serverMaximumWindowBits = 15
        var clientMaximumWindowBits = 15
    }

    let agreement: Agreement
    private let compressor: ZlibCompressor
    private let decompressor: ZlibDecompressor

    init(_ agreement: Agreement) throws {
        self.agreement = agreement
        // zlib's raw DEFLATE takes windows of 9 bits or more (it makes 8 a 9): for a window of 8 bits the
        // client writes stored blocks only, which refer to nothing before them and fit any window.
        let bits = agreement.clientMaximumWindowBits
        compressor = try ZlibCompressor(
            algorithm: .deflate,
            configuration: ZlibConfiguration(
                windowSize: Int32(max(9, bits)), compressionLevel: bits < 9 ? 0 : -1, memoryLevel: 8))
        // A window as large as any the server may use inflates what any smaller one wrote.
        decompressor = try ZlibDecompressor(algorithm: .deflate, windowSize: 15)
    }

    /// The server's `Sec-WebSocket-Extensions` answer to `offer`: `nil` when it agreed to no extension;
    /// throws when it answered with anything the client did not offer or cannot take.
    static func agreement(from headers: HTTPHeaders, offer: WebSocketCompression?) throws -> Agreement? {
        let values = headers[canonicalForm: "Sec-WebSocket-Extensions"]
        guard !values.isEmpty else { return nil }
        guard let offer, values.count == 1 else {
            throw WebSocketError.upgradeRefused("the server agreed to an extension that was not offered")
        }
        var agreement = Agreement()
        var seen: Set<String> = []
        let parts = values[0].components(separatedBy: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        guard parts.first?.lowercased() == "permessage-deflate" else {
            throw WebSocketError.upgradeRefused(
                "the server agreed to the extension \(values[0]), which was not offered")
        }
        for part in parts.dropFirst() {
            let equals = part.firstIndex(of: "=")
            let name = String(part[..<(equals ?? part.endIndex)]).trimmingCharacters(in: .whitespaces).lowercased()
            let value = equals.map {
                String(part[part.index(after: $0)...]).trimmingCharacters(in: .whitespaces)
                    .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            guard seen.insert(name).inserted else {
                throw WebSocketError.upgradeRefused("permessage-deflate's \(name) is given twice")
            }
            switch (name, value) {
            case ("server_no_context_takeover", nil): agreement.serverNoContextTakeover = true
            case ("client_no_context_takeover", nil): agreement.clientNoContextTakeover = true
            case ("server_max_window_bits", let value?):
                guard let bits = Int(value), (8...offer.serverMaximumWindowBits).contains(bits) else {
                    throw WebSocketError.upgradeRefused("permessage-deflate's server_max_window_bits=\(value)")
                }
                agreement.serverMaximumWindowBits = bits
            case ("client_max_window_bits", let value?):
                guard let bits = Int(value), (8...15).contains(bits) else {
                    throw WebSocketError.upgradeRefused("permessage-deflate's client_max_window_bits=\(value)")
                }
                agreement.clientMaximumWindowBits = bits
            default:
                throw WebSocketError.upgradeRefused(
                    "permessage-deflate's parameter \(part) is not one the client takes")
            }
        }
        if !offer.serverContextTakeover { agreement.serverNoContextTakeover = true }
        if !offer.clientContextTakeover { agreement.clientNoContextTakeover = true }
        return agreement
    }

    /// A message's payload compressed, without the flush's closing `00 00 FF FF`.
    func compress(_ payload: ByteBuffer, allocator: ByteBufferAllocator) throws -> ByteBuffer {
        var input = payload
        var output = allocator.buffer(capacity: compressor.maxSize(from: input) + 16)
        try compressor.deflate(from: &input, to: &output, flush: .sync)
        if output.readableBytes >= 4, output.getBytes(at: output.writerIndex - 4, length: 4) == [0, 0, 0xFF, 0xFF] {
            output.moveWriterIndex(to: output.writerIndex - 4)
        }
        if agreement.clientNoContextTakeover { try compressor.reset() }
        return output
    }

    /// A compressed message's payload inflated; throws ``NetworkError/responseTooLarge(limit:)`` once it
    /// passes `limit` bytes, and a protocol violation when it is not DEFLATE.
    func inflate(_ payload: Data, limit: Int) throws -> Data {
        var input = ByteBuffer(bytes: payload)
        input.writeBytes([0, 0, 0xFF, 0xFF])
        var output = ByteBuffer()
        output.reserveCapacity(min(max(payload.count * 4, 1024), limit + 1))
        // Each round either takes input or fills the output, which then grows: bounded by the limit.
        var rounds = 0
        while input.readableBytes > 0, rounds < 100_000 {
            rounds += 1
            if output.writableBytes == 0 { output.reserveCapacity(output.capacity * 2) }
            let taken = input.readableBytes
            do {
                try decompressor.inflate(from: &input, to: &output)
            } catch let error as CompressNIOError where error == .bufferOverflow {
                // The output is full: it grows, and inflating goes on.
            } catch let error as CompressNIOError where error == .inputBufferOverflow {
                break
            } catch {
                throw WebSocketError.protocolViolation(.invalidPayload, "a compressed message that does not inflate")
            }
            if output.readableBytes > limit { throw NetworkError.responseTooLarge(limit: limit) }
            if input.readableBytes == taken, output.writableBytes > 0 {
                throw WebSocketError.protocolViolation(.invalidPayload, "a compressed message that does not inflate")
            }
        }
        if agreement.serverNoContextTakeover { try decompressor.reset() }
        return Data(output.readableBytesView)
    }
}
