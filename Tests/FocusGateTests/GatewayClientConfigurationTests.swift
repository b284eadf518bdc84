@testable import FocusGate
import FocusGateKafka
import Testing

/// The librdkafka settings the pipeline gives its clients, on which its guarantees and its cost
/// per record depend.
@Suite("Gateway client configuration")
struct GatewayClientConfigurationTests {
    private func producerProperties(_ mode: GatewayConfiguration.DeliveryMode) -> [String: String] {
        var configuration = GatewayConfiguration(bootstrapServers: "b:9092")
        configuration.deliveryMode = mode
        return Dictionary(
            uniqueKeysWithValues: configuration.producerConfiguration(worker: 0, instanceTag: "i").rdkafkaProperties)
    }

    @Test("a worker's producer reports failed deliveries only, in both modes")
    func failuresOnly() {
        #expect(self.producerProperties(.atLeastOnce)["delivery.report.only.error"] == "true")
        #expect(self.producerProperties(.exactlyOnce)["delivery.report.only.error"] == "true")
    }

    @Test("at-least-once keeps no gap; exactly-once is transactional")
    func modes() {
        #expect(self.producerProperties(.atLeastOnce)["enable.gapless.guarantee"] == "true")
        #expect(self.producerProperties(.atLeastOnce)["transactional.id"] == nil)
        #expect(self.producerProperties(.exactlyOnce)["transactional.id"] != nil)
        #expect(self.producerProperties(.exactlyOnce)["enable.gapless.guarantee"] == nil)
    }
}
