/// What the user asked for on the command line, parsed by hand (no packages).
struct Invocation: Equatable {
    enum Command: Equatable {
        case tour
        case nowPlaying(page: Int)
        case popular(page: Int)
        case topRated(page: Int)
        case upcoming(page: Int)
        case details(id: Int)
        case recommendations(id: Int, page: Int)
        case videos(id: Int)
        case search(query: String, page: Int)
        case poster(id: Int, size: String, out: String)
        case login(username: String, password: String)
        case rate(id: Int, value: Double)
        case refreshDemo
        case help
    }

    var command: Command = .tour
    var live = false
    var baseURL: String?
    var debug = false
    var json = false
    var record: String?
    var replay: String?
    var cache: String?
    var offlineQueue: String?
    var unreachable = false

    struct UsageError: Error, Equatable {
        let message: String
    }

    static let usage = """
        usage: swift run playground [COMMAND] [OPTIONS]

        Commands (none: a tour of NetworkCore on offline fixtures):
          now-playing [--page N]
          popular | top-rated | upcoming [--page N]
          details --id ID
          recommendations --id ID [--page N]
          videos --id ID
          search QUERY [--page N]
          poster --id ID --out FILE [--size w500]
                          download a movie's poster to FILE, with a progress bar (offline: a bundled image)
          login --username U --password P
          rate --id ID --value V
                          rate a movie, 0.5 to 10 in steps of 0.5 (live: in the session named by
                          TMDB_SESSION_ID or TMDB_GUEST_SESSION_ID; offline: the stand-in's guest session)
          refresh-demo    six calls start with an expired token; it is renewed once for all of them
          help

        Options:
          --live          talk to TheMovieDB; reads TMDB_API_KEY or TMDB_READ_TOKEN
          --base-url URL  talk to another server that speaks TMDB's API (implies --live)
          --debug         log every task event and print the active-task table while requests run
          --json          print the result as JSON on stdout
          --record FILE   write the run's traffic to FILE as a HAR 1.2 archive (credentials redacted)
          --replay FILE   answer every request from the HAR archive FILE instead of a server
          --cache DIR     keep answers in DIR; the next run asks the server first and, when it cannot
                          be reached, answers from DIR and says so
          --offline-queue DIR
                          make writes (rate) durable: one the server does not answer is kept in DIR, and
                          the next run with the same DIR sends it, whatever its command, and says so
          --unreachable   offline: the stand-in answers nothing, as a server that cannot be reached
                          (to try --cache and --offline-queue without a network)

        Offline, movie ids from the fixtures work (550 is Fight Club, in full); login accepts demo / demo.
        Exit status: 0 success, 1 API or network error, 2 usage error.
        """

