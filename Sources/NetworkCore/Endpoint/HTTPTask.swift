import Foundation

/// What a request carries besides its URL: parameters, a body, or nothing.
///
/// ```swift
/// var task: HTTPTask {
///     switch self {
///     case .nowPlaying(let page): .urlParameters(["page": page])
///     case .login(let user, let password): .bodyParameters(["username": user, "password": password])
///     case .upload(let data): .data(data, contentType: "image/png")
///     }
/// }
/// ```
public enum HTTPTask: Sendable {
    /// No parameters and no body.
    case plain
    /// Parameters in the URL's query, encoded by `encoder`.
    case urlParameters(Parameters, encoder: URLQueryEncoder = URLQueryEncoder())
    /// Parameters in the body, encoded by `encoder` (JSON unless you say otherwise).
    case bodyParameters(Parameters, encoder: any ParameterEncoder = JSONBodyEncoder())
    /// Parameters in both the query and the body, plus headers for this request only.
    case parameters(
        url: Parameters, body: Parameters, bodyEncoder: any ParameterEncoder = JSONBodyEncoder(),
        headers: [String: String] = [:])
    /// An `Encodable` value sent as a JSON body.
    case jsonEncodable(any Encodable & Sendable, encoder: JSONEncoder = JSONEncoder())
    /// Raw bytes sent as the body, with their `Content-Type`.
    case data(Data, contentType: String)
    /// A file's contents sent as the body, read as they are sent (never whole into memory), with their
    /// `Content-Type`. A file that is missing or a directory fails with
    /// ``NetworkError/fileAccessFailed(path:reason:)`` before anything is sent.
    case file(URL, contentType: String)
    /// A `multipart/form-data` body: text fields, bytes and files (see ``MultipartForm``), its
    /// `Content-Type` naming the boundary. Files are read as they are sent, never whole into memory.
    /// A part name with a line break, or a file that is missing or a directory, fails with a
    /// ``NetworkError`` before anything is sent.
    case multipart(MultipartForm)
}
