import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The attempts of a task run by a Swift runner: interceptors adapt each, the transport sends it, the
/// answer is validated, and the interceptors decide whether another is due.
extension TaskPool {
    /// The runner's work: the call, then the task's end with its outcome.
    func performAndSettle(_ task: DataTask, endpoint: some Endpoint, deadline: TimeInterval?) async {
        let outcome = await perform(task, endpoint: endpoint, deadline: deadline)
        settle(task, with: cacheFallback(for: outcome, of: task), byRunner: true)
    }

    /// The outcome, or, when it is a failure the cache may cover (see ``CacheTransaction/fallback(for:request:now:)``),
    /// the stored answer standing in for it.
    func cacheFallback(for outcome: DataTask.Outcome, of task: DataTask) -> DataTask.Outcome {
        guard case .failure(let error) = outcome, let cache = task.cache,
            let stale = cache.fallback(for: error, request: task.request)
        else { return outcome }
        return validate(stale)
    }

    /// Sends the task's request: once when there are no interceptors; else as
    /// ``intercepted(_:endpoint:deadline:interceptors:)`` does.
    private func perform(_ task: DataTask, endpoint: some Endpoint, deadline: TimeInterval?) async -> DataTask.Outcome {
        let interceptors = configuration.interceptors + endpoint.interceptors
        guard interceptors.isEmpty else {
            return await intercepted(task, endpoint: endpoint, deadline: deadline, interceptors: interceptors)
        }
        // Nothing can adapt or retry the request: one attempt, and no context for interceptors to read.
        // The task is still in its first phase, `.preparing`, until the attempt opens.
        if Task.isCancelled { return .failure(.cancelled) }
        if task.delivery.isMemory { return await send(task.wireRequest, for: task) }
        var request = task.request
        task.delivery.prepare(&request)
        return await send(request, for: task)
    }

    /// Sends the task's request until it succeeds or no interceptor retries it: adapt, send,
    /// validate, ask the retry chain, back off, and again.
    ///
    /// A function of its own, never inlined, because its async frame is large (the retry loop keeps
    /// much across its waits), and every task's runner would otherwise allocate it, interceptors or not.
    @inline(never)
    private func intercepted(
        _ task: DataTask, endpoint: some Endpoint, deadline: TimeInterval?, interceptors: [any RequestInterceptor]
    ) async -> DataTask.Outcome {
        let retriers = endpoint.interceptors + configuration.interceptors
        var attempt = 1
        while true {
            let context = attemptContext(attempt, of: task, endpoint: endpoint, deadline: deadline)
            enter(.preparing, task)
            var request = task.wireRequest
            task.delivery.prepare(&request)
            do {
                for interceptor in interceptors {
                    request = try await interceptor.adapt(request, context: context)
                }
            } catch {
                return .failure(NetworkError.from(error, timeout: task.request.timeoutInterval))
            }
            if Task.isCancelled { return .failure(.cancelled) }
            let outcome = await send(request, for: task)
            let failure: NetworkError
            switch outcome {
            case .success(let response) where task.delivery.reconnects && response.statusCode != 204:
                // An event stream that ends is a connection to open again, if the interceptors retry.
                failure = .transport(URLError(.networkConnectionLost))
            case .success: return outcome
            case .failure(.cancelled): return outcome
            case .failure(let error): failure = error
            }
            if attempt >= configuration.maximumAttempts || !task.delivery.allowsRetry { return outcome }
            var decision = RetryDecision.doNotRetry
            for retrier in retriers {
                decision = await retrier.retry(request, failing: failure, context: context)
                if case .doNotRetry = decision { continue }
                break
            }
            switch decision {
            case .doNotRetry: return outcome
            case .fail(let error): return .failure(error)
            case .retry(let delay):
                let asked = task.delivery.reconnectionDelay ?? delay
                let wait = asked > 0 ? asked : 0  // NaN too
                // The next attempt could not start before the deadline: say so now rather than wait for it.
                if let deadline, task.elapsed + wait >= deadline {
                    return .failure(.deadlineExceeded(seconds: deadline))
                }
                attempt += 1
                guard lock.withLock({ task.storage.machine.retrying(attempt: attempt) }) else {
                    return .failure(.cancelled)
                }
                log(.retrying, task, error: failure, delay: wait)
                if wait > 0 {
                    do { try await Task.sleep(nanoseconds: MonotonicClock.nanoseconds(wait)) } catch {
                        return .failure(.cancelled)
                    }
                }
                if Task.isCancelled { return .failure(.cancelled) }
            }
        }
    }

