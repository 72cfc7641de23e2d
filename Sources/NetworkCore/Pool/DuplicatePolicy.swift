/// What a pool does when a task is sent with the id of one that is still running.
///
/// The default is ``join``: a derived id names the call (method, URL with sorted query, credentials,
/// body), so a second identical call simply shares the first one's answer, with one network request.
/// Calls that differ on the wire never share an answer: a different call that derives the same id
/// (it differs only in a header that is not a credential, or its endpoint has interceptors of its
/// own) runs as a call of its own, under the id with ` (2)` added. Under an id you gave, a different
/// call fails with ``NetworkError/duplicateTask(id:)`` with ``join`` and ``reject``, and replaces the
/// running one with ``replace``.
public enum DuplicatePolicy: Sendable, Hashable {
    /// Fail the new send with ``NetworkError/duplicateTask(id:)``; the running task goes on.
    case reject
    /// Await the running task's result; one network request serves both callers.
    /// Only a request that is byte for byte the same on the wire joins: same method, URL, headers
    /// (credentials included) and body, and no interceptors of its own endpoint. Any other request
    /// under a given id is rejected with ``NetworkError/duplicateTask(id:)`` rather than given
    /// another caller's answer.
    case join
    /// Cancel the running task (its callers get ``NetworkError/cancelled``) and start the new one.
    case replace
}
