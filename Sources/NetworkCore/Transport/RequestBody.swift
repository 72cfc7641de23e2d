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
    case stream(AsyncThrowingStream<Data, any Error>, length: Int?)

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
