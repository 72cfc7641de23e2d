import AsyncHTTPClient
import Foundation
import NetworkCore
import NetworkCoreNIOSupport

extension AsyncHTTPClientTransport {
    /// `error` as the pool and its ``RetryPolicy`` read a transport's failures: a `URLError` with the code
    /// `URLSession` would give for the same fault, the client's own error underneath (its description, not
    /// the URL, which may carry a secret). NetworkCore's own errors (a file that cannot be read) pass as
    /// they are.
    static func translate(_ error: any Error, cancelled: Bool) -> any Error {
        FailureTranslation.translate(error, cancelled: cancelled) { error in
            guard let error = error as? HTTPClientError else { return nil }
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
        }
    }
}
