@testable import FocusGateKafka
import FocusGateEmbeddedBroker
import Foundation
import Testing

extension EmbeddedBrokerTests {
    @Suite("Produce and consume")
    struct ProduceConsumeTests {
        @Test("round trip keeps keys, values, headers, partitions and offsets")
        func roundTrip() throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 3))
            let headers = [
                KafkaHeader(name: "focusgate-decision", value: "silenced"),
                KafkaHeader(name: "empty", value: [UInt8]()),
                KafkaHeader(name: "no-value", value: nil as [UInt8]?),
            ]
            let records: [(key: String?, value: String?)] = [
                ("u-1", #"{"id":"n1"}"#), ("u-2", #"{"id":"n2"}"#), (nil, "keyless"), ("u-3", nil), ("u-4", ""),
            ]

            let reports = try KafkaTestSupport.produce(
                broker, topic: topic, records: records, partition: 2, headers: headers)

            #expect(reports.map(\.deliveryID) == [1, 2, 3, 4, 5])
            #expect(reports.allSatisfy { $0.error == nil && $0.partition == 2 && $0.topic == topic })
            #expect(reports.compactMap(\.offset) == [0, 1, 2, 3, 4])

            let consumer = try KafkaConsumer(
                configuration: KafkaTestSupport.consumerConfiguration(broker, group: nil),
                logger: KafkaTestSupport.logger)
            try consumer.assign([KafkaTopicPartition(topic: topic, partition: 2, offset: KafkaOffset.beginning)])
            let messages = KafkaTestSupport.consume(consumer, count: records.count, timeout: .seconds(15))

            try #require(messages.count == records.count)
            #expect(messages.map(\.keyString) == records.map(\.key))
            #expect(messages.map(\.valueString) == ["{\"id\":\"n1\"}", "{\"id\":\"n2\"}", "keyless", nil, ""])
            #expect(messages.map(\.offset) == [0, 1, 2, 3, 4])
            #expect(messages.allSatisfy { $0.topic == topic && $0.partition == 2 })
            #expect(messages[0].headers == headers.map { KafkaHeader(name: $0.name, value: $0.value ?? nil) })
            #expect(messages[0].header("focusgate-decision") == "silenced")
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(messages.allSatisfy { abs(($0.timestamp ?? 0) - now) < 60_000 })
        }

        @Test(
            "a record's own bytes tell when it has no headers, plain and compressed; every other record's headers come from librdkafka unchanged",
            arguments: ["none", "lz4"])
        func headerlessRecords(compression: String) throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 1))
            let trace = [
                KafkaHeader(name: "traceparent", value: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            ]
            let large = [UInt8](repeating: UInt8(ascii: "x"), count: 200_000)  // a 3-byte length
            // (key, value, headers, known headerless from its bytes)
            let cases: [(key: [UInt8]?, value: [UInt8]?, headers: [KafkaHeader], known: Bool)] = [
                (Array("u-1".utf8), Array(#"{"id":"n1"}"#.utf8), [], true),
                (Array("u-2".utf8), Array(#"{"id":"n2"}"#.utf8), trace, false),
                (nil, Array("keyless".utf8), [], false),
                (Array("u-4".utf8), [], [], false),  // empty: librdkafka gives no pointer to look past
                (Array("u-5".utf8), large, [], true),
                (Array("u-6".utf8), large, trace, false),
                ([], Array("empty key".utf8), [], false),
                (Array("u-8".utf8), nil, [], false),
                (Array("u-9".utf8), Array(repeating: 0, count: 300), [], true),  // a 2-byte length
            ]
            var configuration = KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers)
            configuration.properties["compression.type"] = compression
            let producer = try KafkaProducer(configuration: configuration, logger: KafkaTestSupport.logger) { _ in }
            for record in cases {
                try producer.produce(
                    topic: topic, partition: 0, key: record.key, value: record.value, headers: record.headers)
            }
            try producer.flush(timeout: .seconds(20))

            let consumer = try KafkaConsumer(
                configuration: KafkaTestSupport.consumerConfiguration(broker, group: nil),
                logger: KafkaTestSupport.logger)
            try consumer.assign([KafkaTopicPartition(topic: topic, partition: 0, offset: KafkaOffset.beginning)])
            var seen: [(known: Bool, headers: [KafkaHeader], appended: Int)] = []
            let deadline = ContinuousClock.now + .seconds(15)
            while seen.count < cases.count && ContinuousClock.now < deadline {
                consumer.consumeBatch(maxRecords: 100, timeout: .milliseconds(100)) { batch in
                    for record in batch {
                        var buffer = KafkaHeaderBuffer()
                        record.appendHeaders(to: &buffer)
                        seen.append((record.isKnownHeaderless, record.headers, buffer.count))
                    }
                }
            }
            try #require(seen.count == cases.count)
            #expect(seen.map(\.known) == cases.map(\.known))
            #expect(seen.map(\.headers) == cases.map(\.headers))
            #expect(seen.map(\.appended) == cases.map(\.headers.count))
        }

        @Test(
            "with reports for failures only, a flush returns once the records are acknowledged, not at librdkafka's next 10 ms poll step"
        )
        func flushReturnsWhenAcknowledged() throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 1))
            var configuration = KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers)
            configuration.reportsFailuresOnly = true
            let producer = try KafkaProducer(configuration: configuration, logger: KafkaTestSupport.logger) { _ in }
            try producer.produce(topic: topic, partition: 0, key: Array("warm".utf8), value: [1])
            try producer.flush(timeout: .seconds(20))
            // librdkafka's own flush waits for a report in 10 ms polls: with none coming for a
            // delivered record, every one of these took 10 ms or more. The fastest of many is
            // what an acknowledgement takes, on however busy a machine.
            var fastest = Duration.seconds(1)
            for index in 0..<30 {
                try producer.produce(topic: topic, partition: 0, key: Array("k\(index)".utf8), value: [1])
                let started = ContinuousClock.now
                try producer.flush(timeout: .seconds(20))
                fastest = min(fastest, .now - started)
                #expect(producer.outstandingCount == 0)
            }
            #expect(fastest < .milliseconds(9), "the fastest flush of 30 took \(fastest)")
        }

        @Test("records without an explicit partition are spread by key, same key same partition")
        func keyPartitioning() throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 4))
            let records = (0..<200).map { (key: Optional("user-\($0 % 20)"), value: Optional("v\($0)")) }

            let reports = try KafkaTestSupport.produce(broker, topic: topic, records: records)

            #expect(reports.allSatisfy { $0.error == nil })
            var partitionOfKey: [String: Set<Int32>] = [:]
            for (record, report) in zip(records, reports) {
                partitionOfKey[record.key!, default: []].insert(report.partition)
            }
            #expect(partitionOfKey.values.allSatisfy { $0.count == 1 })
            #expect(Set(reports.map(\.partition)).count > 1)
        }

        @Test("a fixed bootstrap port forwards to the cluster, as `focusgate broker --port` serves it")
        func fixedPort() throws {
            let port = KafkaTestSupport.freePort()
            let broker = try EmbeddedKafkaBroker(port: port, logger: KafkaTestSupport.logger)
            #expect(broker.bootstrapServers == "127.0.0.1:\(port)")
            #expect(broker.bootstrapServers != broker.brokerAddresses)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 1))

            let reports = try KafkaTestSupport.produce(broker, topic: topic, records: [("k", "through the forwarder")])
            #expect(reports.first?.error == nil)

            let consumer = try KafkaConsumer(
                configuration: KafkaTestSupport.consumerConfiguration(broker, group: "fixed-port"),
                logger: KafkaTestSupport.logger)
            try consumer.subscribe([topic])
            let messages = KafkaTestSupport.consume(consumer, count: 1, timeout: .seconds(20))
            #expect(messages.map(\.valueString) == ["through the forwarder"])
            consumer.close()
        }

        @Test("a second broker on a taken port is refused with a clear error")
        func portInUse() throws {
            let port = KafkaTestSupport.freePort()
            let first = try EmbeddedKafkaBroker(port: port, logger: KafkaTestSupport.logger)
            let error = #expect(throws: KafkaError.self) {
                _ = try EmbeddedKafkaBroker(port: port, logger: KafkaTestSupport.logger)
            }
            #expect(error?.message.contains("127.0.0.1:\(port)") == true)
            first.shutdown()
        }

        @Test("pause stops a partition, resume continues it; seek rewinds; watermarks report the log")
        func flowControl() throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 2))
            _ = try KafkaTestSupport.produce(
                broker, topic: topic, records: (0..<10).map { (nil, "p0-\($0)") }, partition: 0)
            _ = try KafkaTestSupport.produce(
                broker, topic: topic, records: (0..<10).map { (nil, "p1-\($0)") }, partition: 1)

            let consumer = try KafkaConsumer(
                configuration: KafkaTestSupport.consumerConfiguration(broker, group: nil),
                logger: KafkaTestSupport.logger)
            let p0 = KafkaTopicPartition(topic: topic, partition: 0)
            let p1 = KafkaTopicPartition(topic: topic, partition: 1)
            let watermarks = try consumer.watermarks(topic: topic, partition: 0, timeout: .seconds(5))
            #expect(watermarks.low == 0 && watermarks.high == 10)
            #expect(try consumer.partitionCount(topic: topic, timeout: .seconds(5)) == 2)

            try consumer.assign([
                KafkaTopicPartition(topic: topic, partition: 0, offset: KafkaOffset.beginning),
                KafkaTopicPartition(topic: topic, partition: 1, offset: KafkaOffset.beginning),
            ])
            try consumer.pause([p1])
            let first = KafkaTestSupport.consume(consumer, count: 20, timeout: .seconds(3))
            #expect(first.count == 10)
            #expect(first.allSatisfy { $0.partition == 0 })

            try consumer.resume([p1])
            let second = KafkaTestSupport.consume(consumer, count: 10, timeout: .seconds(10))
            #expect(second.map(\.valueString) == (0..<10).map { "p1-\($0)" })

            try consumer.seek([KafkaTopicPartition(topic: topic, partition: 0, offset: 7)])
            let replay = KafkaTestSupport.consume(consumer, count: 3, timeout: .seconds(10))
            #expect(replay.map(\.offset) == [7, 8, 9])
            #expect(try consumer.position([p0]).first?.offset == 10)
            #expect(try Set(consumer.assignment()) == [p0, p1])
        }

        @Test("statistics are surfaced with consumer lag per partition")
        func statistics() throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 1))
            _ = try KafkaTestSupport.produce(broker, topic: topic, records: (0..<50).map { (nil, "r\($0)") })

            var configuration = KafkaTestSupport.consumerConfiguration(
                broker, group: KafkaTestSupport.uniqueTopic("stats"))
            configuration.statisticsInterval = .milliseconds(100)
            var latest: KafkaStatistics?
            let consumer = try KafkaConsumer(
                configuration: configuration, logger: KafkaTestSupport.logger, onStatistics: { latest = $0 })
            try consumer.assign([KafkaTopicPartition(topic: topic, partition: 0, offset: KafkaOffset.beginning)])
            let consumed = KafkaTestSupport.consume(consumer, count: 20, timeout: .seconds(10)).prefix(20)
            try consumer.commit([KafkaTopicPartition(topic: topic, partition: 0, offset: consumed.last!.offset + 1)])

            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(10)
            var partition: KafkaStatistics.Partition?
            while clock.now < deadline {
                consumer.consumeBatch(maxRecords: 1, timeout: .milliseconds(50)) { _ in }
                partition = latest?.partitions.first { $0.topic == topic && $0.partition == 0 }
                if partition?.consumerLag == 30 { break }
            }
            #expect(latest?.clientName?.isEmpty == false)
            #expect(partition?.highWatermark == 50)
            #expect(partition?.consumerLag == 30)
            #expect(partition?.committedOffset == 20)
            #expect((partition?.applicationOffset ?? 0) >= 20)
        }
    }
}
