/// The version of NetworkCore, as sent in the default `User-Agent`.
public enum LibraryVersion {
    /// `"0.2.0"`.
    public static let current = "0.2.0"
}
