import ArgumentParser
import FocusGate

@main
struct FocusGateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "focusgate",
        abstract: "Kafka notification gateway enforcing Focus filters on the server.",
        version: FocusGateRelease.description,
        subcommands: [
            ServeCommand.self, BrokerCommand.self, PredicateCommand.self, ExplainCommand.self, HistoryCommand.self,
            ConfigCommand.self,
        ]
    )
}
