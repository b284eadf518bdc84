import FocusGateKafka
import FocusGateEmbeddedBroker
import FocusGateHarness
import Foundation
import Testing

/// Transactions on librdkafka's mock cluster and, in `make test-compat`, on Tansu. What the mock
/// cannot show (control records, stored transactional offsets) is marked with `withKnownIssue`
/// there and checked on Tansu (docs/compatibility.md).
extension EmbeddedBrokerTests {
    @Suite("Transactions")
    struct TransactionTests {
        /// A broker with a one-partition output topic.
        private func brokerWithOutput() throws -> (EmbeddedKafkaBroker, String) {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let output = KafkaTestSupport.uniqueTopic("out")
            try broker.createTopic(.init(name: output, partitions: 1))
            return (broker, output)
        }

        /// A cluster of the kind asked for.
        private func start(_ kind: TestCluster) async throws -> any KafkaTestCluster {
            switch kind {
            case .embedded: try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            case .tansu: try await TansuBroker(executable: try #require(TansuBroker.executable))
            }
        }

        private func transactionalProducer(_ broker: some KafkaTestCluster, id: String, reports: DeliveryLog) throws
            -> KafkaProducer
        {
            var configuration = KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers)
            configuration.transactionalID = id
            configuration.transactionTimeout = .seconds(10)
            let producer = try KafkaProducer(
                configuration: configuration, logger: KafkaTestSupport.logger, onDeliveryReport: reports.record)
            try producer.initTransactions(timeout: .seconds(10))
            return producer
        }

        @Test(
            "consume, produce, send offsets, commit: outputs written, offsets stored (not on the mock)",
            arguments: TestCluster.available)
        func consumeTransformProduce(on kind: TestCluster) async throws {
            let broker = try await self.start(kind)
            let input = KafkaTestSupport.uniqueTopic("in")
            let output = KafkaTestSupport.uniqueTopic("out")
            let group = KafkaTestSupport.uniqueTopic("group")
            try await broker.create(.init(name: input, partitions: 1))
            try await broker.create(.init(name: output, partitions: 1))
            _ = try KafkaTestSupport.produce(
                broker, topic: input, records: (0..<20).map { (key: "u\($0)", value: "in-\($0)") })

            let committed: Int64? = try {
                let reports = DeliveryLog()
                let producer = try self.transactionalProducer(
                    broker, id: KafkaTestSupport.uniqueTopic("txn"), reports: reports)
                let consumer = try KafkaConsumer(
                    configuration: KafkaTestSupport.consumerConfiguration(broker, group: group),
                    logger: KafkaTestSupport.logger)
                try consumer.subscribe([input])
                // Tansu answers a join after about half the session timeout (6 s here) and more.
                let records = KafkaTestSupport.consume(consumer, count: 20, timeout: .seconds(60))
                try #require(records.count == 20)

                try producer.beginTransaction()
                for record in records {
                    try producer.produce(
                        topic: output, key: record.key, value: Array("out-\(record.valueString!)".utf8))
                }
                let next = KafkaTopicPartition(topic: input, partition: 0, offset: records.last!.offset + 1)
                try producer.sendOffsetsToTransaction(
                    [next], groupMetadata: consumer.groupMetadata(), timeout: .seconds(10))
                try producer.commitTransaction(timeout: .seconds(10))
                #expect(reports.outcomes.count == 20 && reports.outcomes.allSatisfy { $0.error == nil })

                let stored = try consumer.committed(
                    [KafkaTopicPartition(topic: input, partition: 0)], timeout: .seconds(5))
                consumer.close()
                return stored.first?.offset
            }()

            let reader = try KafkaConsumer(
                configuration: KafkaTestSupport.consumerConfiguration(broker, group: nil),
                logger: KafkaTestSupport.logger)
            try reader.assign([KafkaTopicPartition(topic: output, partition: 0, offset: KafkaOffset.beginning)])
            let out = KafkaTestSupport.consume(reader, count: 20, timeout: .seconds(15))
            #expect(out.compactMap(\.valueString) == (0..<20).map { "out-in-\($0)" })

            if kind == .embedded {
                withKnownIssue("librdkafka's mock cluster does not store offsets sent with a transaction") {
                    #expect(committed == 20)
                }
            } else {
                #expect(committed == 20)
            }
            await broker.stop()
        }

