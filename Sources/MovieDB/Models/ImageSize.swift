/// A TMDB image width, as used in image URLs (`w500`, `original`).
public struct ImageSize: RawRepresentable, Hashable, Sendable {
    /// The size as it appears in the URL.
    public let rawValue: String

    /// Creates a size from its URL form.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// 92 pixels wide.
    public static let w92 = ImageSize(rawValue: "w92")
    /// 185 pixels wide.
    public static let w185 = ImageSize(rawValue: "w185")
    /// 342 pixels wide.
    public static let w342 = ImageSize(rawValue: "w342")
    /// 500 pixels wide.
    public static let w500 = ImageSize(rawValue: "w500")
    /// 780 pixels wide.
    public static let w780 = ImageSize(rawValue: "w780")
    /// The original upload.
    public static let original = ImageSize(rawValue: "original")
}
