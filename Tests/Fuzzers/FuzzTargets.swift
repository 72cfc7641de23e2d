// NetworkCore's coverage-guided fuzz targets: each place that reads bytes from the network or a file.
// Built with libFuzzer (`-sanitize=fuzzer,address -D FUZZING`) by `Scripts/fuzz`, which picks a target with
// NETWORKCORE_FUZZ_TARGET; built without, as every test build does, it is a replayer: `Fuzzers TARGET FILE…`
// runs each file through the target once (the seed corpora and every crash kept as a regression case).
// A target must never crash, whatever the bytes; where it can check what it made, it does, and a wrong
// result is a crash (`fatalError`), which libFuzzer reports with the input.
import Foundation
import MovieDB

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The fuzz targets by name; `Tests/Fuzzers/Corpus/NAME` holds each one's seeds.
enum FuzzTargets {
    static let all: [String: @Sendable (Data) -> Void] = [
        "status": status, "models": models, "har": har, "request": request, "sse": serverSentEvents,
        "multipart": multipart, "headers": headerValues, "cacheEntry": cacheEntry, "webSocket": webSocketFrames,
        "durableWrite": durableWrite,
    ]

    /// The fields of an input: its bytes split at each 0 byte, as UTF-8 text.
    static func fields(_ data: Data, count: Int) -> [String] {
        var fields = data.split(separator: 0, maxSplits: count - 1, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        while fields.count < count { fields.append("") }
        return fields
    }

    /// A server's own code and message, read from any body by the default reader and by TMDB's.
    static func status(_ data: Data) {
        for reader in [JSONStatusReader(), .tmdb] {
            if reader.mayDescribeFailure(data) { _ = reader.status(in: data) }
        }
    }

    /// Every MovieDB model from any body, as `MovieService` decodes them.
    static func models(_ data: Data) {
        _ = try? DecodableParser<MoviePage>().parse(data)
        _ = try? DecodableParser<MovieDetails>().parse(data)
        _ = try? DecodableParser<VideoList>().parse(data)
        _ = try? DecodableParser<Movie>().parse(data)
        _ = try? DecodableParser<RequestToken>().parse(data)
        _ = try? DecodableParser<Session>().parse(data)
        _ = try? DecodableParser<GuestSession>().parse(data)
        _ = try? SuccessParser().parse(data)
    }

    /// A HAR file, loaded as `HARReplayTransport(contentsOf:)` loads it, then its entries replayed.
    static func har(_ data: Data) {
        guard let transport = try? HARReplayTransport(data: data) else { return }
        // Each of the first entries' own request, replayed: its recorded answer, or a typed error.
        for entry in transport.entries.prefix(8) {
            guard let url = URL(string: entry.request.url) else { continue }
            var request = URLRequest(url: url)
            request.httpMethod = entry.request.method
            request.httpBody = entry.request.postData.map { Data($0.text.utf8) }
            _ = try? transport.answer(to: request)
        }
    }

    /// An endpoint whose every field comes from the input: a request, or a typed error; never a crash.
    static func request(_ data: Data) {
        let field = fields(data, count: 6)
        let endpoint = FuzzedEndpoint(
            baseURL: field[0], path: field[1], method: HTTPMethod(rawValue: field[2]),
            headers: [field[3]: field[4]], query: [field[4]: field[5]], body: Data(field[5].utf8))
        guard let request = try? endpoint.urlRequest(defaultHeaders: TaskPool.Configuration.standardHeaders) else {
            return
        }
        // What was accepted must be what is sent: no line break in a header, a URL that parses.
        for (name, value) in request.allHTTPHeaderFields ?? [:]
        where (name + value).contains(where: { $0 == "\r" || $0 == "\n" }) {
            fatalError("a header with a line break was accepted: \(name)")
        }
        _ = TaskID.derive(from: request)
        _ = Redactor.default.redact(request.url)
        _ = request.cURLDescription()
    }

    /// A `text/event-stream` body, fed whole and again cut at every point the input's first byte names:
    /// the same events either way, or, under the size limit its first byte names, the same refusal; then
    /// the request of the next connection, and a reset.
    static func serverSentEvents(_ data: Data) {
        guard let first = data.first else { return }
        let body = data.dropFirst()
        let limit = first >> 4 == 0 ? Int.max : Int(first >> 4) * 4
        var whole = ServerSentEventParser(limit: limit)
        let once = try? whole.decode(Data(body))
        var pieces = ServerSentEventParser(limit: limit)
        var inPieces: [ServerSentEvent]? = []
        let step = Int(first % 16) + 1
        var start = body.startIndex
        while start < body.endIndex, let sofar = inPieces {
            let end = body.index(start, offsetBy: step, limitedBy: body.endIndex) ?? body.endIndex
            inPieces = (try? pieces.decode(Data(body[start..<end]))).map { sofar + $0 }
            start = end
        }
        guard (once == nil) == (inPieces == nil) else {
            fatalError(
                "the limit of \(limit) bytes refuses the body only when it arrives \(once == nil ? "whole" : "in pieces")"
            )
        }
        // Refused: the task ends there, and what the parser holds no longer matters.
        guard once != nil else {
            if limit == .max { fatalError("a body was refused with no limit") }
            return
        }
        guard once == inPieces, whole.lastEventID == pieces.lastEventID else {
            fatalError("events differ when the body arrives in pieces of \(step) bytes")
        }
        // The server's last id goes into the next connection's request: never with a line break or a NUL
        // (no header injection). A reconnection resets the parser: nothing left of an event.
        var request = URLRequest(url: URL(string: "http://fuzz.test/events")!)
        whole.prepare(&request)
        if let id = request.value(forHTTPHeaderField: "Last-Event-ID"),
            id.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" })
        {
            fatalError("Last-Event-ID with a line break or NUL: \(id.debugDescription)")
        }
        whole.reset()
        guard !whole.isMidEvent else { fatalError("a reset parser is still in an event") }
    }

    /// A form whose names and values come from the input: encoded with its boundary found in none of
    /// its parts, and as long as it says; or refused with a typed error.
    static func multipart(_ data: Data) {
        let field = fields(data, count: 4)
        let form: MultipartForm = [
            .text(field[0], field[1]), .data(field[2], Data(field[3].utf8), fileName: field[1], contentType: field[0]),
        ]
        guard let encoding = try? form.encoding() else { return }
        let reader = PartReader(encoding, chunkSize: 7)
        var body = Data()
        while let chunk = try? reader.next() { body.append(chunk) }
        guard body.count == encoding.length else { fatalError("\(body.count) bytes, not \(encoding.length)") }
        let delimiter = Data("--\(encoding.boundary)".utf8)
        for content in [field[1], field[3]] where Data(content.utf8).range(of: delimiter) != nil {
            fatalError("the boundary \(encoding.boundary) is in a part")
        }
    }

    /// The header values the pool reads: dates, `Retry-After`, `Cache-Control`, `Content-Range`.
    static func headerValues(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        // A date is read back from its IMF-fixdate form as the same date.
        if let date = HTTPDate.parse(text), let written = imfFixdate(date), HTTPDate.parse(written) != date {
            fatalError("\(text) reads as \(date), whose IMF-fixdate \(written) reads otherwise")
        }
        _ = RetryAfter.seconds(text)
        let control = CacheControl(text)
        _ = control.maxAge
        _ = ContentRange(text)
        // Redacted as a header's value, whatever comes before it: the key of a URL after a space is gone.
        let value = text + " https://example.com/p?api_key=SECRET1"
        let redacted = Redactor.default.redact(headerValue: value, named: "Link")
        if !text.contains("SECRET1"), redacted.contains("SECRET1") {
            fatalError("\(value) keeps its key once redacted: \(redacted)")
        }
    }

    /// `date` in IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), from its calendar fields in GMT (no date
    /// formatter: FoundationNetworking's leaks on some values); `nil` for a year before 1583 (Foundation's
    /// calendar is Julian before October 1582, HTTP's Gregorian throughout) or after 9999.
    static func imfFixdate(_ date: Date) -> String? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        let parts = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        guard let year = parts.year, (1583...9999).contains(year), let weekday = parts.weekday, let month = parts.month,
            let day = parts.day, let hour = parts.hour, let minute = parts.minute, let second = parts.second
        else { return nil }
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        let four = String(repeating: "0", count: 4 - String(year).count) + String(year)
        return
            "\(days[weekday - 1]), \(two(day)) \(months[month - 1]) \(four) \(two(hour)):\(two(minute)):\(two(second)) GMT"
    }

