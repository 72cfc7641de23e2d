import Foundation
import MovieDB
import NetworkCore
import NetworkCoreTesting
import TestSupport
import Testing

@testable import Playground

/// Runs the built `playground` binary and collects what it printed.
struct PlaygroundRun {
    let status: Int32
    let output: String
    let errors: String

    /// Runs the binary with `arguments` and only `environment` (plus PATH), for at most 60 s.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> PlaygroundRun {
        let run = try await ChildProcess.run("playground", arguments, environment: environment)
        return PlaygroundRun(status: run.status, output: run.output, errors: run.errors)
    }

    var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(output.utf8))) as? [String: Any]
    }
}

@Suite("playground binary", .serialized)
struct PlaygroundBinaryTests {
    @Test("the default run is the offline tour: table, in-flight tasks, a cancel by id, a TMDB error")
    func tour() async throws {
        let run = try await PlaygroundRun.run([])
        #expect(run.status == 0)
        #expect(run.errors.isEmpty)
        let output = run.output
        #expect(output.contains("offline, answering from bundled TMDB fixtures"))
        #expect(output.contains("Now playing, page 1 of 1 (5 movies), 2026-10-21 to 2026-12-02"))
        #expect(output.contains("#  Title            Year  Rating  Poster"))
        #expect(output.contains("3  The Quiet Hours  -     0.0     no"))
        #expect(output.contains("1 entry in the response could not be read and was left out"))
        let inFlight = output.split(separator: "\n").filter { $0.contains("sending  1") }
        #expect(inFlight.count == 4)
        #expect(!output.contains(OfflineTMDB.apiKey))
        #expect(output.contains("cancelled: true"))
        #expect(output.contains(#/movies\.upcoming\.page=1 production#[0-9a-f]{12}: cancelled/#))
        #expect(output.contains(#/movies\.details\.id=550 production#[0-9a-f]{12}: finished, Fight Club \(1999\)/#))
        #expect(output.contains("status_code 7"))
        #expect(output.contains("pool.activeTasks.isEmpty == true"))
    }

    @Test("poster downloads the offline image to the file, with plain progress lines when not on a terminal")
    func poster() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("poster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("fight-club.jpg")
        let run = try await PlaygroundRun.run(["poster", "--id", "550", "--size", "w342", "--out", file.path])
        #expect(run.status == 0)
        #expect(run.output.contains("Saved the w342 poster of Fight Club to \(file.path) (2964 bytes, status 200)."))
        #expect(run.errors.hasSuffix("downloaded 3.0 KB of 3.0 KB (100 %)\n"))
        #expect(try Data(contentsOf: file) == TMDBFixtures.poster)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["fight-club.jpg"])
        let missing = try await PlaygroundRun.run(["poster", "--id", "550", "--out", directory.path + "/no/x.jpg"])
        #expect(missing.status == 1)
        #expect(missing.errors.contains("its directory does not exist"))
        let usage = try await PlaygroundRun.run(["poster", "--id", "550"])
        #expect(usage.status == 2)
        #expect(usage.errors.contains("poster needs --out FILE"))
    }

