import Foundation

/// What movies and movie details share: artwork paths and a release date as TMDB sends them.
public protocol MovieArtwork {
    /// The poster's path, e.g. `"/pB8BM7pdSp6B6Ih7QZ4DrQ3PmJK.jpg"`; `nil` when the movie has none.
    var posterPath: String? { get }
    /// The backdrop's path; `nil` when the movie has none.
    var backdropPath: String? { get }
    /// The release date as sent (`"1999-10-15"`); `nil` when TMDB sent an empty string or none.
    var releaseDateText: String? { get }
}

extension MovieArtwork {
    /// The full poster URL at `size`, or `nil` when there is no poster.
    public func posterURL(
        size: ImageSize = .w500, imageBaseURL: String = TMDBEnvironment.productionImageBaseURL
    ) -> URL? {
        imageURL(posterPath, size: size, base: imageBaseURL)
    }

    /// The full backdrop URL at `size`, or `nil` when there is no backdrop.
    public func backdropURL(
        size: ImageSize = .w780, imageBaseURL: String = TMDBEnvironment.productionImageBaseURL
    )
        -> URL?
    {
        imageURL(backdropPath, size: size, base: imageBaseURL)
    }

    /// The release date at midnight UTC, or `nil` when unknown.
    public var releaseDate: Date? { TMDBDate.parse(releaseDateText) }

    /// The release year, or `nil` when unknown.
    public var releaseYear: Int? { TMDBDate.year(releaseDateText) }

    private func imageURL(_ path: String?, size: ImageSize, base: String) -> URL? {
        guard let path, !path.isEmpty else { return nil }
        let trimmedBase = base.hasSuffix("/") ? String(base.dropLast()) : base
        return URL(string: "\(trimmedBase)/\(size.rawValue)\(path.hasPrefix("/") ? path : "/" + path)")
    }
}
