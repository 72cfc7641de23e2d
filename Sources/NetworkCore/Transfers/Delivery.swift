import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where a task's response body goes: into memory (a ``Response``'s `body`), into a file, or to a
/// consumer as it arrives. An answer with a status the pool does not accept is always read into
/// memory, so that its error body can be read, and never reaches the file or the stream (see
/// ``TransferReceiver``, which writes to it).
enum Delivery: Sendable {
    case memory
    case file(DownloadFile)
    case stream(any StreamSink)

    var isMemory: Bool {
        if case .memory = self { return true }
        return false
    }

    /// An accepted answer begins: a download opens (or continues) its file, a stream its body; throws when
    /// the body cannot go there (a file that cannot be written, an event stream's answer that is not one).
    func begin(_ head: HTTPURLResponse) throws(NetworkError) {
        switch self {
        case .memory: break
        case .file(let file): try file.begin(head)
        case .stream(let sink): try sink.begin(head)
        }
    }

    /// Body bytes of an accepted answer arrived.
    func write(_ data: Data) throws(NetworkError) {
        switch self {
        case .memory: break
        case .file(let file): try file.write(data)
        case .stream(let sink): try sink.receive(data)
        }
    }

    /// The transfer's control, once its transport has returned it: a stream pauses and resumes it.
    func attach(_ control: any TransportControl) {
        if case .stream(let sink) = self { sink.attach(control) }
    }

    /// The destination of a download.
    var fileURL: URL? {
        if case .file(let file) = self { return file.destination }
        return nil
    }

    /// Adds what the next attempt needs to continue where the last stopped: `Range` and `If-Range` for a
    /// download, `Last-Event-ID` for events.
    func prepare(_ request: inout URLRequest) {
        switch self {
        case .memory: break
        case .file(let file):
            for (name, value) in file.resumeHeaders ?? [:] { request.setValue(value, forHTTPHeaderField: name) }
        case .stream(let sink): sink.prepare(&request)
        }
    }

    /// The body bytes the next attempt starts from: what a download has written when it will ask for the rest.
    var keptBytes: Int {
        if case .file(let file) = self { return file.keptBytes }
        return 0
    }

    /// Whether another attempt may be sent: not once a stream's consumer has had part of a body.
    var allowsRetry: Bool {
        if case .stream(let sink) = self { return sink.allowsRetry }
        return true
    }

    /// Whether a body that ends is a connection to open again (Server-Sent Events).
    var reconnects: Bool {
        if case .stream(let sink) = self { return sink.reconnects }
        return false
    }

    /// The wait before connecting again that the server asked for, if any.
    var reconnectionDelay: TimeInterval? {
        if case .stream(let sink) = self { return sink.reconnectionDelay }
        return nil
    }

    /// Whether the stream's body ended in the middle of an element (an event), which is lost.
    var endedMidElement: Bool {
        if case .stream(let sink) = self { return sink.endedMidElement }
        return false
    }

    /// The task has ended with `outcome`: a stream learns its end; a download's partial file goes unless
    /// it was completed.
    func taskEnded(with outcome: DataTask.Outcome) {
        switch self {
        case .memory: break
        case .file(let file): file.discard()
        case .stream(let sink): sink.finish(outcome.map { _ in () })
        }
    }
}

/// Receives a streamed body: the consumer's side of a ``Delivery/stream(_:)``.
protocol StreamSink: AnyObject, Sendable {
    /// An accepted head arrived (again, after a reconnection); throws when its body cannot be streamed as
    /// asked (an event stream's answer that is not `text/event-stream`), which fails the attempt.
    func begin(_ head: HTTPURLResponse) throws(NetworkError)
    /// Body bytes arrived; throws when an element grows past its limit, which fails the attempt.
    func receive(_ data: Data) throws(NetworkError)
    /// The transfer's control, to pause and resume it as the consumer keeps up.
    func attach(_ control: any TransportControl)
    /// The task has ended: nothing more comes.
    func finish(_ outcome: Result<Void, NetworkError>)
    /// Adds the headers the next attempt needs.
    func prepare(_ request: inout URLRequest)
    /// Whether another attempt may be sent.
    var allowsRetry: Bool { get }
    /// Whether a body that ends is a connection to open again.
    var reconnects: Bool { get }
    /// The wait before connecting again that the server asked for.
    var reconnectionDelay: TimeInterval? { get }
    /// Whether the body ended in the middle of an element, which is lost.
    var endedMidElement: Bool { get }
}
