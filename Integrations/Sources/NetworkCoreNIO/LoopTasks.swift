import NIOCore

/// Runs a task's jobs on one event loop.
///
/// A request's task prefers it, so that its steps (connecting, writing, the answer's end) run on SwiftNIO's
/// threads, where its input and output are, and never wait for a thread of Swift's shared pool behind the
/// app's own work: started in plain tasks, requests of a process whose pool was busy were late by seconds,
/// past their timeouts.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class EventLoopTaskExecutor: TaskExecutor {
    let loop: any EventLoop

    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

extension EventLoopGroup {
    /// Starts `operation` in a task whose jobs run on one of the group's loops: the loop the caller is on,
    /// when it is one of them. Where the platform has no task executors (before macOS 15, iOS 18), a plain
    /// task.
    func task(_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            return Task(executorPreference: EventLoopTaskExecutor(any())) { await operation() }
        }
        return Task { await operation() }
    }
}
