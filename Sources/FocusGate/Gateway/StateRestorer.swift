import FocusGateCore
import FocusGateKafka
import Logging

/// Reads a partition of the state changelog (`focusgate.state`) into a ``PartitionState`` before
/// the worker consumes the matching input partition (docs/contract.md, Guarantees).
///
/// The changelog is read with `read_committed` from its beginning up to the high watermark noted
/// at the start: on a real cluster an open transaction of a dead instance holds the read back
/// until the transaction times out, which is what keeps its uncommitted state out. Completion is
/// judged by offsets and the fetch position, not by end-of-partition events (librdkafka 2.0.2
/// raises those at the last stable offset).
///
/// A transaction's records of a partition end with a commit marker holding the input offset they
/// are state as of, and each carries that offset in its `as-of` header: a marker closes the
/// records as of its offset or earlier, in the order of their offsets, and records as of a later
/// one (another writer's, sent before its transaction aborted) wait for theirs. Records are
/// applied a marker at a time: a group whose marker is past the
/// input partition's committed offset was written by a transaction whose offsets never committed,
/// so it is skipped, as are records after the last marker (a commit cut short). A real cluster
/// hides such records from `read_committed` already; the embedded broker writes no abort markers
/// and shows them, and without this check a restore after an abort brought back state whose
/// outputs the abort had purged (badges then disagreed with the inputs). A group whose marker is
/// behind one applied before it is skipped too: it was written late, by a member that had lost
/// the partition (its commit then failed) or an aborted transaction, after the state of newer
/// input had been written; applied, it would put keys back as they were before that input.
/// Processing is deterministic, so a skipped group's changes are in the groups applied around it.
/// On a compacted topic only the newest marker survives, and it closes every record before it.
///
/// A record of the first state form (whole users keyed by user id) is refused: the worker stops
/// with a message that says so (docs/state.md, "Upgrading").
final class StateRestorer {
    private let consumer: KafkaConsumer
    private let topic: String
    /// The input topic (`notifications`), whose partitions the changelog's partitions follow.
    private let inputTopic: String
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
        self.inputTopic = configuration.topics.notifications
        self.timeout = configuration.operationTimeout * 2
        self.logger = logger
    }

    deinit {
        self.consumer.close()
    }

    /// Closes the restorer's consumer (again at deinit: closing twice does nothing).
    func close() {
        self.consumer.close()
    }

    /// The state of input partition `partition`, as last committed.
    ///
    /// - Parameters:
    ///   - partition: The input partition, and the changelog partition with its state.
    ///   - committed: The input partition's committed offset; `nil` when there is none: the
    ///     consumer then starts at the input partition's beginning, and the state taken is as of
    ///     it (its low watermark). A group whose marker is past that belongs to a transaction
    ///     whose offsets never committed, as when the offsets are there: on the embedded broker,
    ///     which shows aborted records, taking it brought back state of inputs that the consumer
    ///     then read again as duplicates and never wrote to the changelog in a commit of its own,
    ///     so that the next restore, at the offsets committed meanwhile, lacked them.
    ///   - state: Receives the users' state.
    /// - Returns: The changelog records read, and how many of them were skipped as uncommitted.
    /// - Throws: ``KafkaError`` when the read makes no progress for twice the operation timeout
    ///   (however long the whole restore takes while it progresses); the partition must not be
    ///   consumed then.
    func restore(partition: Int32, committed: Int64?, into state: inout PartitionState) throws(KafkaError) -> (
        records: Int, uncommitted: Int
    ) {
        let (low, high) = try self.consumer.watermarks(topic: self.topic, partition: partition, timeout: self.timeout)
        guard high > low else { return (0, 0) }
        try self.consumer.assign([KafkaTopicPartition(topic: self.topic, partition: partition, offset: low)])
        defer { try? self.consumer.assign([]) }
        let started = ContinuousClock.now
        var progressed = started
        var nextReport = started + .seconds(1)
        var next = low
        var group = ChangelogGroup()
        let limit: Int64
        if let committed, committed >= 0 {
            limit = committed
        } else {
            limit = try self.consumer.watermarks(topic: self.inputTopic, partition: partition, timeout: self.timeout)
                .low
        }
        var legacy = false
        while next < high && !legacy {
            let before = next
            let count = self.consumer.consumeBatch(maxRecords: 4096, timeout: .milliseconds(100)) { batch in
                for record in batch where record.partition == partition && record.offset >= next {
                    next = record.offset + 1
                    guard let key = record.key else { continue }
                    if let through = PartitionState.commitMarkerOffset(key: key, value: record.value) {
                        group.close(through: through, committed: limit, to: &state)
                    } else if key.first != 0 {
                        legacy = true
                        return batch.count
                    } else {
                        let asOf = record.header(PartitionState.asOfHeader).flatMap {
                            $0.flatMap(PartitionState.asOfOffset)
                        }
                        group.append(key: key, value: record.value, asOf: asOf)
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
            let now = ContinuousClock.now
            if next > before { progressed = now }
            if now >= nextReport {
                nextReport = now + .seconds(1)
                self.logger.info(
                    "restoring state",
                    metadata: [
                        "kafka.topic": "\(self.topic)", "kafka.partition": "\(partition)",
                        "focusgate.state.read": "\(next - low)", "focusgate.state.total": "\(high - low)",
                        "focusgate.state.users": "\(state.userCount)",
                    ])
            }
            if now - progressed > self.timeout {
                throw KafkaError(
                    code: .timedOut,
                    message:
                        "restoring \(self.topic)/\(partition): no record for \(self.timeout) at offset \(next) of \(high)"
                )
            }
        }
        if legacy {
            throw KafkaError(
                code: .state,
                message: """
                    \(self.topic)/\(partition) holds state records of the first state form (one record per user), \
                    which this version does not read. Stop every instance, delete and recreate the topic \
                    (badges and dedupe windows start empty), then start again; see docs/state.md, "Upgrading"
                    """, isFatal: true)
        }
        let uncommitted = group.skipped + group.skippedLate + group.count
        state.finishRestore()
        if uncommitted > 0 {
            self.logger.warning(
                "state records of transactions that did not commit their offsets were skipped",
                metadata: [
                    "kafka.topic": "\(self.topic)", "kafka.partition": "\(partition)",
                    "kafka.offset.committed": "\(limit)", "focusgate.records": "\(uncommitted)",
                    "focusgate.records.late": "\(group.skippedLate)",
                ]
            )
        }
        if group.interleaved > 0 {
            self.logger.info(
                "state records that another commit's marker came after were kept for their own",
                metadata: [
                    "kafka.topic": "\(self.topic)", "kafka.partition": "\(partition)",
                    "focusgate.records": "\(group.interleaved)",
                ]
            )
        }
        if group.unreadable > 0 {
            self.logger.error(
                "state records this version cannot read were dropped",
                metadata: [
                    "kafka.topic": "\(self.topic)", "kafka.partition": "\(partition)",
                    "focusgate.records": "\(group.unreadable)",
                ]
            )
        }
        return (Int(next - low), uncommitted)
    }
}
