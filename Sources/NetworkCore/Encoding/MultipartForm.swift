import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields, bytes and files, each a named part, sent
/// with ``HTTPTask/multipart(_:)``.
///
/// ```swift
/// var task: HTTPTask {
///     .multipart([
///         .text("title", "Fight Club"),
///         .data("thumbnail", png, fileName: "thumb.png", contentType: "image/png"),
///         .file("video", videoURL, contentType: "video/mp4"),
///     ])
/// }
/// ```
///
/// A form without files is encoded in memory as the request's body. A form with files is streamed:
/// each file is read in pieces as the body is sent, never whole into memory. The boundary is chosen so
/// that it appears in no part: for a form in memory it is derived from the parts and checked against
/// them (the same form gives the same body, and the same task id); for a form with files it is random,
/// 128 bits that no file can contain but by a chance of one in 2¹²².
public struct MultipartForm: Sendable, ExpressibleByArrayLiteral {
    /// One field of the form.
    public struct Part: Sendable {
        enum Content: Sendable {
            case data(Data)
            case file(URL)
        }

        /// The field's name, `name="…"` in its `Content-Disposition`.
        public let name: String
        /// The file name the server is told, `filename="…"`, if any.
        public let fileName: String?
        /// The part's `Content-Type`, if any (a text field has none: it is `text/plain`).
        public let contentType: String?
        let content: Content

        /// A text field, sent as UTF-8.
        public static func text(_ name: String, _ value: String) -> Part {
            Part(name: name, fileName: nil, contentType: nil, content: .data(Data(value.utf8)))
        }

        /// Bytes, with the file name and content type the server is told.
        public static func data(
            _ name: String, _ data: Data, fileName: String? = nil, contentType: String = "application/octet-stream"
        ) -> Part {
            Part(name: name, fileName: fileName, contentType: contentType, content: .data(data))
        }

        /// A file's contents, read as they are sent; `fileName` is the file's own name unless given.
        public static func file(
            _ name: String, _ url: URL, fileName: String? = nil, contentType: String = "application/octet-stream"
        ) -> Part {
            Part(name: name, fileName: fileName ?? url.lastPathComponent, contentType: contentType, content: .file(url))
        }
    }

    /// The parts, in the order they are sent.
    public var parts: [Part]

    /// A form of these parts.
    public init(_ parts: [Part] = []) { self.parts = parts }

    /// A form of these parts.
    public init(arrayLiteral parts: Part...) { self.parts = parts }

    /// Whether a part is a file, read as the body is sent.
    var hasFiles: Bool {
        parts.contains {
            if case .file = $0.content { return true }
            return false
        }
    }
}

extension MultipartForm {
    /// A form as it is sent: its boundary, and the length of each file as it was when the request was
    /// made (the body's `Content-Length` counts them; a file that changes meanwhile fails the send).
    struct Encoding: Sendable {
        let form: MultipartForm
        let boundary: String
        let fileLengths: [Int]
        /// The whole body's length.
        let length: Int

        /// The `Content-Type` that names the boundary.
        var contentType: String { "multipart/form-data; boundary=\(boundary)" }

        /// The body as chunks of at most `chunkSize` bytes, read from the files as they are asked for.
        func chunks(chunkSize: Int = 64 * 1024) -> AsyncThrowingStream<Data, any Error> {
            let reader = PartReader(self, chunkSize: chunkSize)
            return AsyncThrowingStream(unfolding: { try reader.next() })
        }
    }

    /// The paths of its files, for errors.
    var filePaths: [String] {
        parts.compactMap { part in
            if case .file(let url) = part.content { return url.path }
            return nil
        }
    }

    /// Checks every part and lays the form out for sending, with `boundary` or one chosen for it: names,
    /// file names and content types without line breaks, files that can be read.
    func encoding(boundary given: String? = nil) throws(NetworkError) -> Encoding {
        for part in parts {
            for (label, value) in [
                ("name", part.name), ("file name", part.fileName), ("content type", part.contentType),
            ] {
                guard let value, value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else { continue }
                throw .encodingFailed(
                    reason: "the multipart part \(label) \(value.debugDescription) contains a line break or NUL")
            }
        }
        var fileLengths: [Int] = []
        for part in parts {
            if case .file(let url) = part.content { fileLengths.append(try RequestBody.readableLength(of: url)) }
        }
        let boundary = given ?? (hasFiles ? Self.randomBoundary() : derivedBoundary())
        var length = Self.closing(boundary).count
        var files = fileLengths.makeIterator()
        for part in parts {
            length += Self.head(of: part, boundary: boundary).count + 2
            switch part.content {
            case .data(let data): length += data.count
            case .file: length += files.next() ?? 0
            }
        }
        return Encoding(form: self, boundary: boundary, fileLengths: fileLengths, length: length)
    }

