import FocusGateKafka
import Testing

/// The figures read from librdkafka's statistics document (its layout: librdkafka's STATISTICS.md).
@Suite("Kafka statistics")
struct KafkaStatisticsTests {
    /// A consumer's document, trimmed to the fields read, as librdkafka 2.0.2 writes them.
    static func document(brokers: [(name: String, nodeid: Int, state: String)], group: String?) -> String {
        let entries = brokers.map {
            #""\#($0.name)":{"name":"\#($0.name)","nodeid":\#($0.nodeid),"state":"\#($0.state)"}"#
        }
        let cgrp = group.map { #","cgrp":{"state":"\#($0)","join_state":"steady"}"# } ?? ""
        return
            #"{"name":"rdkafka#consumer-1","type":"consumer","brokers":{\#(entries.joined(separator: ","))}\#(cgrp)}"#
    }

    @Test("a broker of the cluster is up when its state is UP; bootstrap and logical brokers do not count")
    func brokers() {
        let up = KafkaStatistics(
            json: Self.document(
                brokers: [("127.0.0.1:9092/bootstrap", -1, "UP"), ("127.0.0.1:9092/1", 1, "UP")], group: "up"))
        #expect(up.hasBrokerUp == true)
        let down = KafkaStatistics(
            json: Self.document(
                brokers: [
                    ("127.0.0.1:9092/bootstrap", -1, "UP"), ("127.0.0.1:9092/1", 1, "CONNECT"),
                    ("127.0.0.1:9093/2", 2, "DOWN"), ("GroupCoordinator", -1, "UP"),
                ], group: "wait-coord"))
        #expect(down.hasBrokerUp == false)
        let onlyBootstrap = KafkaStatistics(
            json: Self.document(brokers: [("127.0.0.1:9092/bootstrap", -1, "UP")], group: nil))
        #expect(onlyBootstrap.hasBrokerUp == nil)
    }

    @Test("the group handler's state; none for a client without a group")
    func group() {
        #expect(KafkaStatistics(json: Self.document(brokers: [], group: "up")).groupState == "up")
        #expect(KafkaStatistics(json: Self.document(brokers: [], group: "wait-coord")).groupState == "wait-coord")
        #expect(KafkaStatistics(json: Self.document(brokers: [], group: nil)).groupState == nil)
    }
}
