import Foundation
import NetworkCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A network namespace of the test's own with one end of a veth pair in it, up with an address; removed
/// (and the pair with it) when the test is done. Linux, as root, with iproute2.
struct NetworkNamespace {
    static let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static var isAvailable: Bool {
        #if os(Linux)
            getuid() == 0 && ip != nil
        #else
            false
        #endif
    }

    let name: String
    /// The link inside the namespace.
    let link: String

    init() async throws {
        let tag = String(getpid() % 100_000) + String(Int.random(in: 10..<100))
        name = "nc-conn-\(tag)"
        link = "ncc\(tag)b"
        try await Self.ip("netns", "add", name)
        try await Self.ip("link", "add", "ncc\(tag)a", "type", "veth", "peer", "name", link)
        try await Self.ip("link", "set", link, "netns", name)
        try await Self.ip("-n", name, "addr", "add", "10.78.0.2/24", "dev", link)
        try await Self.ip("-n", name, "link", "set", link, "up")
        try await Self.ip("link", "set", "ncc\(tag)a", "up")
    }

    /// Removes the namespace, its link, and the link's peer outside.
    func remove() async {
        try? await Self.ip("netns", "del", name)
    }

    static func ip(_ arguments: String...) async throws {
        let run = try await ChildProcess.run(at: URL(fileURLWithPath: ip!), arguments, timeout: 10)
        guard run.status == 0 else { throw Failed(command: arguments.joined(separator: " "), errors: run.errors) }
    }

    struct Failed: Error, CustomStringConvertible {
        let command: String
        let errors: String
        var description: String { "ip \(command) failed: \(errors)" }
    }
}

@Suite(
    "Connectivity: the system's monitor against a real link in a network namespace",
    .enabled(if: NetworkNamespace.isAvailable, "needs Linux, root and iproute2 (CI runs as root)"))
struct ConnectivityTests {
    @Test(
        "SystemConnectivity says online, offline with its link down, online again with it up; a pool following it holds 50 sends meanwhile, then sends each once"
    )
    func linkDownAndUp() async throws {
        let namespace = try await NetworkNamespace()
        let probe = try #require(ChildProcess.binary("CancelProbe"))
        let run = try await ChildProcess.run(
            at: URL(fileURLWithPath: NetworkNamespace.ip!),
            ["netns", "exec", namespace.name, probe.path, "connectivity", "50"],
            environment: ["NETWORKCORE_CONNECTIVITY_LINK": namespace.link], timeout: 60)
        await namespace.remove()
        #expect(run.status == 0, "\(run.errors.suffix(600))")
        #expect(run.output.contains("connectivity=online offline online waiting=50 sent=50 ended=50"), "\(run.output)")
    }
}
