import FocusGateHarness
import FocusGateKafka
import Foundation
import Testing

extension EmbeddedBrokerTests {
    /// `focusgate broker` as a user runs it: a separate process, reached over TCP.
    @Suite("focusgate broker")
    struct BrokerCommandTests {
        /// The `focusgate` executable built next to the test bundle.
        private var executable: URL {
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
                "focusgate")
        }

        @Test("serves the contract's topics on the requested port and stops cleanly on SIGTERM")
        func servesTopics() async throws {
            let port = KafkaTestSupport.freePort()
            let process = try await RunningProcess(
                self.executable.path,
                ["broker", "--port", "\(port)", "--partitions", "3", "--log-level", "error"], errorPath: "/dev/null")
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

            let printed = try await Wait.for("the broker's first line", { process.standardOutput }) {
                $0.contains("\n")
            }
            #expect(printed.split(separator: "\n").first == "embedded broker listening: 127.0.0.1:\(port)")

            let consumer = try KafkaConsumer(
                configuration: KafkaConsumerConfiguration(bootstrapServers: "127.0.0.1:\(port)", groupID: nil),
                logger: KafkaTestSupport.logger
            )
            for topic in [
                "notifications", "focus.invalidations", "notifications.delivered", "notifications.silenced",
                "notifications.dlq", "notifications.badges", "focusgate.state",
            ] {
                #expect(try consumer.partitionCount(topic: topic, timeout: .seconds(10)) == 3, "\(topic)")
            }
            consumer.close()

            #expect(await process.stop(SIGTERM) == (0, false), "a clean exit, not the signal")
        }

        @Test("refuses a bad partition count with a usage error")
        func refusesBadArguments() async throws {
            let result = try await ChildProcess.run(self.executable.path, ["broker", "--partitions", "0"])
            #expect(result.status == 64 && !result.bySignal)  // EX_USAGE
        }
    }
}
