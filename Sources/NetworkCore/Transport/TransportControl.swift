/// What a transport returns for a transfer it started: the pool cancels it through this, and pauses
/// and resumes reading when a stream's consumer falls behind.
public protocol TransportControl: AnyObject, Sendable {
    /// Stops the transfer; the transport then reports ``TransportEvents/fail(_:)`` (or nothing, if it
    /// had ended). Safe to call more than once, from any thread, at any time.
    func cancel()
    /// Stops reading the response body until ``resumeReceiving()``, where the transport can; the
    /// default does nothing, and chunks keep coming.
    func pauseReceiving()
    /// Reads the response body again after ``pauseReceiving()``.
    func resumeReceiving()
}

extension TransportControl {
    /// Does nothing: this transport cannot pause.
    public func pauseReceiving() {}
    /// Does nothing: this transport cannot pause.
    public func resumeReceiving() {}
}

/// A transfer performed by a Swift task: the way to write a transport with async/await.
///
/// It runs `operation` with the events, then reports ``TransportEvents/finish()``, or
/// ``TransportEvents/fail(_:)`` with what it threw; ``cancel()`` cancels the Swift task. Where the
/// platform has `Task.immediate`, the operation starts on the calling thread and runs there until its
/// first wait, so a transfer that needs no wait may end before `init` returns.
/// ```swift
/// func start(_ request: URLRequest, body: RequestBody, events: TransportEvents) -> any TransportControl {
///     AsyncTransfer(reportingTo: events) { events in
///         let (bytes, response) = try await myClient.fetch(request)
///         guard events.receive(head: response) else { return }
///         events.receive(body: bytes)
///     }
/// }
/// ```
public final class AsyncTransfer: TransportControl {
    private let task: Task<Void, Never>?

    /// Starts `operation` in a Swift task, reporting to `events`.
    public init(
        reportingTo events: TransportEvents, operation: @escaping @Sendable (TransportEvents) async throws -> Void
    ) {
        task = immediateTask {
            do {
                try await operation(events)
                events.finish()
            } catch {
                events.fail(error)
            }
        }
    }

    private init() { task = nil }

    /// A transfer that is over already: for a transport that reported its end before returning.
    public static let none = AsyncTransfer()

    /// Cancels the Swift task.
    public func cancel() { task?.cancel() }
}
