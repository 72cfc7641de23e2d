/// Counts NetworkCore's per-request objects that are alive, so tests can prove none is leaked.
enum LiveObjects {
    static let dataTasks = Locked(0)
    static let responses = Locked(0)
}