        @Test(
            "abort, then a new transaction commits: the log's markers abort and commit them (none on the mock)",
            arguments: TestCluster.available)
        func abortThenCommit(on kind: TestCluster) async throws {
            let broker = try await self.start(kind)
            let output = KafkaTestSupport.uniqueTopic("out")
            try await broker.create(.init(name: output, partitions: 1))

            let reports = DeliveryLog()
            let producer = try self.transactionalProducer(
                broker, id: KafkaTestSupport.uniqueTopic("txn"), reports: reports)
            try producer.beginTransaction()
            for index in 0..<5 {
                try producer.produce(topic: output, key: nil, value: Array("aborted-\(index)".utf8))
            }
            try producer.flush(timeout: .seconds(10))
            try producer.abortTransaction(timeout: .seconds(10))
            try producer.beginTransaction()
            for index in 0..<5 {
                try producer.produce(topic: output, key: nil, value: Array("committed-\(index)".utf8))
            }
            try producer.commitTransaction(timeout: .seconds(10))
            #expect(reports.outcomes.count == 10)

            let reader = try KafkaConsumer(
                configuration: KafkaTestSupport.consumerConfiguration(broker, group: nil),
                logger: KafkaTestSupport.logger)
            try reader.assign([KafkaTopicPartition(topic: output, partition: 0, offset: KafkaOffset.beginning)])
            let visible = KafkaTestSupport.consume(reader, count: 10, timeout: .seconds(5)).compactMap(\.valueString)
            #expect(visible.filter { $0.hasPrefix("committed-") } == (0..<5).map { "committed-\($0)" })
            withKnownIssue(
                kind == .embedded
                    ? "librdkafka's mock cluster writes no abort markers: read_committed still returns aborted records"
                    : "Tansu 0.6 writes the markers but sends read_committed readers no list of aborted transactions"
            ) {
                #expect(visible.allSatisfy { $0.hasPrefix("committed-") })
            }
            if kind == .tansu {
                // The markers themselves, read from the log: the first five aborted, the rest committed.
                let log = try KafkaLogReader(bootstrapServers: broker.bootstrapServers).read(
                    topic: output, partition: 0)
                let text = { (records: [KafkaLogReader.Record]) in
                    records.compactMap { $0.value.map { String(decoding: $0, as: UTF8.self) } }
                }
                #expect(text(log.aborted) == (0..<5).map { "aborted-\($0)" })
                #expect(text(log.committed) == (0..<5).map { "committed-\($0)" })
                #expect(log.open.isEmpty)
            }
            await broker.stop()
        }

        @Test("an abortable error surfaces as requiring abort; abort and retry succeed")
        func abortableError() throws {
            let (broker, output) = try self.brokerWithOutput()

            let producer = try self.transactionalProducer(
                broker, id: KafkaTestSupport.uniqueTopic("txn"), reports: DeliveryLog())
            // TOPIC_AUTHORIZATION_FAILED
            try broker.pushRequestErrors(.addPartitionsToTransaction, [KafkaError.Code(rawValue: 29)])
            try producer.beginTransaction()
            try producer.produce(topic: output, key: nil, value: Array("doomed".utf8))
            let error = #expect(throws: KafkaError.self) {
                try producer.commitTransaction(timeout: .seconds(10))
            }
            #expect(error?.requiresTransactionAbort == true)
            #expect(error?.isFatal == false)

            try producer.abortTransaction(timeout: .seconds(10))
            try producer.beginTransaction()
            try producer.produce(topic: output, key: nil, value: Array("retried".utf8))
            try producer.commitTransaction(timeout: .seconds(10))
        }

