import Foundation

extension TaskPool: CustomDebugStringConvertible {
    /// The running tasks as a table, oldest first, credentials redacted:
    /// ```
    /// id                        method  url                                        state    attempt  elapsed ms
    /// movies.nowPlaying.page=1  GET     https://api.themoviedb.org/3/movie/now_…   sending  1        42
    /// ```
    public var debugDescription: String {
        let tasks = activeTasks
        guard !tasks.isEmpty else { return "TaskPool: no active tasks" }
        let header = ["id", "method", "url", "state", "attempt", "elapsed ms"]
        let rows = tasks.map { task in
            [
                task.id, task.method, Redactor.default.redact(task.request.url), task.phase.description,
                String(task.attempts), String(Int((task.elapsed * 1000).rounded())),
            ]
        }
        return TextTable.render(header: header, rows: rows)
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
