import FocusGateEmbeddedBroker
import FocusGateKafka
import FocusGateHarness
import Testing

extension EmbeddedBrokerTests {
    /// A producer's acknowledgement counters, against the embedded broker over TCP.
    @Suite("Acknowledgement counts")
    struct AcknowledgementTests {
        private func producer(
            _ broker: EmbeddedKafkaBroker, reports: DeliveryLog, properties: [String: String] = [:]
        ) throws -> KafkaProducer {
            var configuration = KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers)
            configuration.reportsFailuresOnly = true
            configuration.properties = properties
            return try KafkaProducer(
                configuration: configuration, logger: KafkaTestSupport.logger, onDeliveryReport: reports.record)
        }

        @Test("a producer that reports failures only counts every record written, by delivery id, without a poll")
        func countsWrittenRecords() async throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 3))
            let reports = DeliveryLog()
            let producer = try self.producer(broker, reports: reports)
            let sharing = UInt64(KafkaAcknowledgements.slotCount + 1)  // the slot of id 1
            for (deliveryID, count) in [(UInt64(1), 100), (2, 30), (0, 10), (sharing, 5)] {
                for index in 0..<count {
                    try producer.produce(
                        topic: topic, key: Array("k\(index)".utf8), value: Array("v\(index)".utf8),
                        deliveryID: deliveryID)
                }
            }
            // Nothing polls the producer: librdkafka's threads count.
            try await Wait.until("every record of ids 1, 2 and \(sharing) acknowledged", timeout: .seconds(20)) {
                producer.acknowledgements.counts(of: 1) == (delivered: 105, failed: 0)
                    && producer.acknowledgements.counts(of: 2) == (delivered: 30, failed: 0)
            }
            try producer.flush(timeout: .seconds(10))
            #expect(producer.acknowledgements.counts(of: 1) == (delivered: 105, failed: 0), "nothing counted twice")
            #expect(
                producer.acknowledgements.counts(of: UInt64(KafkaAcknowledgements.slotCount)) == (0, 0),
                "id 0's records are not counted")
            #expect(reports.outcomes.isEmpty, "no report for a delivered record")
            producer.acknowledgements.reset(1)
            #expect(producer.acknowledgements.counts(of: 1) == (0, 0))
            #expect(producer.acknowledgements.counts(of: 2) == (delivered: 30, failed: 0))
        }

        @Test("a record that fails for good is counted as failed and reported; one refused in the call is counted")
        func countsFailedRecords() async throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 1))
            let reports = DeliveryLog()
            let producer = try self.producer(
                broker, reports: reports, properties: ["message.timeout.ms": "1000", "enable.idempotence": "false"])
            try producer.produce(topic: topic, key: nil, value: Array("warm-up".utf8), deliveryID: 3)
            try await Wait.until("the warm-up written") { producer.acknowledgements.counts(of: 3).delivered == 1 }

            try broker.setBroker(1, up: false)
            for index in 0..<3 {
                try producer.produce(topic: topic, key: nil, value: Array("lost-\(index)".utf8), deliveryID: 3)
            }
            try await Wait.until("the three timed out", timeout: .seconds(20)) {
                producer.acknowledgements.counts(of: 3).failed == 3
            }
            #expect(producer.acknowledgements.counts(of: 3).delivered == 1)
            try broker.setBroker(1, up: true)
            producer.poll()
            #expect(reports.outcomes.filter { $0.deliveryID == 3 }.count == 3, "each failure also reported")
            #expect(reports.outcomes.allSatisfy { $0.error?.code.name == "_MSG_TIMED_OUT" })

            #expect(throws: KafkaError.self) {
                try producer.produce(topic: topic, partition: 7, key: nil, value: Array("nowhere".utf8), deliveryID: 4)
            }
            #expect(producer.acknowledgements.counts(of: 4) == (delivered: 0, failed: 1))
        }
    }
}

extension EmbeddedBrokerTests.AcknowledgementTests {
    @Test("a producer librdkafka refuses to create, its acknowledgement counter installed, throws and crashes nothing")
    func refusedProducerThrows() throws {
        var configuration = KafkaProducerConfiguration(bootstrapServers: "127.0.0.1:1")
        configuration.properties = ["security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "NOT-A-MECHANISM"]
        for _ in 0..<3 {
            let error = #expect(throws: KafkaError.self) {
                _ = try KafkaProducer(configuration: configuration, logger: KafkaTestSupport.logger) { _ in }
            }
            #expect("\(error.map { "\($0)" } ?? "")".contains("NOT-A-MECHANISM"))
        }
    }
}
