import FocusGateHarness
import FocusGateKafka
import FocusGateThreads
import Foundation
import Testing

/// The level librdkafka's client errors are logged at: a closed connection is routine, brokers
/// that cannot be reached are not.
@Suite("librdkafka client errors in the log")
struct ClientErrorLogTests {
    @Test("a connection refused is logged at info; all brokers down at warning")
    func transportErrorsAreInfo() async throws {
        let log = LogWatch(pattern: "_ALL_BROKERS_DOWN")
        // Nothing listens on port 1 of the loopback address.
        let configuration = KafkaProducerConfiguration(bootstrapServers: "127.0.0.1:1")
        let reached = try await DedicatedThread.run(name: "unreachable") { () throws -> Bool in
            let producer = try KafkaProducer(
                configuration: configuration, logger: log.logger, onDeliveryReport: { _ in })
            // Client errors are served by polling.
            let deadline = ContinuousClock.now + .seconds(30)
            while !log.contains("_ALL_BROKERS_DOWN") && ContinuousClock.now < deadline {
                producer.poll(timeout: .milliseconds(100))
            }
            return log.waitForMatch(timeout: 0)
        }
        try #require(reached, "librdkafka reported every broker down")
        let transport = log.lines(containing: "_TRANSPORT")
        #expect(!transport.isEmpty && transport.allSatisfy { $0.contains(#""level":"info""#) }, "\(transport)")
        #expect(log.lines(containing: "_ALL_BROKERS_DOWN").contains { $0.contains(#""level":"warning""#) })
    }
}
