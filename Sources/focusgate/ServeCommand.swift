import ArgumentParser
import FocusGate
import FocusGateEmbeddedBroker
import Foundation
import Logging

/// `focusgate serve`: run a FocusGate instance.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run FocusGate: with no kafka.bootstrapServers, the embedded broker and SQLite store.",
        discussion: """
            Settings come from the YAML file given with --config (config/focusgate.yaml documents every
            key), each overridden by its FOCUSGATE_* environment variable (FOCUSGATE_KAFKA_BOOTSTRAPSERVERS
            for kafka.bootstrapServers). Exits 0 after a graceful stop (SIGTERM, SIGINT), 1 after a fatal
            Kafka error, 2 for a configuration error.
            """
    )

    @OptionGroup var source: ConfigurationSource

    @Option(help: "Log level (overrides log.level): trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level?

    func run() async throws {
        let configuration = try self.source.load()
        let logger = makeLogger(
            label: "focusgate", level: self.logLevel ?? Logger.Level(rawValue: configuration.logLevel) ?? .info,
            json: configuration.logFormat == "json"
        )
        do {
            // With no cluster configured, the embedded broker: librdkafka's mock cluster, which
            // keeps its topics in memory only.
            var broker: EmbeddedKafkaBroker?
            if configuration.bootstrapServers.isEmpty {
                broker = try EmbeddedKafkaBroker(
                    port: configuration.embeddedPort,
                    topics: configuration.topics.specifications(partitions: configuration.embeddedPartitions),
                    logger: logger)
            }
            defer { broker?.shutdown() }
            let server = FocusGateServer(
                configuration: configuration, embeddedBroker: broker?.bootstrapServers, logger: logger)
            try await server.run { bootstrapServers, adminURL in
                print(
                    "kafka: \(bootstrapServers)\(configuration.bootstrapServers.isEmpty ? " (embedded broker: in memory, keeps nothing)" : "")"
                )
                print("admin: \(adminURL)")
                print("store: \(configuration.storeKind == "sqlite" ? configuration.sqlitePath : "postgres")")
                fflush(nil)
            }
        } catch let error as ServerConfiguration.Error {
            // A key whose value the cluster contradicts (a missing topic, partitions that differ).
            printError("configuration: \(error)")
            throw ExitCode(2)
        } catch {
            printError("focusgate stopped: \(error)")
            throw ExitCode(1)
        }
    }
}

/// `--config FILE` and the environment: where `serve` and `config` read their settings.
struct ConfigurationSource: ParsableArguments {
    @Option(name: .customLong("config"), help: "YAML configuration file (see config/focusgate.yaml).")
    var file: String?

    /// The effective configuration; exits 2 with the key named on an error.
    func load() throws -> ServerConfiguration {
        do {
            var yaml: String?
            if let file = self.file {
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw ServerConfiguration.Error(key: "--config", message: "cannot read \(file)")
                }
                yaml = String(decoding: data, as: UTF8.self)
            }
            return try ServerConfiguration.load(yaml: yaml, environment: ProcessInfo.processInfo.environment)
        } catch {
            printError("configuration: \(error)")
            throw ExitCode(2)
        }
    }
}

/// `focusgate config`: print the effective configuration, secrets redacted.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the effective configuration (file, then environment), secrets redacted."
    )

    @OptionGroup var source: ConfigurationSource

    func run() throws {
        for (key, value) in try self.source.load().describe() {
            print("\(key): \(value)")
        }
    }
}
