import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The redirect stage of the route, in one place. A transport is asked not to follow redirects (its
/// context says ``RedirectPolicy/never``): an answer that is a redirect the task's ``RedirectPolicy``
/// follows is the next hop of the same attempt, with the method, body and credentials the policy says
/// (credentials never cross to another origin). Each hop is a transfer of its own, with its own
/// ``TransferReceiver``; the state counts the hops and logs each `redirected` event, those a transport
/// followed itself anyway included.
extension TaskPool {
    /// The request the receiver's answer redirects to, when it is a redirect the task follows; `nil`
    /// when it is the answer.
    func nextHop(after head: ResponseHead, of receiver: TransferReceiver) -> URLRequest? {
        let status = head.statusCode
        guard RedirectPolicy.isRedirect(status) else { return nil }
        return receiver.task.plan.redirectPolicy.next(
            after: receiver.request, status: status, location: head.value(forHTTPHeaderField: "Location"),
            hop: receiver.hop + 1)
    }

    /// The receiver's transport followed a redirect itself.
    func transportRedirected(_ status: Int, to url: URL?, for receiver: TransferReceiver) -> Bool {
        mutate { state, effects in
            state.redirected(
                receiver.task.key, attempt: receiver.attempt, hop: receiver.hop, status: status, to: url,
                byTransport: true, at: MonotonicClock.now(), into: &effects)
        }
    }

    /// The receiver's answer was a redirect the task's policy follows; `next` (its
    /// method, body and credentials as ``RedirectPolicy`` says) is sent as the next hop. A body read from
    /// a file or a form is read anew; one the method no longer has (a `POST` become `GET`) is not sent.
    func redirected(_ receiver: TransferReceiver, to next: URLRequest, status: Int) {
        let task = receiver.task
        let goesOn = mutate { state, effects in
            state.redirected(
                task.key, attempt: receiver.attempt, hop: receiver.hop, status: status, to: next.url,
                byTransport: false, at: MonotonicClock.now(), into: &effects)
        }
        guard goesOn else { return }
        send(
            next, of: task, attempt: receiver.attempt, hop: receiver.hop + 1, attemptRequest: receiver.attemptRequest,
            body: task.body(for: next, keepsUpload: next.httpMethod == receiver.request.httpMethod))
    }
}
