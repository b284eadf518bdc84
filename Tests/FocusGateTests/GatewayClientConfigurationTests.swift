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

    @Test(
        "serve's workers join as static members named like their transactional ids, except with the embedded broker or when turned off"
    )
    func staticMembers() {
        func instanceIDs(_ server: ServerConfiguration, embedded: Bool) -> [String?] {
            var gateway = server.gateway(bootstrapServers: "b:9092", embedded: embedded)
            gateway.embeddedBrokerSettings?(&gateway)  // as when the cluster says it is the embedded broker
            return (0..<2).map {
                Dictionary(
                    uniqueKeysWithValues: gateway.consumerConfiguration(worker: $0, instanceTag: "t").rdkafkaProperties
                )["group.instance.id"]
            }
        }
        var server = ServerConfiguration()
        server.instanceName = "focusgate-0"
        var real = server.gateway(bootstrapServers: "b:9092", embedded: false)
        real.embeddedBrokerSettings = nil  // a real cluster
        #expect(
            (0..<2).map {
                Dictionary(
                    uniqueKeysWithValues: real.consumerConfiguration(worker: $0, instanceTag: "t").rdkafkaProperties
                )["group.instance.id"]
            } == ["focusgate-focusgate-0-0", "focusgate-focusgate-0-1"])
        #expect(real.producerConfiguration(worker: 1, instanceTag: "t").transactionalID == "focusgate-focusgate-0-1")
        #expect(instanceIDs(server, embedded: true) == [nil, nil])
        #expect(instanceIDs(server, embedded: false) == [nil, nil], "a cluster found to be the embedded broker")
        server.staticMembership = false
        real = server.gateway(bootstrapServers: "b:9092", embedded: false)
        #expect(
            Dictionary(uniqueKeysWithValues: real.consumerConfiguration(worker: 0, instanceTag: "t").rdkafkaProperties)[
                "group.instance.id"] == nil)
        // In-process pipelines without a stable name join as dynamic members.
        var anonymous = GatewayConfiguration(bootstrapServers: "b:9092")
        anonymous.staticMembership = true
        #expect(
            Dictionary(
                uniqueKeysWithValues: anonymous.consumerConfiguration(worker: 0, instanceTag: "t").rdkafkaProperties)[
                    "group.instance.id"] == nil)
    }
}