    /// A server's WebSocket frames, read by a client's `WebSocketFrameReader` (messages of up to 64 bytes):
    /// each frame is a byte of flags (FIN, the reserved bits, the opcode, as on the wire), a byte whose top
    /// bit says masked and whose rest is the payload's length (up to 127), then the payload. A text
    /// message is the UTF-8 it was sent as (an invalid byte would have come back repaired, not equal); a
    /// message is never over the limit; once a frame has failed, every later one fails.
    static func webSocketFrames(_ data: Data) {
        // An odd first byte: permessage-deflate was agreed on.
        var reader = WebSocketFrameReader(
            maximumMessageBytes: 64, acceptsCompressedMessages: data.first.map { $0 & 1 == 1 } ?? false)
        var bytes = data[...]
        var pending = Data()
        var failed = false
        while bytes.count >= 2 {
            let flags = bytes.removeFirst()
            let sizing = bytes.removeFirst()
            let payload = Data(bytes.prefix(Int(sizing & 0x7F)))
            bytes = bytes.dropFirst(payload.count)
            let frame = WebSocketFrameReader.Frame(
                fin: flags & 0x80 != 0, opcode: flags & 0x0F, reservedBits: (flags >> 4) & 0x7,
                masked: sizing & 0x80 != 0,
                payload: payload)
            if frame.opcode <= 2 { pending.append(payload) }
            let action = reader.read(frame)
            if failed, case .fail = action {} else if failed { fatalError("a frame was read after a failure") }
            switch action {
            case .fail: failed = true
            case .message(.text(let text)):
                guard Data(text.utf8) == pending else { fatalError("a text message is not the bytes it came as") }
                pending = Data()
            case .message(.binary(let message)):
                guard message == pending, message.count <= 64 else { fatalError("a binary message changed") }
                pending = Data()
            case .close(let code, let reason):
                // What is read writes back to a payload that reads the same.
                let written = WebSocketFrameReader.closePayload(code, reason: reason)
                if code != .noStatusReceived, WebSocketFrameReader.close(written) != action {
                    fatalError("a close frame does not read back")
                }
            case .compressedMessage(let isText, let payload):
                guard payload == pending, payload.count <= 64 else { fatalError("a compressed message changed") }
                pending = Data()
                // Taken as if it inflated to itself: text only when it is UTF-8, never over the limit.
                if case .message(.text(let text)) = reader.inflated(payload, isText: isText), Data(text.utf8) != payload
                {
                    fatalError("an inflated text message is not the bytes it came as")
                }
            case .none, .ping, .pong: break
            }
        }
    }

