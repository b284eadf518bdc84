import ArgumentParser
import FocusGate
import Foundation
import Logging

/// `focusgate serve`: run a FocusGate instance.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run FocusGate: with no kafka.bootstrapServers, the embedded broker and SQLite store.",
        discussion: """
            Settings come from FOCUSGATE_* environment variables (FOCUSGATE_KAFKA_BOOTSTRAPSERVERS,
            FOCUSGATE_STORE_KIND, FOCUSGATE_ADMIN_PORT, …); see the README's configuration section.
            """
    )

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        let logger = makeLogger(label: "focusgate", level: self.logLevel)
        let configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration.fromEnvironment(ProcessInfo.processInfo.environment)
        } catch {
            printError("configuration: \(error)")
            throw ExitCode(2)
        }
        try await FocusGateServer(configuration: configuration, logger: logger).run { bootstrapServers, adminURL in
            print("kafka: \(bootstrapServers)\(configuration.bootstrapServers.isEmpty ? " (embedded broker)" : "")")
            print("admin: \(adminURL)")
            print("store: \(configuration.storeKind == "sqlite" ? configuration.sqlitePath : "postgres")")
            fflush(nil)
        }
    }
}
