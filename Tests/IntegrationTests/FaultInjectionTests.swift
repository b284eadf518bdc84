import FocusGateKafka
import FocusGateEmbeddedBroker
import Foundation
import Synchronization
import Testing

extension EmbeddedBrokerTests {
    /// Faults injected through the mock cluster's API while clients talk to it over TCP.
    @Suite("Fault injection")
    struct FaultInjectionTests {
        private func producer(
            _ broker: EmbeddedKafkaBroker,
            reports: DeliveryLog,
            properties: [String: String] = [:]
        ) throws -> KafkaProducer {
            var configuration = KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers)
            configuration.properties = properties
            return try KafkaProducer(
                configuration: configuration, logger: KafkaTestSupport.logger, onDeliveryReport: reports.record)
        }

        private func readAll(_ broker: EmbeddedKafkaBroker, topic: String, partitions: Int32 = 1, count: Int) throws
            -> [String]
        {
            let reader = try KafkaConsumer(
                configuration: KafkaTestSupport.consumerConfiguration(broker, group: nil),
                logger: KafkaTestSupport.logger)
            try reader.assign(
                (0..<partitions).map { KafkaTopicPartition(topic: topic, partition: $0, offset: KafkaOffset.beginning) }
            )
            let first = KafkaTestSupport.consume(reader, count: count, timeout: .seconds(20))
            // Anything beyond `count` would be a duplicate: give it a moment to show up.
            let extra = KafkaTestSupport.consume(reader, count: 1, timeout: .milliseconds(300))
            return (first + extra).compactMap(\.valueString)
        }

