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

        @Test("serves the SPEC topics on the requested port and stops cleanly on SIGTERM")
        func servesTopics() throws {
            let port = KafkaTestSupport.freePort()
            let process = Process()
            process.executableURL = self.executable
            process.arguments = ["broker", "--port", "\(port)", "--partitions", "3", "--log-level", "error"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            defer { if process.isRunning { process.terminate() } }

            let firstLine = try #require(readLine(from: output.fileHandleForReading))
            #expect(firstLine == "embedded broker listening: 127.0.0.1:\(port)")

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

            process.terminate()  // SIGTERM
            process.waitUntilExit()
            #expect(process.terminationReason == .exit)
            #expect(process.terminationStatus == 0)
        }

        @Test("refuses a bad partition count with a usage error")
        func refusesBadArguments() throws {
            let process = Process()
            process.executableURL = self.executable
            process.arguments = ["broker", "--partitions", "0"]
            process.standardError = Pipe()
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 64)  // EX_USAGE
        }

        private func readLine(from handle: FileHandle) -> String? {
            var bytes: [UInt8] = []
            while true {
                let chunk = handle.readData(ofLength: 1)
                guard let byte = chunk.first else {
                    return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
                }
                if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            }
        }
    }
}
