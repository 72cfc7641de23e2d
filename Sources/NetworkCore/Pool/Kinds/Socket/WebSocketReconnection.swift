import Foundation

/// How a socket opens again after its connection is lost: after a wait that doubles from `initialDelay`
/// up to `maximumDelay`, each wait moved by up to `jitter` of itself (so that the clients a server dropped
/// do not all come back at once), at most `maximumAttempts` times in a row without a message from the
/// server between them. Off by default (``WebSocketOptions/reconnection`` is `nil`).
///
/// A socket opens again when its connection is lost without a close frame, when no pong came (or the
/// connection failed a socket for not taking a message: ``WebSocketError/sendTimedOut(seconds:)``), when the
/// server closed it with a code that asks for it later (1001 going away, 1011 internal error, 1012
/// service restart, 1013 try again later, 1014 bad gateway). Never after a normal close (1000), a cancel,
/// a close the app asked for, a protocol violation, a message too large, or any other code. The opening
/// goes through the interceptors again (a renewed credential), and an answer other than `101` that is
/// not worth trying again (a `4xx` but for `408` and `429`) ends the socket with it.
///
/// ```swift
/// let options = WebSocketOptions(reconnection: WebSocketReconnection(maximumAttempts: 8, maximumDelay: 60))
/// ```
public struct WebSocketReconnection: Sendable, Equatable {
    /// How many times in a row the socket opens again with no message from the server in between; past
    /// it, the socket fails with the error of its last connection.
    public var maximumAttempts: Int
    /// The wait before the first attempt, in seconds.
    public var initialDelay: TimeInterval
    /// The longest wait, in seconds.
    public var maximumDelay: TimeInterval
    /// How much of each wait may be added or taken away at random, from 0 (none) to 1.
    public var jitter: Double

    /// A policy; every argument has the default its property describes: 5 attempts, waits from 0.5 s
    /// doubling up to 30 s, each moved by up to 20%.
    public init(
        maximumAttempts: Int = 5, initialDelay: TimeInterval = 0.5, maximumDelay: TimeInterval = 30,
        jitter: Double = 0.2
    ) {
        self.maximumAttempts = max(0, maximumAttempts)
        self.initialDelay = initialDelay.isFinite ? max(0, initialDelay) : 0.5
        self.maximumDelay = maximumDelay.isFinite ? max(self.initialDelay, maximumDelay) : 30
        self.jitter = jitter.isFinite ? min(1, max(0, jitter)) : 0.2
    }

    /// The wait before attempt `attempt` (from 1), with `random` in -1...1 choosing the jitter.
    func delay(before attempt: Int, random: Double) -> TimeInterval {
        let doubled = initialDelay * pow(2, Double(min(max(attempt, 1), 62) - 1))
        let base = min(maximumDelay, doubled)
        return min(maximumDelay, max(0, base * (1 + jitter * min(1, max(-1, random)))))
    }

    /// Whether a socket that was open and failed with `failure` opens again (see the type's description).
    static func reconnects(after failure: NetworkError) -> Bool {
        switch failure {
        case .transport(let error as WebSocketError):
            switch error {
            case .closed(let code, _): [1001, 1006, 1011, 1012, 1013, 1014].contains(code.rawValue)
            case .pongTimeout, .sendTimedOut: true
            case .unsupported, .protocolViolation, .upgradeRefused, .notOpen: false
            }
        case .httpStatus(let response):
            response.statusCode >= 500 || response.statusCode == 408 || response.statusCode == 429
        case .transport, .timedOut: true
        default: false
        }
    }
}
