/// What a pool does when a task is sent with the id of one that is still running.
///
/// The default is ``join``: a derived id names the call (method, URL with sorted query, body),
/// so a second identical call simply shares the first one's answer, with one network request.
public enum DuplicatePolicy: Sendable, Hashable {
    /// Fail the new send with ``NetworkError/duplicateTask(id:)``; the running task goes on.
    case reject
    /// Await the running task's result; one network request serves both callers.
    /// If the new request differs from the running one (method, URL or body), it is
    /// rejected with ``NetworkError/duplicateTask(id:)`` rather than given the wrong answer.
    case join
    /// Cancel the running task (its callers get ``NetworkError/cancelled``) and start the new one.
    case replace
}
