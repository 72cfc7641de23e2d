import Foundation

/// A trailer, teaser or clip, from `movie/{id}/videos`.
public struct Video: Codable, Hashable, Sendable, Identifiable {
    /// TMDB's id for the video.
    public let id: String
    /// The video's id on its site, e.g. a YouTube key.
    public let key: String
    /// The video's name.
    public let name: String
    /// Where it is hosted: `"YouTube"` or `"Vimeo"`.
    public let site: String
    /// The kind: `"Trailer"`, `"Teaser"`, `"Clip"`, `"Featurette"`…
    public let type: String
    /// The height in pixels, e.g. `1080`.
    public let size: Int?
    /// Whether the studio published it.
    public let official: Bool
    /// When it was published, as sent (`"2014-10-02T19:20:22.000Z"`).
    public let publishedAt: String?
    /// The language, e.g. `"en"`.
    public let language: String?

    enum CodingKeys: String, CodingKey {
        case id, key, name, site, type, size, official
        case publishedAt = "published_at"
        case language = "iso_639_1"
    }

    /// Decodes TMDB's JSON; `id`, `key` and `site` are required.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        key = try container.decode(String.self, forKey: .key)
        site = try container.decode(String.self, forKey: .site)
        name = container.lenient(String.self, forKey: .name) ?? ""
        type = container.lenient(String.self, forKey: .type) ?? ""
        size = container.lenient(Int.self, forKey: .size)
        official = container.lenient(Bool.self, forKey: .official) ?? false
        publishedAt = container.nonEmptyString(forKey: .publishedAt)
        language = container.nonEmptyString(forKey: .language)
    }

    /// Where to watch it: a YouTube or Vimeo page; `nil` for other sites.
    public var watchURL: URL? {
        switch site.lowercased() {
        case "youtube": URL(string: "https://www.youtube.com/watch?v=\(key)")
        case "vimeo": URL(string: "https://vimeo.com/\(key)")
        default: nil
        }
    }
}

/// A movie's videos.
public struct VideoList: Codable, Hashable, Sendable {
    /// The movie's id.
    public let id: Int
    /// The videos; entries that cannot be decoded are left out.
    public let results: [Video]

    enum CodingKeys: String, CodingKey {
        case id, results
    }

    /// Decodes TMDB's JSON, keeping every video that decodes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        results = try container.decodeIfPresent(LossyList<Video>.self, forKey: .results)?.elements ?? []
    }

    /// The official trailers first, then other trailers, then everything else, each group in TMDB's order.
    public var trailersFirst: [Video] {
        let rank: (Video) -> Int = { video in
            video.type == "Trailer" ? (video.official ? 0 : 1) : 2
        }
        return results.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(
            \.element)
    }
}
