import Foundation
import MovieDB
import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Keeps every request a stub saw.
final class RequestLog: @unchecked Sendable {
    // @unchecked Sendable: `storage` is guarded by `lock`.
    private let lock = NSLock()
    private var storage: [URLRequest] = []

    func append(_ request: URLRequest) { lock.withLock { storage.append(request) } }
    var requests: [URLRequest] { lock.withLock { storage } }
}

/// A pool over the offline TMDB, recording requests.
func offlinePool(delay: TimeInterval = 0, log: RequestLog = RequestLog()) -> TaskPool {
    let tmdb = OfflineTMDB()
    return TaskPool(
        configuration: .init(
            transport: StubTransport(delay: delay) { request, _ in
                log.append(request)
                return tmdb.respond(to: request)
            }))
}

let offlineConfiguration = TMDBConfiguration(credential: .apiKey(OfflineTMDB.apiKey))

/// The error a call ends with, or `nil` if it succeeded.
func failure<T>(_ call: () async throws(NetworkError) -> T) async -> NetworkError? {
    do {
        _ = try await call()
        return nil
    } catch {
        return error
    }
}

extension URLRequest {
    /// The query items, decoded.
    var queryItems: [String: String] {
        let items = url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.queryItems } ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
    }

    /// The JSON body as a dictionary.
    var jsonBody: [String: String] {
        (httpBody.flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [String: String]) ?? [:]
    }
}
