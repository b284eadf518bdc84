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
///
/// Each state record carries the input offset its transaction committed (``throughHeader``). A
/// record marked past the input partition's committed offset was written by a transaction whose
/// offsets never committed, so it is skipped and the user's previous record stands. A real cluster
/// hides such records from `read_committed` already; the embedded broker writes no abort markers
/// and shows them, and without this check a restore after an abort brought back state whose
/// outputs the abort had purged (badges then disagreed with the inputs).
final class StateRestorer {
    /// The header holding the input offset a state record is state as of.
    static let throughHeader = "focusgate-through"

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
    /// - Parameters:
    ///   - partition: The input partition, and the changelog partition with its state.
    ///   - committed: The input partition's committed offset; `nil` when there is none (every
    ///     record is taken then, marked or not, as are unmarked records always).
    ///   - state: Receives the users' state.
    /// - Returns: The changelog records read, and how many of them were skipped as uncommitted.
    /// - Throws: ``KafkaError`` when the changelog cannot be read to its end within twice the
    ///   operation timeout; the partition must not be consumed then.
    func restore(partition: Int32, committed: Int64?, into state: inout PartitionState) throws(KafkaError) -> (
        records: Int, uncommitted: Int
    ) {
        let (low, high) = try self.consumer.watermarks(topic: self.topic, partition: partition, timeout: self.timeout)
        guard high > low else { return (0, 0) }
        try self.consumer.assign([KafkaTopicPartition(topic: self.topic, partition: partition, offset: low)])
        defer { try? self.consumer.assign([]) }
        let deadline = ContinuousClock.now + self.timeout
        var next = low
        var records = 0
        var unreadable = 0
        var uncommitted = 0
        let limit = committed.flatMap { $0 >= 0 ? $0 : nil } ?? .max
        while next < high {
            let count = self.consumer.consumeBatch(maxRecords: 4096, timeout: .milliseconds(100)) { batch in
                for record in batch where record.partition == partition && record.offset >= next {
                    next = record.offset + 1
                    guard let key = record.key else { continue }
                    if limit != .max, let through = Self.through(record), through > limit {
                        uncommitted += 1
                        continue
                    }
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
        if uncommitted > 0 {
            self.logger.warning(
                "state records of transactions that did not commit their offsets were skipped",
                metadata: [
                    "kafka.topic": "\(self.topic)", "kafka.partition": "\(partition)",
                    "kafka.offset.committed": "\(limit)", "focusgate.records": "\(uncommitted)",
                ]
            )
        }
        if unreadable > 0 {
            self.logger.error(
                "state records this version cannot read were dropped",
                metadata: [
                    "kafka.topic": "\(self.topic)", "kafka.partition": "\(partition)",
                    "focusgate.records": "\(unreadable)",
                ]
            )
        }
        return (records, uncommitted)
    }

    /// The input offset a state record is marked with; `nil` when unmarked or unreadable.
    private static func through(_ record: KafkaRecord) -> Int64? {
        guard case .some(.some(let bytes)) = record.header(Self.throughHeader) else { return nil }
        return Int64(String(decoding: bytes, as: UTF8.self))
    }
}
