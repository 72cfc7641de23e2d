import Foundation
import NetworkCore

/// One of TheMovieDB's images (a poster, a backdrop) at a size, on the environment's image host:
/// `https://image.tmdb.org/t/p/w500/pB8BM7pdSp6B6Ih7QZ4DrQ3PmJK.jpg`. Image requests carry no
/// credential: the image host needs none, and is not sent one.
public struct ImageEndpoint: Endpoint, Hashable {
    /// The image's path as TMDB gives it, e.g. `"/pB8BM7pdSp6B6Ih7QZ4DrQ3PmJK.jpg"`.
    public let imagePath: String
    /// The width to fetch.
    public let size: ImageSize
    /// The image host's base URL (``TMDBEnvironment/imageBaseURL``).
    public let imageBaseURL: String

    /// The image at `imagePath` and `size` on the host at `imageBaseURL`.
    public init(path imagePath: String, size: ImageSize, imageBaseURL: String = TMDBEnvironment.productionImageBaseURL)
    {
        self.imagePath = imagePath
        self.size = size
        self.imageBaseURL = imageBaseURL
    }

    /// The image host, e.g. `https://image.tmdb.org/t/p/`.
    public var baseURL: String { imageBaseURL }
    /// `"w500/pB8BM7pdSp6B6Ih7QZ4DrQ3PmJK.jpg"`.
    public var path: String { size.rawValue + (imagePath.hasPrefix("/") ? imagePath : "/" + imagePath) }
    /// `"MovieService"`, as shown in the pool's task table.
    public var service: String { "MovieService" }
    /// The id its download runs under: `"images.w500/pB8BM7pdSp6B6Ih7QZ4DrQ3PmJK.jpg"`.
    public var taskID: String { "images." + path }
}