        @Test("retriable coordinator errors on EndTxn are retried inside commit")
        func retriableEndTransaction() throws {
            let (broker, output) = try self.brokerWithOutput()

            let reports = DeliveryLog()
            let producer = try self.transactionalProducer(
                broker, id: KafkaTestSupport.uniqueTopic("txn"), reports: reports)
            try producer.beginTransaction()
            try producer.produce(topic: output, key: nil, value: Array("kept".utf8))
            try broker.pushRequestErrors(
                .endTransaction, [.notCoordinator, .coordinatorNotAvailable, .concurrentTransactions])
            try producer.commitTransaction(timeout: .seconds(20))
            #expect(reports.outcomes.map(\.error) == [nil])
        }

        @Test("a fenced producer gets a fatal error and must stop")
        func fencing() throws {
            let (broker, output) = try self.brokerWithOutput()
            let id = KafkaTestSupport.uniqueTopic("txn")

            let first = try self.transactionalProducer(broker, id: id, reports: DeliveryLog())
            try first.beginTransaction()
            try first.produce(topic: output, key: nil, value: Array("before".utf8))
            try first.commitTransaction(timeout: .seconds(10))

            // What a broker answers a zombie whose epoch was bumped by a successor. A fenced write is
            // abortable in librdkafka 2.0.2; the coordinator refusing the zombie's EndTxn is fatal.
            try broker.pushRequestErrors(.produce, [.producerFenced])
            try first.beginTransaction()
            try first.produce(topic: output, key: nil, value: Array("zombie".utf8))
            let abortable = #expect(throws: KafkaError.self) {
                try first.commitTransaction(timeout: .seconds(10))
            }
            #expect(abortable?.code == .producerFenced)
            #expect(abortable?.requiresTransactionAbort == true)
            try broker.pushRequestErrors(.endTransaction, [.producerFenced])
            let error = #expect(throws: KafkaError.self) {
                try first.abortTransaction(timeout: .seconds(10))
            }
            #expect(error?.isFatal == true)
            #expect(first.fatalError != nil)
            #expect(throws: KafkaError.self) { try first.beginTransaction() }

            // A real cluster bumps the epoch on a successor's InitProducerId and refuses the zombie's
            // next write by itself; the mock gives each InitProducerId a new producer id instead.
            let second = try self.transactionalProducer(broker, id: id, reports: DeliveryLog())
            try second.beginTransaction()
            try second.produce(topic: output, key: nil, value: Array("successor".utf8))
            try second.commitTransaction(timeout: .seconds(10))
        }

        /// librdkafka 2.0.2 sets the result of a call that meets a fatal error twice; when the caller
        /// takes the first before the second arrives, the next call returns the second without
        /// running (the fencing test above then saw `beginTransaction` succeed, once in CI). A fatal
        /// error raised between calls leaves the transaction state as it was, so librdkafka itself
        /// would begin a transaction here: only the producer's own check refuses.
        @Test("a producer stopped by a fatal error refuses every transactional call")
        func fatalRefusesTransactions() throws {
            let (broker, output) = try self.brokerWithOutput()
            let producer = try self.transactionalProducer(
                broker, id: KafkaTestSupport.uniqueTopic("txn"), reports: DeliveryLog())
            try producer.beginTransaction()
            try producer.produce(topic: output, key: nil, value: Array("kept".utf8))
            try producer.commitTransaction(timeout: .seconds(10))

            producer.raiseFatalError(.fenced, reason: "a successor took the transactional id")
            let begin = #expect(throws: KafkaError.self) { try producer.beginTransaction() }
            #expect(begin?.isFatal == true)
            #expect(begin?.code == .fenced)
            let commit = #expect(throws: KafkaError.self) { try producer.commitTransaction(timeout: .seconds(1)) }
            #expect(commit?.isFatal == true)
            let abort = #expect(throws: KafkaError.self) { try producer.abortTransaction(timeout: .seconds(1)) }
            #expect(abort?.isFatal == true)
        }
    }
}
