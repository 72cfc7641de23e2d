import Foundation

extension NetworkError: LocalizedError {
    /// One sentence that says what happened, with the server's own code and message where it sent them.
    public var errorDescription: String? {
        switch self {
        case .invalidEndpoint(let url, let reason):
            "Invalid endpoint \(Redactor.default.redact(url)): \(reason)."
        case .encodingFailed(let reason):
            "Could not encode the request: \(reason)."
        case .transport(let error):
            "The request failed: \(Self.describe(error))."
        case .timedOut(let seconds):
            "The server did not answer within \(Self.format(seconds)) s."
        case .deadlineExceeded(let seconds):
            "The request did not finish within its deadline of \(Self.format(seconds)) s."
        case .authenticationFailed(let failure):
            "Could not authenticate: \(failure)."
        case .cancelled:
            "The request was cancelled."
        case .httpStatus(let response):
            "\(Self.requestLine(of: response)) failed with \(response.serverError)."
        case .serverRefused(let response):
            "\(Self.requestLine(of: response)) was refused by the server: \(response.serverError)."
        case .decodingFailed(let failure):
            "Could not decode the response: \(failure)."
        case .duplicateTask(let id):
            "A task with id '\(id)' is already running."
        case .responseTooLarge(let limit):
            "The response was larger than the limit of \(limit) bytes held in memory (a body; a stream's line, event or unread bytes), and was not read further."
        case .fileAccessFailed(let path, let reason):
            "Could not use the file \(path): \(reason)."
        case .notCached(let url):
            "No stored answer for \(url), and the cache policy does not allow the network."
        }
    }

    private static func requestLine(of response: Response) -> String {
        "\(response.request.httpMethod ?? "GET") \(Redactor.default.redact(response.request.url))"
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? URLError {
            return "\(error.localizedDescription) (URLError \(error.code.rawValue))"
        }
        return String(describing: error)
    }

    private static func format(_ seconds: TimeInterval) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

extension NetworkError: CustomStringConvertible {
    /// The same sentence as ``errorDescription``.
    public var description: String { errorDescription ?? "NetworkError" }
}

extension NetworkError: CustomReflectable {
    /// What `dump` and debuggers show: the case's sentence, credentials redacted, and the response
    /// (itself shown without credentials, see ``Response``), never a request's headers or an
    /// underlying error's URL.
    public var customMirror: Mirror {
        var children: [(label: String?, value: Any)] = [("description", description)]
        if let response { children.append(("response", response)) }
        if let urlError { children.append(("urlErrorCode", urlError.code.rawValue)) }
        return Mirror(self, children: children, displayStyle: .enum)
    }
}
