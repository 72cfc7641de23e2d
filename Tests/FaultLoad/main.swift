// Loads that `Scripts/netfaults` runs through NetworkCore inside a network namespace, across a faulty link,
// each a process of its own that prints one JSON line of what happened and exits 0 when it passed:
//
//   FaultLoad requests URL COUNT INFLIGHT DEADLINE_SECONDS REQUEST_TIMEOUT_SECONDS [SPACING_SECONDS]
//       N requests, K at a time (each started no sooner than its index × SPACING after the first), with a
//       retry policy and a deadline on every task. Passes when every send ended exactly once, each with a
//       value or a typed error, no task outlived its deadline by more than a tenth of it plus a second (one
//       retransmission timeout), and the pool is empty after.
//   FaultLoad offline URL COUNT BRIEF WRITES
//       Started with the link down: COUNT requests and WRITES durable ones wait for the network and succeed
//       once it is back, BRIEF ones end by their 3 s deadline meanwhile; described in Offline.swift.
//   FaultLoad download URL ORIGINAL_FILE steady|resumed
//   FaultLoad upload URL ORIGINAL_FILE STORED_FILE
//       One large transfer, described in Transfers.swift.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let passed: Bool
switch arguments.first {
case "requests": passed = await requests(Array(arguments.dropFirst()))
case "offline": passed = await offline(Array(arguments.dropFirst()))
case "download": passed = await download(Array(arguments.dropFirst()))
case "upload": passed = await upload(Array(arguments.dropFirst()))
default:
    FileHandle.standardError.write(Data("usage: FaultLoad requests|offline|download|upload …\n".utf8))
    exit(2)
}
exit(passed ? 0 : 1)
