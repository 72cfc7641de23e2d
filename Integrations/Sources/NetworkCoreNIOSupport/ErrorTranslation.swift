import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import NetworkCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A SwiftNIO transport's failures as the pool and its ``RetryPolicy`` read them.
package enum FailureTranslation {
    /// `error` as a `URLError` with the code `URLSession` would give for the same fault, the engine's own
    /// error underneath (its description, not the URL, which may carry a secret); `specific` names the
    /// code of an engine's own errors first. NetworkCore's own errors (a file that cannot be read) and
    /// `URLError`s pass as they are.
    package static func translate(
        _ error: any Error, cancelled: Bool, specific: (any Error) -> URLError.Code? = { _ in nil }
    ) -> any Error {
        if cancelled || error is CancellationError { return URLError(.cancelled) }
        if error is NetworkError || error is URLError || error is WebSocketError || error is PinningError {
            return error
        }
        if error is NIOHTTPDecompression.DecompressionError {
            // As URLSession reports a body its Content-Encoding does not describe.
            return URLError(
                .cannotDecodeContentData,
                userInfo: [
                    NSLocalizedDescriptionKey: "the response's body is not what its Content-Encoding says (\(error))",
                    NSUnderlyingErrorKey: error,
                ])
        }
        return URLError(
            specific(error) ?? code(for: error),
            userInfo: [NSLocalizedDescriptionKey: "\(error)", NSUnderlyingErrorKey: error])
    }

    /// The `URLError` code of a SwiftNIO error.
    static func code(for error: any Error) -> URLError.Code {
        switch error {
        case let error as NIOConnectionError:
            return error.connectionErrors.isEmpty && (error.dnsAError != nil || error.dnsAAAAError != nil)
                ? .cannotFindHost : .cannotConnectToHost
        case is NIOSSLError, is BoringSSLError:
            return .secureConnectionFailed
        case let error as IOError:
            switch error.errnoCode {
            // Refused, or no route to the host or its network (the network is down): as URLSession says.
            case ECONNREFUSED, ENETUNREACH, EHOSTUNREACH: return .cannotConnectToHost
            case ETIMEDOUT: return .timedOut
            default: return .networkConnectionLost
            }
        case let error as ChannelError:
            switch error {
            case .connectTimeout: return .timedOut
            default: return .networkConnectionLost
            }
        case let error as HTTPParserError:
            // The connection closed before the body's announced end: the body was cut.
            return error == .invalidEOFState ? .networkConnectionLost : .badServerResponse
        default:
            return .unknown
        }
    }
}