    @Test("a list as JSON")
    func listJSON() async throws {
        let run = try await PlaygroundRun.run(["now-playing", "--page", "1", "--json"])
        #expect(run.status == 0)
        let json = try #require(run.json)
        #expect(json["page"] as? Int == 1)
        #expect(json["total_pages"] as? Int == 1)
        #expect(json["total_results"] as? Int == 5)
        let movies = try #require(json["movies"] as? [[String: Any]])
        #expect(movies.count == 5)
        #expect(Set(movies[0].keys) == ["id", "title", "release_date", "vote_average", "poster_url"])
        let quiet = try #require(movies.first { $0["id"] as? Int == 1184918 })
        #expect(quiet["poster_url"] is NSNull)
        #expect(quiet["release_date"] is NSNull)
        #expect(
            (movies.first { $0["id"] as? Int == 550 }?["poster_url"] as? String)?.hasPrefix(
                "https://image.tmdb.org/t/p/w500/") == true)
    }

    @Test(
        "details, videos and login, as text and JSON",
        arguments: [
            (["details", "--id", "550"], "Fight Club (1999) - Mischief. Mayhem. Soap."),
            (["videos", "--id", "550"], "https://www.youtube.com/watch?v=BdJKm16Co6M"),
            (["recommendations", "--id", "550"], "Recommended for movie 550, page 1 of 1 (4 movies)"),
            (["search", "spirited", "away"], "Spirited Away"),
            (["top-rated", "--page", "2"], "(no movies on this page)"),
            (["login", "--username", "demo", "--password", "demo"], "Logged in as demo"),
            (["details", "--id", "550", "--json"], "\"imdb_id\":\"tt0137523\""),
            (
                ["login", "--username", "demo", "--password", "demo", "--json"],
                "\"session_id\":\"79191836ddaa0da3df76a5ffef6f07ad6ab0c641\""
            ),
        ])
    func commands(arguments: [String], expected: String) async throws {
        let run = try await PlaygroundRun.run(arguments)
        #expect(run.status == 0)
        #expect(run.output.contains(expected), "\(run.output)")
        #expect(run.errors.isEmpty)
    }

    @Test(
        "an API error exits 1 with one stderr line naming TMDB's status_code and status_message",
        arguments: [
            (
                ["details", "--id", "999999"], "status_code 34",
                "status_message \"The resource you requested could not be found."
            ),
            (
                ["login", "--username", "demo", "--password", "x"], "status_code 30",
                "status_message \"Invalid username and/or password"
            ),
            // TMDB's other error shape: HTTP 422 with an `errors` array, shown as the server wrote it.
            (["popular", "--page", "501"], "(HTTP 422)", "TMDB: \"page must be less than or equal to 500\""),
        ])
    func apiErrors(arguments: [String], code: String, message: String) async throws {
        let run = try await PlaygroundRun.run(arguments)
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        let lines = run.errors.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(run.errors.contains(code))
        #expect(run.errors.contains(message), "\(run.errors)")
    }

    @Test(
        "a usage error exits 2 with the usage text",
        arguments: [
            ["bogus"], ["--page"], ["popular", "--page", "x"], ["popular", "--page", "-1"], ["details"],
            ["details", "--id", "5", "--page", "2"], ["--wat"], ["search"], ["--base-url", "ftp://x"],
            ["now-playing", "extra"], ["details", "--id", "1", "--id", "2"], ["--live"],
        ])
    func usageErrors(arguments: [String]) async throws {
        let run = try await PlaygroundRun.run(arguments)
        #expect(run.status == 2)
        #expect(run.errors.hasPrefix("error: "))
        #expect(run.errors.contains("usage: swift run playground"))
        #expect(run.output.isEmpty)
    }

    @Test("refresh-demo: six calls rejected with an expired token, renewed once, all succeed")
    func refreshDemo() async throws {
        let run = try await PlaygroundRun.run(["refresh-demo"])
        #expect(run.status == 0)
        #expect(run.output.split(separator: "\n").filter { $0.contains("waiting for credential") }.count == 6)
        #expect(run.output.contains("The token was renewed 1 time; 6 of 6 calls succeeded."))
        #expect(!run.output.contains("expired-token"))
        #expect(run.errors.isEmpty)
    }

    @Test("--record writes a HAR archive without the key; --replay answers from it with no server")
    func recordAndReplay() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("playground-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: file) }
        let recorded = try await PlaygroundRun.run(["details", "--id", "550", "--record", file.path])
        #expect(recorded.status == 0)
        #expect(recorded.errors.contains("recorded 1 request to \(file.path)"))
        let archive = try String(contentsOf: file, encoding: .utf8)
        #expect(archive.contains("\"version\" : \"1.2\""))
        #expect(!archive.contains(OfflineTMDB.apiKey))
        let replayed = try await PlaygroundRun.run(["details", "--id", "550", "--replay", file.path])
        #expect(replayed.status == 0)
        #expect(replayed.output == recorded.output)
        let missing = try await PlaygroundRun.run(["details", "--id", "278", "--replay", file.path])
        #expect(missing.status == 1)
        #expect(missing.errors.contains("no recorded entry for GET https://api.themoviedb.org/3/movie/278"))
        let absent = try await PlaygroundRun.run(["--replay", "/nonexistent/x.har"])
        #expect(absent.status == 2)
        #expect(absent.errors.hasPrefix("error: --replay cannot use /nonexistent/x.har: there is no such file"))
    }

    @Test("help prints the usage and exits 0")
    func help() async throws {
        let run = try await PlaygroundRun.run(["--help"])
        #expect(run.status == 0)
        #expect(run.output.contains("usage: swift run playground"))
    }

    @Test("--base-url talks to that server over HTTP; --debug logs events and the active-task table")
    func baseURL() async throws {
        let tmdb = OfflineTMDB()
        let server = try MockServer { MockResponse(tmdb.respond(to: $0.urlRequest)) }
        defer { server.stop() }
        let run = try await PlaygroundRun.run(
            ["popular", "--base-url", server.baseURL + "/3", "--debug"], environment: ["TMDB_API_KEY": "local-key"])
        #expect(run.status == 0)
        #expect(run.output.contains("Popular, page 1 of 1 (5 movies)"))
        #expect(server.requests.count == 1)
        #expect(server.requests.first?.url?.query?.contains("api_key=local-key") == true)
        #expect(run.errors.contains("[NetworkCore] started   GET \(server.baseURL)/3/movie/popular?api_key=<redacted>"))
        #expect(run.errors.contains("[NetworkCore] finished  200"))
        #expect(run.errors.contains("movies.popular.page=1"))
        #expect(!run.errors.contains("local-key"))
    }

    @Test("--cache DIR: the second run revalidates; with the server stopped, the page comes from the cache and says so")
    func cacheDirectory() async throws {
        let tmdb = OfflineTMDB()
        let server = try MockServer { MockResponse(tmdb.respond(to: $0.urlRequest)) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("playground-cache-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = ["now-playing", "--base-url", server.baseURL + "/3", "--cache", directory.path]
        let environment = ["TMDB_API_KEY": "local-key"]
        let first = try await PlaygroundRun.run(arguments, environment: environment)
        #expect(first.status == 0 && first.errors.isEmpty)
        #expect(first.output.contains("Now playing, page 1 of 1 (5 movies)"))
        let second = try await PlaygroundRun.run(arguments, environment: environment)
        #expect(second.status == 0)
        #expect(second.errors.contains("confirmed unchanged by the server (304)"))
        #expect(server.requests.count == 2)
        #expect(server.requests.last?.value(forHTTPHeaderField: "If-None-Match") != nil)
        server.stop()
        let offline = try await PlaygroundRun.run(arguments, environment: environment)
        #expect(offline.status == 0, "\(offline.errors)")
        #expect(offline.output == first.output)
        #expect(offline.errors.contains("came from the cache: the server could not be reached"))
        // Another key is another user: nothing stored answers for it.
        let other = try await PlaygroundRun.run(arguments, environment: ["TMDB_API_KEY": "other-key"])
        #expect(other.status == 1)
        // What is stored names no key.
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let bytes = try Data(contentsOf: directory.appendingPathComponent(name))
            #expect(!String(decoding: bytes, as: UTF8.self).contains("local-key"))
        }
    }

    @Test(
        "--offline-queue DIR: a rating the stand-in cannot take (--unreachable) is kept, without a secret; the next run sends it once, whatever its command"
    )
    func offlineQueue() async throws {
        let queue = FileManager.default.temporaryDirectory.appendingPathComponent("playground-queue-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: queue) }
        let kept = try await PlaygroundRun.run(
            ["rate", "--id", "550", "--value", "8.5", "--offline-queue", queue, "--unreachable"])
        #expect(kept.status == 0, "\(kept.errors)")
        #expect(
            kept.output.contains(
                "The server could not be reached: the rating of movie 550 is kept in \(queue), and the next run with --offline-queue \(queue) sends it."
            ))
        let files = try FileManager.default.contentsOfDirectory(atPath: queue)
        #expect(files.count == 1)
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: queue + "/" + files[0])), as: UTF8.self)
        #expect(text.contains("movie\\/550\\/rating") && text.contains("8.5"))
        #expect(!text.contains(OfflineTMDB.apiKey) && !text.contains(OfflineTMDB.guestSessionID))
        // Still unreachable: kept again, and said so.
        let again = try await PlaygroundRun.run(["popular", "--offline-queue", queue, "--unreachable"])
        #expect(again.status == 1)
        #expect(again.errors.contains("is kept again: the server could not be reached"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue) == files)
        // The stand-in answers: the rating goes (with this run's key and session), and the command runs as ever.
        let sent = try await PlaygroundRun.run(["popular", "--offline-queue", queue])
        #expect(sent.status == 0, "\(sent.errors)")
        #expect(sent.output.contains("Popular, page 1 of 1 (5 movies)"))
        #expect(
            sent.errors.contains("note: a write kept by an earlier run, movies.rate.id=550.value=8.5 production#")
                && sent.errors.contains("was sent: the server answered 201"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue).isEmpty)
        let nothing = try await PlaygroundRun.run(["popular", "--offline-queue", queue])
        #expect(nothing.status == 0 && nothing.errors.isEmpty)
        // A rating the stand-in answers is not kept: a 400 is its final word.
        let refused = try await PlaygroundRun.run(["rate", "--id", "550", "--value", "11", "--offline-queue", queue])
        #expect(refused.status == 1)
        #expect(refused.errors.hasPrefix("error: Invalid endpoint"))
        #expect(refused.errors.contains("a rating is 0.5 to 10 in steps of 0.5, not 11.0"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue).isEmpty)
    }

    @Test(
        "--offline-queue over HTTP: a rating made while the server is down reaches it on the next run once, under its first idempotency key, the key and session added then"
    )
    func offlineQueueOverHTTP() async throws {
        let down = try MockServer()
        let port = down.port
        down.stop()
        let queue = FileManager.default.temporaryDirectory.appendingPathComponent("playground-queue-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: queue) }
        let baseURL = "http://127.0.0.1:\(port)/3"
        let environment = ["TMDB_API_KEY": "local-key", "TMDB_GUEST_SESSION_ID": OfflineTMDB.guestSessionID]
        let kept = try await PlaygroundRun.run(
            ["rate", "--id", "550", "--value", "7", "--json", "--base-url", baseURL, "--offline-queue", queue],
            environment: environment)
        #expect(kept.status == 0, "\(kept.errors)")
        #expect(kept.json?["queued"] as? Bool == true && kept.json?["id"] as? Int == 550)
        let key = try #require(
            try FileManager.default.contentsOfDirectory(atPath: queue).first?.split(separator: ".").first)
        let tmdb = OfflineTMDB()
        let server = try MockServer(port: port) { MockResponse(tmdb.respond(to: $0.urlRequest)) }
        defer { server.stop() }
        let sent = try await PlaygroundRun.run(
            ["details", "--id", "550", "--base-url", baseURL, "--offline-queue", queue], environment: environment)
        #expect(sent.status == 0, "\(sent.errors)")
        #expect(sent.errors.contains("was sent: the server answered 201"))
        let ratings = server.requests.filter { $0.method == .post }
        #expect(ratings.count == 1 && server.requests.count == 2)
        let rating = try #require(ratings.first)
        #expect(rating.path == "/3/movie/550/rating")
        #expect(rating.value(forHTTPHeaderField: "Idempotency-Key") == String(key))
        #expect(rating.url?.query?.contains("api_key=local-key") == true)
        #expect(rating.url?.query?.contains("guest_session_id=\(OfflineTMDB.guestSessionID)") == true)
        #expect(rating.httpBody.map { String(decoding: $0, as: UTF8.self) } == #"{"value":7.0}"#)
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue).isEmpty)
        // Live, a rating needs a session from the environment.
        let noSession = try await PlaygroundRun.run(
            ["rate", "--id", "550", "--value", "7", "--base-url", baseURL], environment: ["TMDB_API_KEY": "local-key"])
        #expect(noSession.status == 2)
        #expect(noSession.errors.hasPrefix("error: rate needs a session with --live"))
    }

    @Test("--cache with a file where the directory should be is a usage error")
    func cacheOnAFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("playground-cache-file-\(UUID())")
        try Data("x".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try await PlaygroundRun.run(["now-playing", "--cache", file.path])
        #expect(run.status == 2)
        #expect(run.errors.hasPrefix("error: --cache cannot use \(file.path): Could not use the file"))
    }

    @Test("a server that is not there exits 1 with one clear line, no crash")
    func unreachable() async throws {
        let server = try MockServer { _ in .json("{}") }
        let closedPort = server.baseURL
        server.stop()
        let run = try await PlaygroundRun.run(
            ["popular", "--base-url", closedPort], environment: ["TMDB_API_KEY": "k"])
        #expect(run.status == 1)
        #expect(run.errors.hasPrefix("error: The request failed:"))
        #expect(run.errors.split(separator: "\n").count == 1)
    }

    @Test("a server that answers garbage exits 1 with a decoding error, no crash")
    func garbage() async throws {
        let server = try MockServer { _ in MockResponse(statusCode: 200, body: Data("<html>hello</html>".utf8)) }
        defer { server.stop() }
        let run = try await PlaygroundRun.run(
            ["details", "--id", "1", "--base-url", server.baseURL], environment: ["TMDB_API_KEY": "k"])
        #expect(run.status == 1)
        #expect(run.errors.hasPrefix("error: Could not decode the response: MovieDetails"))
    }
}