    /// A disk cache entry's file without its closing checksum, which is added, so that the fuzzer reaches
    /// the reader behind it: read, or a miss; what is read writes back to bytes that read the same. The
    /// bytes as they are (their own last 32 bytes as the checksum) are read too.
    static func cacheEntry(_ data: Data) {
        var digest = SHA256()
        digest.update(data)
        let signed = data + digest.finalize()
        let key = storedKey(in: data, magicLength: 20) ?? "GET https://api.example.com/1"
        if let entry = CachedResponse(decoding: signed, key: key) {
            guard CachedResponse(decoding: entry.encoded(key: key), key: key) == entry else {
                fatalError("an entry does not read back the same")
            }
        }
        _ = CachedResponse(decoding: data, key: key)
    }

    /// A durable write's file without its closing checksum, which is added, as ``cacheEntry(_:)`` does: read,
    /// or dropped; what is read writes back to bytes that read the same. The bytes as they are are read too.
    static func durableWrite(_ data: Data) {
        var digest = SHA256()
        digest.update(data)
        let signed = data + digest.finalize()
        let key = storedKey(in: data, magicLength: 28) ?? "0a"
        if let entry = DurableEntry(decoding: signed, key: key) {
            guard DurableEntry(decoding: entry.encoded(), key: key) == entry else {
                fatalError("a durable write does not read back the same")
            }
        }
        _ = DurableEntry(decoding: data, key: key)
    }