    /// The whole body of a form without files.
    func encoded(boundary: String) -> Data {
        var body = Data()
        for part in parts {
            body.append(Self.head(of: part, boundary: boundary))
            if case .data(let data) = part.content { body.append(data) }
            body.append(contentsOf: [13, 10])
        }
        body.append(Self.closing(boundary))
        return body
    }

    /// A boundary of a form in memory, from a digest of its parts, that none of them contains.
    private func derivedBoundary() -> String {
        var seed = Data()
        for part in parts {
            seed.append(Self.head(of: part, boundary: ""))
            if case .data(let data) = part.content { seed.append(data) }
        }
        var round = 0
        while true {
            let boundary = "NetworkCore-" + TaskID.digest(seed + Data("\(round)".utf8))
            let marker = Data("--\(boundary)".utf8)
            let clash = parts.contains { part in
                guard case .data(let data) = part.content else { return false }
                return data.range(of: marker) != nil
            }
            if !clash { return boundary }
            round += 1
        }
    }

    /// A boundary no one can predict: 128 random bits.
    static func randomBoundary() -> String {
        "NetworkCore-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }

    /// A part's delimiter and headers, up to the blank line before its content.
    static func head(of part: Part, boundary: String) -> Data {
        var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(escaped(part.name))\""
        if let fileName = part.fileName { head += "; filename=\"\(escaped(fileName))\"" }
        head += "\r\n"
        if let contentType = part.contentType { head += "Content-Type: \(contentType)\r\n" }
        head += "\r\n"
        return Data(head.utf8)
    }

    /// The closing delimiter.
    static func closing(_ boundary: String) -> Data { Data("--\(boundary)--\r\n".utf8) }

    /// A name in quotes as browsers send it (WHATWG HTML): `"` as `%22`.
    private static func escaped(_ name: String) -> String { name.replacingOccurrences(of: "\"", with: "%22") }
}

/// Reads a form's body piece by piece for ``MultipartForm/Encoding/chunks(chunkSize:)``: the parts'
/// heads, bytes and files, in order, each file read as it is reached and closed at its end.
final class PartReader: @unchecked Sendable {
    // @unchecked Sendable: an unfolding stream asks for one piece at a time, never two at once.
    private let encoding: MultipartForm.Encoding
    private let chunkSize: Int
    /// The pieces still to send, in order.
    private var pending: [Piece]
    private var file: (handle: FileHandle, url: URL, left: Int)?

    private enum Piece {
        case bytes(Data)
        case file(URL, length: Int)
    }

    init(_ encoding: MultipartForm.Encoding, chunkSize: Int) {
        self.encoding = encoding
        self.chunkSize = max(1, chunkSize)
        var pieces: [Piece] = []
        var lengths = encoding.fileLengths.makeIterator()
        for part in encoding.form.parts {
            pieces.append(.bytes(MultipartForm.head(of: part, boundary: encoding.boundary)))
            switch part.content {
            case .data(let data): pieces.append(.bytes(data))
            case .file(let url): pieces.append(.file(url, length: lengths.next() ?? 0))
            }
            pieces.append(.bytes(Data([13, 10])))
        }
        pieces.append(.bytes(MultipartForm.closing(encoding.boundary)))
        pending = pieces.reversed()
    }

    deinit { try? file?.handle.close() }

    /// The next piece of the body, or `nil` at its end.
    func next() throws -> Data? {
        while true {
            if let (handle, url, left) = file {
                guard left > 0 else {
                    // The file must end where it ended when the request was made.
                    let more = try read(handle, url: url, count: 1)
                    try? handle.close()
                    file = nil
                    if !more.isEmpty { throw changed(url) }
                    continue
                }
                let data = try read(handle, url: url, count: min(chunkSize, left))
                guard !data.isEmpty else { throw changed(url) }
                file = (handle, url, left - data.count)
                return data
            }
            guard let piece = pending.popLast() else { return nil }
            switch piece {
            case .bytes(let data):
                if !data.isEmpty { return data }
            case .file(let url, let length):
                do {
                    file = (try FileHandle(forReadingFrom: url), url, length)
                } catch {
                    throw NetworkError.fileAccessFailed(path: url.path, error: error)
                }
            }
        }
    }

    private func read(_ handle: FileHandle, url: URL, count: Int) throws -> Data {
        do {
            return try handle.read(upToCount: count) ?? Data()
        } catch {
            throw NetworkError.fileAccessFailed(path: url.path, error: error)
        }
    }

    private func changed(_ url: URL) -> NetworkError {
        .fileAccessFailed(path: url.path, reason: "the file changed size while the form was sent")
    }
}
