#if os(Linux)
    import FoundationNetworkingFixes
    import Testing

    @testable import NetworkCore

    /// The opt-in replacement of FoundationNetworking's host check (`Sources/FoundationNetworkingFixes`), which
    /// this test binary links: that it is the one this process calls, and that it answers as upstream's fixed
    /// one does (IPv6 literals included). That it does not leak is measured with the process's heap in
    /// `ReliabilityTests.urlSessionKeepsNoMemory`; that NetworkCore alone does not replace it, by
    /// `IPv6Tests` in a child process that does not link it.
    @Suite("FoundationNetworking fixes")
    struct FoundationNetworkingFixesTests {
        @Test("a process that links the product calls its host check, not FoundationNetworking's")
        func replaced() {
            #expect(nc_curl_host_check_is_replaced())
        }

        @Test(
            "the host check answers as FoundationNetworking's: the host libcurl reads must equal Foundation's",
            arguments: [
                ("http://127.0.0.1:8080/r/1?q=2", "127.0.0.1", true),
                ("https://api.themoviedb.org/3/movie/550", "api.themoviedb.org", true),
                ("http://user:secret@example.com/", "example.com", true),
                ("http://[::1]:8080/x", "::1", true),
                ("http://[2001:db8::1]/", "2001:db8::1", true),
                ("http://[::1]:8080/x", "::2", false),
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
