/// Counts NetworkCore's per-request objects that are alive, so tests can prove none is leaked.
/// Debug builds only: in release builds the calls do nothing, and no shared counter is touched.
enum LiveObjects {
    enum Kind {
        case dataTask, response
    }

    #if DEBUG
        static let dataTasks = Locked(0)
        static let responses = Locked(0)

        private static func counter(_ kind: Kind) -> Locked<Int> {
            switch kind {
            case .dataTask: dataTasks
            case .response: responses
            }
        }
    #endif

    static func created(_ kind: Kind) {
        #if DEBUG
            counter(kind).withLock { $0 += 1 }
        #endif
    }

    static func destroyed(_ kind: Kind) {
        #if DEBUG
            counter(kind).withLock { $0 -= 1 }
        #endif
    }
}