    /// The `key` of a store's file's JSON header, where its bytes hold one (a magic line of `magicLength`
    /// bytes, a length, JSON): "NetworkCore cache 1\n" is 20, "NetworkCore durable write 1\n" 28.
    static func storedKey(in data: Data, magicLength: Int) -> String? {
        let bytes = [UInt8](data)
        let start = magicLength + 8
        guard bytes.count > start else { return nil }
        let length = (0..<8).reduce(0) { $0 | Int(bytes[magicLength + $1]) << ($1 * 8) }
        guard length > 0, length <= bytes.count - start,
            let object = try? JSONSerialization.jsonObject(with: Data(bytes[start..<(start + length)]))
                as? [String: Any]
        else { return nil }
        return object["key"] as? String
    }
}

/// An endpoint made of the input's fields.
struct FuzzedEndpoint: Endpoint {
    let baseURL: String
    let path: String
    let method: HTTPMethod
    let headers: [String: String]
    let query: [String: String]
    let body: Data
    var task: HTTPTask {
        .parameters(url: query, body: ["value": String(decoding: body, as: UTF8.self)], bodyEncoder: FormBodyEncoder())
    }
}

#if FUZZING
    /// libFuzzer's entry: one input, through the target NETWORKCORE_FUZZ_TARGET names.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOne(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
        FuzzTargets.selected(start.map { Data(bytes: $0, count: count) } ?? Data())
        return 0
    }

    /// The program's start: SwiftPM names an executable's entry after its module, which libFuzzer's own
    /// `main` cannot be, so this hands the arguments to libFuzzer's driver (exported by the build with
    /// `--export-dynamic`, found by name).
    @_cdecl("Fuzzers_main")
    public func fuzzersMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
        typealias Driver =
            @convention(c) (
                UnsafeMutablePointer<CInt>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                Callback
            ) -> CInt
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "LLVMFuzzerRunDriver") else {
            fatalError("libFuzzer's driver is missing: build with -sanitize=fuzzer and --export-dynamic")
        }
        var count = argc
        var arguments = argv
        return unsafeBitCast(symbol, to: Driver.self)(&count, &arguments, fuzzOne)
    }

    extension FuzzTargets {
        static let selected: @Sendable (Data) -> Void = {
            let name = ProcessInfo.processInfo.environment["NETWORKCORE_FUZZ_TARGET"] ?? ""
            guard let target = all[name] else {
                fatalError("NETWORKCORE_FUZZ_TARGET must be one of \(all.keys.sorted())")
            }
            return target
        }()
    }
#else
    /// Runs files through a target once each: `Fuzzers TARGET FILE…`; exits 0 when none crashed.
    @main
    struct Replay {
        static func main() throws {
            let arguments = CommandLine.arguments.dropFirst()
            guard let name = arguments.first, let target = FuzzTargets.all[name] else {
                FileHandle.standardError.write(
                    Data("usage: Fuzzers \(FuzzTargets.all.keys.sorted().joined(separator: "|")) FILE…\n".utf8))
                exit(2)
            }
            for path in arguments.dropFirst() { target(try Data(contentsOf: URL(fileURLWithPath: path))) }
            print("\(name): \(arguments.count - 1) input(s), no crash")
        }
    }
#endif
