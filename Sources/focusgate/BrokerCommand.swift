public import ArgumentParser
import FocusGate
import FocusGateKafka
import FocusGateEmbeddedBroker
public import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// `focusgate broker`: only the embedded broker, with the contract's topics.
struct BrokerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broker",
        abstract: "Run the embedded Kafka broker (librdkafka's mock cluster) with FocusGate's topics."
    )

    @Option(help: "Bootstrap port on 127.0.0.1.")
    var port: UInt16 = 9092

    @Option(help: "Partitions per topic.")
    var partitions: Int = 8

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        guard self.partitions >= 1 else {
            throw ValidationError("--partitions must be at least 1")
        }
    }

    func run() async throws {
        let logger = makeLogger(label: "focusgate.broker", level: self.logLevel)
        let topics = TopicNames().specifications(partitions: self.partitions)
        let broker = try EmbeddedKafkaBroker(port: self.port, topics: topics, logger: logger)
        print("embedded broker listening: \(broker.bootstrapServers)")
        print("topics: \(topics.map(\.name).joined(separator: ", ")) (\(self.partitions) partitions each)")
        fflush(nil)  // flush every output stream: the address must reach a pipe at once
        let signal = await TerminationSignal.wait()
        logger.info("stopping embedded broker", metadata: ["signal": "\(signal)"])
        broker.shutdown()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
