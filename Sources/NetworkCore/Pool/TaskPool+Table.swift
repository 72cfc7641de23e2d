import Foundation

extension TaskPool: CustomDebugStringConvertible {
    /// The running tasks as data, oldest first: one ``TaskSnapshot`` per row of ``debugDescription``.
    /// A waiting task's row has its place in the queue (``TaskSnapshot/queuePosition``).
    public var activeTaskSnapshots: [TaskSnapshot] {
        tasksInOrder().map { task, place in
            var snapshot = task.snapshot
            snapshot.queuePosition = place
            return snapshot
        }
    }

    /// The running tasks, oldest first, each with its place in the queue while it waits.
    func tasksInOrder() -> [(task: DataTask, queuePosition: Int?)] {
        state.withLock { $0.activeTasks() }.map { ($0.handle, $0.queuePosition) }
    }

    /// The running tasks as a table, oldest first, credentials redacted:
    /// ```
    /// id             service       method  url                                    protocol  state      attempt  redirects  elapsed ms  bytes    progress                  rate
    /// poster.550     MovieService  GET     https://image.tmdb.org/t/p/w500/pB8…   HTTP/2.0  receiving  1        0          420         81920    81.9 KB of 204.8 KB (40 %)  195.0 KB/s
    /// ```
    public var debugDescription: String {
        let rows = activeTaskSnapshots
        guard !rows.isEmpty else { return "TaskPool: no active tasks" }
        return TextTable.render(header: TaskSnapshot.header, rows: rows.map(\.cells))
    }
}

/// Renders rows as left-aligned columns separated by two spaces; shared with the playground.
package enum TextTable {
    package static func render(header: [String], rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
