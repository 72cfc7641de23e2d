import NetworkCore

extension TransportUnderTest {
    /// The root package runs the shared integration suite over URLSession.
    static let all = [urlSession(.withLength)]
    /// The transports the suites against httpbin run over: the same.
    static let httpbin = all
    /// The transports the shared faulty load runs over: none here, where ReliabilityTests runs a larger one
    /// over URLSession and measures memory with it.
    static let faultLoad: [TransportUnderTest] = []
    /// Every way the transports here send a file.
    static let fileUploads = [urlSession(.withLength), urlSession(.chunked)]

    static func urlSession(_ fileUploads: URLSessionTransport.FileUploads) -> TransportUnderTest {
        TransportUnderTest(
            name: fileUploads == .chunked ? "URLSession, files chunked" : "URLSession",
            sendsFileLength: fileUploads == .withLength, readsUnknownCodings: !isFoundationNetworking
        ) { URLSessionTransport(configuration: .ephemeral, fileUploads: fileUploads) }
    }
}

/// Whether URLSession is FoundationNetworking's here (Linux), not Apple's.
#if canImport(FoundationNetworking)
    let isFoundationNetworking = true
#else
    let isFoundationNetworking = false
#endif