    /// Parses the arguments after the program name.
    static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        var invocation = Invocation()
        var words: [String] = []
        var values: [String: String] = [:]
        var index = 0
        func value(for option: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                throw UsageError(message: "\(option) needs a value")
            }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--live": invocation.live = true
            case "--debug": invocation.debug = true
            case "--json": invocation.json = true
            case "--help", "-h": words.insert("help", at: 0)
            case "--base-url": invocation.baseURL = try value(for: argument)
            case "--record": invocation.record = try value(for: argument)
            case "--replay": invocation.replay = try value(for: argument)
            case "--cache": invocation.cache = try value(for: argument)
            case "--offline-queue": invocation.offlineQueue = try value(for: argument)
            case "--unreachable": invocation.unreachable = true
            case "--page", "--id", "--username", "--password", "--size", "--out", "--value":
                guard values[argument] == nil else { throw UsageError(message: "\(argument) is given twice") }
                values[argument] = try value(for: argument)
            default:
                guard !argument.hasPrefix("-") else { throw UsageError(message: "unknown option \(argument)") }
                words.append(argument)
            }
            index += 1
        }
        if invocation.replay != nil, invocation.live || invocation.baseURL != nil {
            throw UsageError(message: "--replay answers from a file; it cannot be combined with --live or --base-url")
        }
        if invocation.unreachable, invocation.live || invocation.baseURL != nil || invocation.replay != nil {
            throw UsageError(
                message: "--unreachable stands in for a server offline; live, give --base-url a server that is down")
        }
        if let baseURL = invocation.baseURL {
            guard baseURL.hasPrefix("http://") || baseURL.hasPrefix("https://") else {
                throw UsageError(message: "--base-url must start with http:// or https://")
            }
            invocation.live = true
        }
        invocation.command = try command(words: words, values: values)
        return invocation
    }

    private static func command(words: [String], values: [String: String]) throws(UsageError) -> Command {
        guard let name = words.first else {
            try allow([], in: values, for: "the tour")
            return .tour
        }
        let rest = Array(words.dropFirst())
        if name != "search", !rest.isEmpty { throw UsageError(message: "unexpected argument '\(rest[0])'") }
        switch name {
        case "help":
            return .help
        case "refresh-demo":
            try allow([], in: values, for: name)
            return .refreshDemo
        case "now-playing", "popular", "top-rated", "upcoming":
            try allow(["--page"], in: values, for: name)
            let page = try number(values["--page"], option: "--page") ?? 1
            return switch name {
            case "now-playing": .nowPlaying(page: page)
            case "popular": .popular(page: page)
            case "top-rated": .topRated(page: page)
            default: .upcoming(page: page)
            }
        case "details", "videos":
            try allow(["--id"], in: values, for: name)
            let id = try required(values, "--id", for: name)
            return name == "details" ? .details(id: id) : .videos(id: id)
        case "recommendations":
            try allow(["--id", "--page"], in: values, for: name)
            return .recommendations(
                id: try required(values, "--id", for: name), page: try number(values["--page"], option: "--page") ?? 1)
        case "search":
            try allow(["--page"], in: values, for: name)
            let query = rest.joined(separator: " ").trimmingCharacters(in: .whitespaces)
            guard !query.isEmpty else { throw UsageError(message: "search needs a QUERY") }
            return .search(query: query, page: try number(values["--page"], option: "--page") ?? 1)
        case "poster":
            try allow(["--id", "--size", "--out"], in: values, for: name)
            let id = try required(values, "--id", for: name)
            guard let out = values["--out"] else { throw UsageError(message: "poster needs --out FILE") }
            let size = values["--size"] ?? "w500"
            guard size == "original" || (size.first == "w" && Int(size.dropFirst()).map { $0 > 0 } == true) else {
                throw UsageError(
                    message: "--size takes a TMDB image width such as w185, w500 or original, not '\(size)'")
            }
            return .poster(id: id, size: size, out: out)
        case "login":
            try allow(["--username", "--password"], in: values, for: name)
            guard let username = values["--username"], let password = values["--password"] else {
                throw UsageError(message: "login needs --username and --password")
            }
            return .login(username: username, password: password)
        case "rate":
            try allow(["--id", "--value"], in: values, for: name)
            let id = try required(values, "--id", for: name)
            guard let text = values["--value"] else { throw UsageError(message: "rate needs --value, 0.5 to 10") }
            guard let value = Double(text), value.isFinite else {
                throw UsageError(message: "--value takes a number such as 8.5, not '\(text)'")
            }
            return .rate(id: id, value: value)
        default:
            throw UsageError(message: "unknown command '\(name)'")
        }
    }

    private static func allow(_ allowed: Set<String>, in values: [String: String], for name: String) throws(UsageError)
    {
        if let extra = values.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw UsageError(message: "\(name) does not take \(extra)")
        }
    }

    private static func required(
        _ values: [String: String], _ option: String, for name: String
    ) throws(UsageError) -> Int {
        guard let id = try number(values[option], option: option) else {
            throw UsageError(message: "\(name) needs \(option)")
        }
        return id
    }

    private static func number(_ text: String?, option: String) throws(UsageError) -> Int? {
        guard let text else { return nil }
        guard let number = Int(text), number > 0 else {
            throw UsageError(message: "\(option) takes a positive whole number, not '\(text)'")
        }
        return number
    }
}
