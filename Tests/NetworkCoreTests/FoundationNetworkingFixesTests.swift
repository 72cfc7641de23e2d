#if os(Linux)
    import FoundationNetworkingFixes
    import Testing

    @testable import NetworkCore

    /// NetworkCore's replacement of FoundationNetworking's host check (`Sources/FoundationNetworkingFixes`):
    /// that it is the one this process calls, and that it answers as FoundationNetworking's does. That it
    /// does not leak is measured with the process's heap in `ReliabilityTests.urlSessionKeepsNoMemory`.
    @Suite("FoundationNetworking fixes")
    struct FoundationNetworkingFixesTests {
        @Test("the process calls NetworkCore's host check, not FoundationNetworking's leaking one")
        func replaced() {
            #expect(URLSessionTransport.replacesLeakingHostCheck)
        }

        @Test(
            "the host check answers as FoundationNetworking's: the host libcurl reads must equal Foundation's",
            arguments: [
                ("http://127.0.0.1:8080/r/1?q=2", "127.0.0.1", true),
                ("https://api.themoviedb.org/3/movie/550", "api.themoviedb.org", true),
                ("http://user:secret@example.com/", "example.com", true),
                ("https://api.themoviedb.org/3", "themoviedb.org", false),
                ("https://example.com/", "example.co", false),
                ("https://example.com/", "", false),
                ("not a url", "not a url", false),
                ("", "", false),
            ])
        func answers(url: String, host: String, expected: Bool) {
            #expect(CFURLSessionCurlHostIsEqual(url, host) == expected)
        }
    }
#endif
