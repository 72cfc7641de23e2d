import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Server-Sent Events parsing (WHATWG)")
struct ServerSentEventTests {
    /// Bytes as they come, and the events they make.
    static let cases: [(name: String, input: String, events: [ServerSentEvent])] = [
        ("one event", "data: hello\n\n", [ServerSentEvent(data: "hello")]),
        ("multi-line data joined with \\n", "data: a\ndata: b\n\n", [ServerSentEvent(data: "a\nb")]),
        ("event type and id", "event: add\nid: 7\ndata: x\n\n", [ServerSentEvent(event: "add", data: "x", id: "7")]),
        ("comments are ignored", ": keep-alive\ndata: x\n: more\n\n", [ServerSentEvent(data: "x")]),
        ("no space after the colon", "data:x\n\n", [ServerSentEvent(data: "x")]),
        ("only the first space is dropped", "data:  x\n\n", [ServerSentEvent(data: " x")]),
        ("a field without a colon has an empty value", "data\n\n", [ServerSentEvent(data: "")]),
        (
            "CRLF and CR line breaks", "data: a\r\n\r\ndata: b\r\r",
            [ServerSentEvent(data: "a"), ServerSentEvent(data: "b")]
        ),
        ("a leading BOM", "\u{FEFF}data: x\n\n", [ServerSentEvent(data: "x")]),
        ("no data: no event, and the type resets", "event: ping\n\ndata: x\n\n", [ServerSentEvent(data: "x")]),
        (
            "the id carries on to later events", "id: 1\ndata: a\n\ndata: b\n\n",
            [ServerSentEvent(data: "a", id: "1"), ServerSentEvent(data: "b", id: "1")]
        ),
        (
            "an id with NUL is ignored", "id: 1\ndata: a\n\nid: 2\u{0}\ndata: b\n\n",
            [ServerSentEvent(data: "a", id: "1"), ServerSentEvent(data: "b", id: "1")]
        ),
        (
            "retry in milliseconds; not a number is ignored", "retry: 1500\nretry: soon\ndata: a\n\n",
            [ServerSentEvent(data: "a", retry: 1.5)]
        ),
        ("unknown fields are ignored", "foo: bar\ndata: a\n\n", [ServerSentEvent(data: "a")]),
        ("an event not ended by a blank line is not dispatched", "data: a\n\ndata: cut", [ServerSentEvent(data: "a")]),
        ("UTF-8 text", "data: café ☕\n\n", [ServerSentEvent(data: "café ☕")]),
    ]

    @Test("the standard's parsing rules, whole and split at every byte", arguments: cases.indices)
    func parse(_ index: Int) throws {
        let (name, input, expected) = Self.cases[index]
        var whole = ServerSentEventParser()
        #expect(try whole.decode(Data(input.utf8)) == expected, "\(name)")
        // Fed one byte at a time (a CRLF and a UTF-8 character split across chunks included).
        var split = ServerSentEventParser()
        let bytes = Array(input.utf8)
        let events = try bytes.flatMap { byte throws(NetworkError) in try split.decode(Data([byte])) }
        #expect(events == expected, "\(name), byte by byte")
    }

    @Test("a connection that ends mid-event is known, and a new one starts clean but keeps the last id")
    func midEvent() throws {
        var parser = ServerSentEventParser()
        _ = try parser.decode(Data("id: 4\ndata: a\n\ndata: cut".utf8))
        #expect(parser.isMidEvent)
        parser.reset()
        #expect(!parser.isMidEvent)
        #expect(parser.lastEventID == "4")
        #expect(try parser.decode(Data("data: b\n\n".utf8)) == [ServerSentEvent(data: "b", id: "4")])
    }

    @Test(
        "only a text/event-stream answer is parsed: its media type in any case, parameters aside; a 204 ends it",
        arguments: [
            (200, "text/event-stream", true),
            (200, "Text/Event-Stream; charset=utf-8", true),
            (200, " text/event-stream ;charset=utf-8", true),
            (200, "\ttext/event-stream", true),
            (201, "text/event-stream", true),
            (204, nil, true),
            (200, nil, false),
            (200, "", false),
            (200, "application/json", false),
            (200, "text/event-streams", false),
            (200, "text/plain; text/event-stream", false),
        ] as [(Int, String?, Bool)])
    func acceptsOnlyEventStreams(status: Int, contentType: String?, accepted: Bool) throws {
        let head = try #require(
            HTTPURLResponse(
                url: URL(string: "http://127.0.0.1/events")!, statusCode: status, httpVersion: "HTTP/1.1",
                headerFields: contentType.map { ["Content-Type": $0] } ?? [:]))
        do {
            try ServerSentEventParser.accept(head)
            #expect(accepted, "\(status) \(contentType ?? "none") was accepted")
        } catch {
            #expect(!accepted, "\(status) \(contentType ?? "none") was refused")
            guard case .decodingFailed(let failure) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(failure.type == "ServerSentEvent")
            #expect(failure.reason.contains(contentType.map { $0.isEmpty ? "\"\"" : $0 } ?? "no Content-Type"))
        }
    }

    @Test("lines split at LF, CRLF and CR, across chunks; a last line without a break comes at the end")
    func lines() throws {
        var splitter = LineSplitter()
        #expect(try splitter.lines(in: Data("a\nb\r".utf8)) == ["a", "b"])
        #expect(try splitter.lines(in: Data("\nc\rd".utf8)) == ["c"])
        #expect(try splitter.lines(in: Data("e\n\n".utf8)) == ["de", ""])
        #expect(try splitter.lines(in: Data("tail".utf8)).isEmpty)
        #expect(splitter.finish() == "tail")
        #expect(splitter.finish() == nil)
    }

    @Test("a line or an event's data past the limit is refused, however the bytes are cut; up to it, kept")
    func limits() throws {
        // Lines of 4 bytes pass a limit of 4; a fifth byte is refused, in one chunk or byte by byte.
        var splitter = LineSplitter(limit: 4)
        #expect(try splitter.lines(in: Data("abcd\r\nefgh\n".utf8)) == ["abcd", "efgh"])
        #expect(throws: NetworkError.self) { try splitter.lines(in: Data("abcde".utf8)) }
        var bytewise = LineSplitter(limit: 4)
        for byte in "abcd".utf8 { #expect(try bytewise.lines(in: Data([byte])).isEmpty) }
        do {
            _ = try bytewise.lines(in: Data("e".utf8))
            Issue.record("a fifth byte was kept")
        } catch {
            guard case .responseTooLarge(let limit) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(limit == 4)
        }
        // An event's data, its lines joined with \n, may hold up to the limit: with a limit of 8, a line is at
        // most "data: ab"; three make "ab\ncd\nef", 8 bytes, kept; one more line would make 10.
        var parser = ServerSentEventParser(limit: 8)
        #expect(try parser.decode(Data("data: ab\ndata: cd\n\n".utf8)) == [ServerSentEvent(data: "ab\ncd")])
        #expect(try parser.decode(Data("data: ab\ndata: cd\ndata: ef\n".utf8)).isEmpty)
        #expect(throws: NetworkError.self) { try parser.decode(Data("data: g\n".utf8)) }
        // A line of 9 bytes is refused before it is read as a field.
        var long = ServerSentEventParser(limit: 8)
        #expect(throws: NetworkError.self) { try long.decode(Data("data: abc".utf8)) }
    }
}