        @Test("broker down then up: records produced meanwhile are delivered once, the consumer continues")
        func brokerDownThenUp() throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 1))
            let reports = DeliveryLog()
            let producer = try self.producer(broker, reports: reports)
            for index in 0..<50 {
                try producer.produce(topic: topic, key: nil, value: Array("before-\(index)".utf8))
            }
            try producer.flush(timeout: .seconds(10))

            let consumer = try KafkaConsumer(
                configuration: KafkaTestSupport.consumerConfiguration(broker, group: nil),
                logger: KafkaTestSupport.logger)
            try consumer.assign([KafkaTopicPartition(topic: topic, partition: 0, offset: KafkaOffset.beginning)])
            let before = KafkaTestSupport.consume(consumer, count: 50, timeout: .seconds(10))
            #expect(before.count == 50)

            try broker.setBroker(1, up: false)
            for index in 0..<50 {
                try producer.produce(topic: topic, key: nil, value: Array("during-\(index)".utf8))
            }
            producer.poll(timeout: .seconds(1))
            // outq_len also counts queued protocol requests: assert on the delivery reports instead.
            #expect(reports.outcomes.count == 50, "nothing is delivered while the broker is down")
            #expect(producer.outstandingCount >= 50)
            #expect(KafkaTestSupport.consume(consumer, count: 1, timeout: .milliseconds(500)).isEmpty)

            try broker.setBroker(1, up: true)
            try producer.flush(timeout: .seconds(30))
            #expect(reports.outcomes.count == 100)
            #expect(reports.outcomes.allSatisfy { $0.error == nil })

            let after = KafkaTestSupport.consume(consumer, count: 50, timeout: .seconds(30))
            #expect(after.compactMap(\.valueString) == (0..<50).map { "during-\($0)" })
        }

        @Test("retriable Produce errors are retried by the idempotent producer: no loss, no duplicate, order kept")
        func retriableProduceErrors() throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 1))
            let reports = DeliveryLog()
            let producer = try self.producer(broker, reports: reports)
            try broker.pushRequestErrors(.produce, [.notLeaderForPartition, .requestTimedOut, .notEnoughReplicas])
            for index in 0..<200 {
                try producer.produce(topic: topic, key: nil, value: Array("r\(index)".utf8))
            }
            try producer.flush(timeout: .seconds(30))

            #expect(reports.outcomes.count == 200)
            #expect(reports.outcomes.allSatisfy { $0.error == nil })
            #expect(try self.readAll(broker, topic: topic, count: 200) == (0..<200).map { "r\($0)" })
        }

        @Test("a permanent Produce error reaches the delivery report with its class; later records still go through")
        func permanentProduceError() throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 1))
            let reports = DeliveryLog()
            let producer = try self.producer(
                broker, reports: reports, properties: ["enable.idempotence": "false", "linger.ms": "0"])
            try producer.produce(topic: topic, key: nil, value: Array("warm-up".utf8))
            try producer.flush(timeout: .seconds(10))

            try broker.pushRequestErrors(.produce, [KafkaError.Code(rawValue: 87)])  // INVALID_RECORD
            try producer.produce(topic: topic, key: nil, value: Array("refused".utf8), deliveryID: 7)
            try producer.flush(timeout: .seconds(10))
            try producer.produce(topic: topic, key: nil, value: Array("accepted".utf8), deliveryID: 8)
            try producer.flush(timeout: .seconds(10))

            let refused = try #require(reports.outcomes.first { $0.deliveryID == 7 })
            #expect(refused.error?.code.name == "INVALID_RECORD")
            #expect(refused.error?.isRetriable == false)
            #expect(refused.offset == nil)
            #expect(reports.outcomes.first { $0.deliveryID == 8 }?.error == nil)
        }

        @Test("records that cannot be delivered in message.timeout.ms fail in their delivery report")
        func messageTimeout() throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 1))
            let reports = DeliveryLog()
            let producer = try self.producer(broker, reports: reports, properties: ["message.timeout.ms": "1000"])
            try producer.produce(topic: topic, key: nil, value: Array("warm-up".utf8))
            try producer.flush(timeout: .seconds(10))

            try broker.setBroker(1, up: false)
            try producer.produce(topic: topic, key: nil, value: Array("lost".utf8), deliveryID: 2)
            let flush = #expect(throws: KafkaError.self) { try producer.flush(timeout: .milliseconds(300)) }
            #expect(flush?.code == .timedOut)
            try producer.flush(timeout: .seconds(10))
            try broker.setBroker(1, up: true)

            let outcome = try #require(reports.outcomes.first { $0.deliveryID == 2 })
            #expect(outcome.error?.code.name == "_MSG_TIMED_OUT")
        }

        @Test("a partition leader move and a slow broker: producer and consumer follow, nothing lost")
        func leaderMoveAndSlowBroker() throws {
            let broker = try EmbeddedKafkaBroker(brokerCount: 3, logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 2, replicationFactor: 3))
            let reports = DeliveryLog()
            let producer = try self.producer(broker, reports: reports)
            func send(_ label: String) throws {
                for index in 0..<30 {
                    try producer.produce(
                        topic: topic, partition: Int32(index % 2), key: nil, value: Array("\(label)-\(index)".utf8))
                }
                try producer.flush(timeout: .seconds(30))
            }
            try send("first")
            try broker.setPartitionLeader(topic: topic, partition: 0, broker: 2)
            try broker.setPartitionLeader(topic: topic, partition: 1, broker: 3)
            try broker.setRoundTripTime(.milliseconds(200), broker: 2)
            try send("second")
            try broker.setRoundTripTime(.zero, broker: 2)

            #expect(reports.outcomes.count == 60 && reports.outcomes.allSatisfy { $0.error == nil })
            let values = try self.readAll(broker, topic: topic, partitions: 2, count: 60)
            #expect(values.count == 60)
            #expect(Set(values) == Set(["first", "second"].flatMap { label in (0..<30).map { "\(label)-\($0)" } }))
        }

        @Test("an OffsetCommit error is surfaced by commit with its code; the next commit succeeds")
        func offsetCommitError() throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 1))
            _ = try KafkaTestSupport.produce(broker, topic: topic, records: (0..<5).map { (nil, "r\($0)") })
            let consumer = try KafkaConsumer(
                configuration: KafkaTestSupport.consumerConfiguration(
                    broker, group: KafkaTestSupport.uniqueTopic("group")), logger: KafkaTestSupport.logger)
            try consumer.assign([KafkaTopicPartition(topic: topic, partition: 0, offset: KafkaOffset.beginning)])
            #expect(KafkaTestSupport.consume(consumer, count: 5, timeout: .seconds(10)).count == 5)

            // INVALID_RECORD: not retriable
            try broker.pushRequestErrors(.offsetCommit, [KafkaError.Code(rawValue: 87)])
            let error = #expect(throws: KafkaError.self) {
                try consumer.commit([KafkaTopicPartition(topic: topic, partition: 0, offset: 5)])
            }
            #expect(error?.code.name == "INVALID_RECORD")
            try consumer.commit([KafkaTopicPartition(topic: topic, partition: 0, offset: 5)])
            #expect(
                try consumer.committed([KafkaTopicPartition(topic: topic, partition: 0)], timeout: .seconds(5)).first?
                    .offset == 5)
        }

        @Test("the mock serves no CreateTopics: the admin call times out with a retriable error instead of hanging")
        func adminCreateTopicsOnMock() throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let admin = try KafkaAdmin(
                properties: ["bootstrap.servers": broker.bootstrapServers], logger: KafkaTestSupport.logger)
            let error = #expect(throws: KafkaError.self) {
                try admin.createTopics([.compacted("state", partitions: 4)], timeout: .seconds(1))
            }
            #expect(error?.code == .timedOut)
            #expect(error?.isRetriable == true)
        }
    }
}
