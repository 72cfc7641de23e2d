import Foundation
import NetworkCoreTesting
import TestSupport
import Testing

/// `Scripts/check-availability`, which stands in for a Mac: it reads the toolchain's interfaces for the
/// Apple availability of what the sources use, against the platforms Package.swift declares.
@Suite("The availability check", .enabled(if: OwnPass.enabled, OwnPass.reason))
struct AvailabilityCheckTests {
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Runs the check on one source file with `code`; its exit status and report.
    static func check(_ code: String) async throws -> ChildProcess {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("availability-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try code.write(to: folder.appendingPathComponent("Sample.swift"), atomically: true, encoding: .utf8)
        return try await checkPaths([folder.path])
    }

    static func checkPaths(_ paths: [String]) async throws -> ChildProcess {
        try await ChildProcess.run(
            at: URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", package.appendingPathComponent("Scripts/check-availability").path, "--package", package.path]
                + paths)
    }

    @Test("it catches Task.immediate without a guard, and names what it needs")
    func catchesTaskImmediate() async throws {
        let run = try await Self.check("func start() { Task.immediate { print(1) } }\n")
        #expect(run.status == 1)
        #expect(
            run.output.contains("Sample.swift:1:16: Task.immediate needs iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0")
        )
    }

    @Test(
        "a guard as new as the declaration, or an @available on the enclosing declaration, passes",
        arguments: [
            "if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, *) {\n    Task.immediate { print(1) }\n}\n",
            "@available(macOS 26, iOS 26, tvOS 26, watchOS 26, *)\nfunc f() {\n    Task.immediate { print(1) }\n}\n",
            "func f() {\n    guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, *) else { return }\n    Task.immediate { print(1) }\n}\n",
            "#if canImport(FoundationNetworking)\nfunc f() { Task.immediate { print(1) } }\n#endif\n",
            "// Task.immediate in a comment\nlet text = \"Task.immediate\"\n",
        ])
    func guarded(code: String) async throws {
        let run = try await Self.check(code)
        #expect(run.status == 0, "\(run.output)")
    }

    @Test(
        "too old a guard, or other newer API, fails",
        arguments: [
            (
                "if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) {\n    Task.immediate { print(1) }\n}\n",
                "Task.immediate"
            ),
            ("func f(_ a: [UInt8]) -> Bool { a.firstRange(of: [1, 2]) != nil }\n", "firstRange(of:)"),
            ("import Synchronization\nlet lock = Mutex(0)\n", "Mutex"),
            (
                "#if canImport(FoundationNetworking)\n#else\nfunc f() { Task.immediate { print(1) } }\n#endif\n",
                "Task.immediate"
            ),
        ])
    func unguarded(code: String, name: String) async throws {
        let run = try await Self.check(code)
        #expect(run.status == 1)
        #expect(run.output.contains(" \(name) needs "), "\(run.output)")
    }

    @Test("the package's own sources pass")
    func packagePasses() async throws {
        let run = try await Self.checkPaths(
            ["Sources", "Playground"].map { Self.package.appendingPathComponent($0).path })
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.errors.contains("newer than the floor without a guard"))
    }
}