@Suite("playground arguments")
struct InvocationTests {
    @Test(
        "commands and options parse",
        arguments: [
            ([], Invocation.Command.tour), (["now-playing"], .nowPlaying(page: 1)),
            (["popular", "--page", "3"], .popular(page: 3)),
            (["--page", "2", "top-rated"], .topRated(page: 2)), (["upcoming"], .upcoming(page: 1)),
            (["details", "--id", "550"], .details(id: 550)),
            (["recommendations", "--id", "5", "--page", "2"], .recommendations(id: 5, page: 2)),
            (["videos", "--id", "7"], .videos(id: 7)),
            (["search", "star", "wars"], .search(query: "star wars", page: 1)),
            (["login", "--username", "u", "--password", "p"], .login(username: "u", password: "p")), (["-h"], .help),
            (["refresh-demo"], .refreshDemo),
            (["poster", "--id", "550", "--out", "p.jpg"], .poster(id: 550, size: "w500", out: "p.jpg")),
            (["poster", "--size", "original", "--id", "5", "--out", "o"], .poster(id: 5, size: "original", out: "o")),
            (["rate", "--id", "550", "--value", "8.5"], .rate(id: 550, value: 8.5)),
        ])
    func parses(arguments: [String], command: Invocation.Command) throws {
        #expect(try Invocation.parse(arguments).command == command)
    }

    @Test(
        "rate and --unreachable refuse what they cannot do",
        arguments: [
            (["rate", "--id", "550"], "rate needs --value, 0.5 to 10"),
            (["rate", "--id", "550", "--value", "high"], "--value takes a number such as 8.5, not 'high'"),
            (["rate", "--value", "8"], "rate needs --id"),
            (["popular", "--value", "8"], "popular does not take --value"),
            (
                ["popular", "--unreachable", "--base-url", "http://127.0.0.1:1"],
                "--unreachable stands in for a server offline; live, give --base-url a server that is down"
            ),
            (["popular", "--offline-queue"], "--offline-queue needs a value"),
        ])
    func rateRefusals(arguments: [String], message: String) {
        #expect(throws: Invocation.UsageError(message: message)) { try Invocation.parse(arguments) }
    }

    @Test("--base-url implies --live; flags are read anywhere")
    func flags() throws {
        let invocation = try Invocation.parse(["--json", "popular", "--base-url", "http://127.0.0.1:1/3", "--debug"])
        #expect(invocation.live)
        #expect(invocation.json)
        #expect(invocation.debug)
        #expect(invocation.baseURL == "http://127.0.0.1:1/3")
    }
}
