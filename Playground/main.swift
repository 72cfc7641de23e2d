import Foundation

// `swift run playground`: see PlaygroundApp and Invocation.usage.
let status = await PlaygroundApp.main(
    arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
exit(status)
