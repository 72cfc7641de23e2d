import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Everything that can go wrong with a call, one case per cause.
///
/// ```swift
/// do {
///     let page = try await pool.send(Movies.nowPlaying(page: 1), parser: DecodableParser<MoviePage>())
///     show(page)
/// } catch where error.isCancelled {
///     // the screen went away
/// } catch {
///     print(error.serverError?.message ?? error.localizedDescription)
/// }
/// ```
///
/// ## New cases
///
/// A release may add a case for a cause it newly tells apart; its changelog lists every such case under
/// "Breaking", because a `switch` that names every case stops compiling until it handles the new one. Code
/// that must keep compiling across releases matches the cases it acts on and ends with `default:`, or
/// reads the helpers (``isCancelled``, ``isTimeout``, ``statusCode``, ``serverError``), which every case
/// answers.
public enum NetworkError: Error, Sendable {
    /// The endpoint does not make a valid request: a base URL without scheme or host, a path
    /// that does not form a URL, a bad header, a bad timeout.
    indirect case invalidEndpoint(url: String, reason: String)
    /// Parameters or a body could not be encoded.
    case encodingFailed(reason: String)
    /// The request did not get an answer: no connection, connection lost, TLS failure.
    /// The transport's error is kept; for `URLSession` it is a `URLError`.
    case transport(any Error)
    /// The server did not answer within the request's timeout, in seconds (time to first byte, or idle).
    case timedOut(seconds: TimeInterval)
    /// The task did not finish within its deadline, in seconds, retries included.
    /// See ``Endpoint/resourceTimeout`` and ``TaskPool/Configuration/resourceTimeout``.
    case deadlineExceeded(seconds: TimeInterval)
    /// The credential could not be applied or renewed; see ``AuthenticationInterceptor``.
    case authenticationFailed(AuthenticationFailure)
    /// The task was cancelled: by ``TaskPool/cancel(id:)``, by a replacing task, or by Swift task cancellation.
    case cancelled
    /// The server answered with a status the pool does not accept; the response is kept.
    case httpStatus(Response)
    /// The server answered with an accepted status but its body says the call failed.
    case serverRefused(Response)
    /// The body could not be decoded into the model, or an event stream's answer was not
    /// `text/event-stream` (``TaskPool/events(_:id:)``).
    indirect case decodingFailed(DecodingFailure)
    /// A task with this id is already running and the pool's ``DuplicatePolicy`` refused another.
    case duplicateTask(id: String)
    /// The response's body was larger than the limit, in bytes (``TaskPool/Configuration/maximumResponseBytes``
    /// or the endpoint's); the transfer was stopped there. For a stream: one line or event was larger, or
    /// more than that waited unread where the transfer cannot be paused.
    case responseTooLarge(limit: Int)
    /// A file could not be read or written: an upload's file is missing or a directory, a download's
    /// destination cannot be written, the disk is full. The path and what went wrong.
    indirect case fileAccessFailed(path: String, reason: String)
    /// The cache had no answer for the request (credentials redacted in `url`) and its policy
    /// (``CachePolicy/cacheOnly``, or the request's `Cache-Control: only-if-cached`) kept it off the network.
    case notCached(url: String)
}

extension NetworkError {
    /// `fileAccessFailed` for the file at `path`, its reason the file system's `error` as it describes it.
    static func fileAccessFailed(path: String, error: any Error) -> NetworkError {
        let error = error as NSError
        return .fileAccessFailed(path: path, reason: error.localizedFailureReason ?? error.localizedDescription)
    }

    /// Whether the call was cancelled.
    public var isCancelled: Bool {
        if case .cancelled = self { return true }
        return false
    }

    /// Whether an attempt failed for want of the network (no answer came: a transport error, the request
    /// timeout), not because of the server.
    var lostTheNetwork: Bool {
        switch self {
        case .transport, .timedOut: true
        default: false
        }
    }

    /// Whether the call timed out: the request timeout or the task's deadline.
    public var isTimeout: Bool {
        switch self {
        case .timedOut, .deadlineExceeded: true
        default: false
        }
    }

    /// The HTTP status, when the server answered.
    public var statusCode: Int? { response?.statusCode }

    /// The server's error (status, own code and message, body), when the server answered.
    public var serverError: ResponseError? { response?.serverError }

    /// The response, for ``httpStatus(_:)`` and ``serverRefused(_:)``.
    public var response: Response? {
        switch self {
        case .httpStatus(let response), .serverRefused(let response): response
        default: nil
        }
    }

    /// The transport's `URLError`, for ``transport(_:)``.
    public var urlError: URLError? {
        if case .transport(let error) = self { return error as? URLError }
        return nil
    }

    /// Maps any error thrown while sending to the case that says what happened.
    static func from(_ error: any Error, timeout: TimeInterval) -> NetworkError {
        switch error {
        case let error as NetworkError: error
        case is CancellationError: .cancelled
        case let error as URLError where error.code == .cancelled: .cancelled
        case let error as URLError where error.code == .timedOut: .timedOut(seconds: timeout)
        default: .transport(error)
        }
    }
}
