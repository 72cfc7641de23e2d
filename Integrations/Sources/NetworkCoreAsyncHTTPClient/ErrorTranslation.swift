import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
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

extension AsyncHTTPClientTransport {
    /// `error` as the pool and its ``RetryPolicy`` read a transport's failures: a `URLError` with the code
    /// `URLSession` would give for the same fault, the client's own error underneath (its description, not
    /// the URL, which may carry a secret). NetworkCore's own errors (a file that cannot be read) pass as
    /// they are.
    static func translate(_ error: any Error, cancelled: Bool) -> any Error {
        if cancelled || error is CancellationError { return URLError(.cancelled) }
        if error is NetworkError || error is URLError { return error }
        return URLError(
            code(for: error), userInfo: [NSLocalizedDescriptionKey: "\(error)", NSUnderlyingErrorKey: error])
    }

    private static func code(for error: any Error) -> URLError.Code {
        switch error {
        case let error as HTTPClientError:
            switch error {
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .tlsHandshakeTimeout,
                .getConnectionFromPoolTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
                return .timedOut
            case .cancelled, .requestStreamCancelled: return .cancelled
            case .remoteConnectionClosed, .uncleanShutdown, .bodyLengthMismatch: return .networkConnectionLost
            case .invalidURL, .emptyHost, .emptyScheme: return .badURL
            case .proxyAuthenticationRequired, .invalidProxyResponse: return .cannotConnectToHost
            default: return error.description.contains("unsupported") ? .unsupportedURL : .unknown
            }
        case let error as NIOConnectionError:
            return error.connectionErrors.isEmpty && (error.dnsAError != nil || error.dnsAAAAError != nil)
                ? .cannotFindHost : .cannotConnectToHost
        case is NIOSSLError, is BoringSSLError:
            return .secureConnectionFailed
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED: return .cannotConnectToHost
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
