import Foundation

/// Where a request's body comes from: nothing, bytes in memory, a file read as it is sent, or a
/// stream of chunks.
public enum RequestBody: Sendable {
    /// No body.
    case none
    /// Bytes in memory; also the request's `httpBody`.
    case data(Data)
    /// The contents of a file, read as they are sent, never whole into memory.
    case file(URL)
    /// Chunks produced as the request is sent; `length` when it is known in advance (it becomes
    /// `Content-Length`), else `nil` (chunked transfer encoding).
    indirect case stream(AsyncThrowingStream<Data, any Error>, length: Int?)

    /// The body's length in bytes when it is known without reading it: a file's size from its
    /// attributes, `nil` for a file that cannot be read or a stream of unknown length.
    public var length: Int? {
        switch self {
        case .none: 0
        case .data(let data): data.count
        case .file(let url): (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue
        case .stream(_, let length): length
        }
    }

    /// The size of the regular file at `url`, or why it cannot be sent: a URL that is not a file's, no
    /// such file, a directory, a file that cannot be read
    /// (``NetworkError/fileAccessFailed(path:reason:)``). The pool checks file bodies with it before it
    /// sends; a transport that reads a ``file(_:)`` body itself can too.
    public static func readableLength(of url: URL) throws(NetworkError) -> Int {
        guard url.isFileURL else { throw .fileAccessFailed(path: url.absoluteString, reason: "not a file URL") }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw .fileAccessFailed(path: url.path, reason: "no such file")
        }
        guard !isDirectory.boolValue else { throw .fileAccessFailed(path: url.path, reason: "a directory, not a file") }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw .fileAccessFailed(path: url.path, reason: "not readable")
        }
        return RequestBody.file(url).length ?? 0
    }

    /// `"none"`, `"12 bytes"`, `"file report.pdf"`, `"stream"`: for errors and logs.
    var summary: String {
        switch self {
        case .none: "none"
        case .data(let data): "\(data.count) bytes"
        case .file(let url): "file \(url.lastPathComponent)"
        case .stream: "stream"
        }
    }
}

/// A request body that is not bytes in the request, made anew for each attempt of a task: a stream is
/// read once.
enum Upload: Sendable {
    case none
    case file(URL)
    /// A form with files, streamed.
    indirect case form(MultipartForm.Encoding)

    var body: RequestBody {
        switch self {
        case .none: .none
        case .file(let url): .file(url)
        case .form(let encoding): .stream(encoding.chunks(), length: encoding.length)
        }
    }
}
