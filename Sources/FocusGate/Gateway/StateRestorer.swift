import FocusGateCore
import FocusGateKafka
import Logging

/// Reads a partition of the state changelog (`focusgate.state`) into a ``PartitionState`` before
/// the worker consumes the matching input partition (SPEC §8).
///
/// The changelog is read with `read_committed` from its beginning up to the high watermark noted
/// at the start: on a real cluster an open transaction of a dead instance holds the read back
/// until the transaction times out, which is what keeps its uncommitted state out. Completion is
/// judged by offsets and the fetch position, not by end-of-partition events (librdkafka 2.0.2
/// raises those at the last stable offset).
final class StateRestorer {
    private let consumer: KafkaConsumer
    private let topic: String
    private let timeout: Duration
    private let logger: Logger

    init(configuration: GatewayConfiguration, logger: Logger) throws(KafkaError) {
        var consumerConfiguration = KafkaConsumerConfiguration(
            bootstrapServers: configuration.bootstrapServers, groupID: nil)
        consumerConfiguration.properties = configuration.kafkaProperties
        consumerConfiguration.isolationLevel = .readCommitted
        consumerConfiguration.prefetch = .librdkafkaDefault
        if consumerConfiguration.properties["fetch.wait.max.ms"] == nil {
            consumerConfiguration.properties["fetch.wait.max.ms"] = "10"
        }
        self.consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: logger)
        self.topic = configuration.topics.state
        self.timeout = configuration.operationTimeout * 2
        self.logger = logger
    }

    deinit {
        self.consumer.close()
    }

    /// The state of input partition `partition`, as last committed.
    ///
    /// - Throws: ``KafkaError`` when the changelog cannot be read to its end within twice the
    ///   operation timeout; the partition must not be consumed then.
    func restore(partition: Int32, into state: inout PartitionState) throws(KafkaError) -> Int {
        let (low, high) = try self.consumer.watermarks(topic: self.topic, partition: partition, timeout: self.timeout)
        guard high > low else { return 0 }
        try self.consumer.assign([KafkaTopicPartition(topic: self.topic, partition: partition, offset: low)])
        defer { try? self.consumer.assign([]) }
        let deadline = ContinuousClock.now + self.timeout
        var next = low
        var records = 0
        var unreadable = 0
        while next < high {
            let count = self.consumer.consumeBatch(maxRecords: 4096, timeout: .milliseconds(100)) { batch in
                for record in batch where record.partition == partition && record.offset >= next {
                    next = record.offset + 1
                    guard let key = record.key else { continue }
                    let userID = String(decoding: key, as: UTF8.self)
                    do {
                        try state.restore(userID: userID, from: record.value.map { Array($0) })
                    } catch {
                        unreadable += 1
                        try? state.restore(userID: userID, from: nil)
                    }
                }
                return batch.count
            }
            if count == 0,
                let position = try? self.consumer.position([
                    KafkaTopicPartition(topic: self.topic, partition: partition)
                ]).first?.offset,
                position >= high
            {
                break  // only control records (transaction markers) were left
            }
            if ContinuousClock.now > deadline {
                throw KafkaError(
                    code: .timedOut, message: "restoring \(self.topic)/\(partition): reached offset \(next) of \(high)")
            }
        }
        records = high - low > 0 ? Int(next - low) : 0
        if unreadable > 0 {
            self.logger.error(
                "state records this version cannot read were dropped",
                metadata: [
                    "kafka.topic": "\(self.topic)", "kafka.partition": "\(partition)",
                    "focusgate.records": "\(unreadable)",
                ]
            )
        }
        return records
    }
}
