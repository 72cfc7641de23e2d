/// A Swift task running `operation` on the calling thread until its first wait, where the platform has
/// `Task.immediate` (Swift 6.2; macOS, iOS, tvOS and watchOS 26); elsewhere an ordinary task.
func immediateTask(_ operation: sending @escaping @isolated(any) () async -> Void) -> Task<Void, Never> {
    #if compiler(>=6.2)
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            return Task.immediate(operation: operation)
        }
    #endif
    return Task(operation: operation)
}
