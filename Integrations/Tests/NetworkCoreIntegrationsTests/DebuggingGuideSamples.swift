// swift-format-ignore-file
// The samples are shown in a guide as written here (GuideSamplesTests), so they keep its layout.
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// The samples of Docs/Debugging.md, each in the context the page gives it (compiled, never run; the
// OSLog one on Apple platforms only). `GuideSamplesTests` (root package) checks that the page shows exactly
// the lines between the markers, in this order.

func debuggingGuideTable(pool: TaskPool) {
    // GUIDE-BEGIN
    print(pool.debugDescription)
    // GUIDE-END
}

func debuggingGuideStalls() -> TaskPool {
    // GUIDE-BEGIN
    let pool = TaskPool(configuration: .init(logger: ConsoleLogger(), stallThreshold: 5))
    // GUIDE-END
    return pool
}

// GUIDE-BEGIN
import Logging          // swift-log
import NetworkCore

struct SwiftLogForwarder: NetworkLogger {
    let logger = Logging.Logger(label: "network")

    func log(_ event: TaskEvent) {
        let level: Logging.Logger.Level =
            switch event.level {
            case .debug: .debug
            case .info: .info
            case .warning: .warning
            case .error: .error
            }
        logger.log(level: level, "\(ConsoleLogger.format(event))",
                   metadata: ["task": "\(event.taskID)", "event": "\(event.kind.rawValue)"])
    }
}
// GUIDE-END

#if canImport(os)
    // GUIDE-BEGIN
    import os               // Apple platforms

    struct OSLogForwarder: NetworkLogger {
        let logger = os.Logger(subsystem: "com.example.app", category: "network")

        func log(_ event: TaskEvent) {
            let line = ConsoleLogger.format(event)
            switch event.level {
            case .debug: logger.debug("\(line, privacy: .public)")
            case .info: logger.info("\(line, privacy: .public)")
            case .warning: logger.warning("\(line, privacy: .public)")
            case .error: logger.error("\(line, privacy: .public)")
            }
        }
    }
    // GUIDE-END
#endif

func debuggingGuideTimings(task: DataTask) {
    // GUIDE-BEGIN
    let t = task.timings
    print(t.queuedAt)     // wall-clock Date
    print(t.started ?? 0, t.firstByte ?? 0, t.finished ?? 0)   // first attempt sent, first headers, ended
    for attempt in t.attempts {
        print(attempt.number, attempt.statusCode ?? 0, attempt.duration, attempt.timeToFirstByte ?? 0,
              attempt.bytesSent, attempt.bytesReceived)
    }
    print(t.bytesSent, t.bytesReceived)   // all attempts
    // GUIDE-END
}

func debuggingGuideCURL(task: DataTask) {
    // GUIDE-BEGIN
    print(task.cURLDescription())                       // or request.cURLDescription()
    print(task.cURLDescription(revealingSecrets: true)) // explicit opt-in, for a private terminal
    // GUIDE-END
}

func debuggingGuideHAR() throws -> [TaskPool] {
    // GUIDE-BEGIN
    let recorder = HARRecorder()
    let pool = TaskPool(configuration: .init(transport: RecordingTransport(URLSessionTransport(), recorder: recorder)))
    // … run the calls …
    try recorder.write(to: URL(fileURLWithPath: "session.har"))   // opens in browser dev tools and HAR viewers

    let offline = TaskPool(configuration: .init(transport: try HARReplayTransport(contentsOf: URL(fileURLWithPath: "session.har"))))
    // GUIDE-END
    return [pool, offline]
}