    /// What interceptors learn of attempt `attempt`, and the hooks they report through.
    private func attemptContext(
        _ attempt: Int, of task: DataTask, endpoint: some Endpoint, deadline: TimeInterval?
    ) -> AttemptContext {
        let elapsed = task.elapsed
        return AttemptContext(
            taskID: task.id, attempt: attempt, method: HTTPMethod(rawValue: task.method),
            requiresAuthentication: endpoint.requiresAuthentication,
            elapsed: elapsed, remaining: deadline.map { $0 - elapsed },
            onWaitingForCredential: { [self] in enter(.waitingForCredential, task) },
            onCredentialRefreshed: { [self] in log(.credentialRefreshed, task) })
    }

    /// One attempt: sends the request, waits for the transport's answer, and validates it.
    ///
    /// Only what must outlive the wait for the transport is kept here; the work before and after is
    /// done by synchronous functions, so that this async frame, allocated for every attempt, stays small.
    private func send(_ request: URLRequest, for task: DataTask) async -> DataTask.Outcome {
        let body = task.body(for: request)
        let number = openAttempt(of: task, body: body)
        let answer = await TransportEvents.awaitAnswer(
            from: configuration.transport, request: request, body: body
        ) { continuation in
            events(for: task, attempt: number, bytesSent: body.length ?? 0, completion: .continuation(continuation))
        }
        return outcome(of: answer, of: task, request: request)
    }

    /// Closes the attempt with the transport's answer: its timing, and the response validated or the
    /// error typed.
    @inline(never)
    func outcome(of answer: DataTask.Answer, of task: DataTask, request: URLRequest) -> DataTask.Outcome {
        switch answer.result {
        case .success(let (body, httpResponse)):
            let timing = finishAttempt(
                answer.attempt, of: task, bytesSent: answer.bytesSent, received: body.count,
                status: httpResponse.statusCode, at: answer.time)
            let written = configuration.validation.acceptableStatusCodes.contains(httpResponse.statusCode)
            if written, task.delivery.endedMidElement {
                // An event stream that ended in the middle of an event lost it: a lost connection, which
                // a retry policy reconnects.
                return .failure(
                    .transport(
                        URLError(
                            .networkConnectionLost,
                            userInfo: [NSLocalizedDescriptionKey: "the event stream ended in the middle of an event"])))
            }
            var response = Response(
                request: request, httpResponse: httpResponse, body: body, duration: timing.duration,
                statusReader: task.endpoint.statusReader ?? configuration.statusReader, timing: timing,
                fileURL: written ? task.delivery.fileURL : nil)
            if let cache = task.cache { response = cache.resolve(response, request: request) }
            return validate(response)
        case .failure(let error):
            finishAttempt(
                answer.attempt, of: task, bytesSent: answer.bytesSent, received: nil, status: nil, at: answer.time)
            return .failure(NetworkError.from(error, timeout: request.timeoutInterval))
        }
    }

    func validate(_ response: Response) -> DataTask.Outcome {
        let validation = configuration.validation
        guard validation.acceptableStatusCodes.contains(response.statusCode) else {
            return .failure(.httpStatus(response))
        }
        if validation.detectsServerRefusal, response.isServerRefusal {
            return .failure(.serverRefused(response))
        }
        return .success(response)
    }
}
