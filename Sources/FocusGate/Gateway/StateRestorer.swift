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
/// are state as of, and each carries that offset in its `as-of` header. The restore first reads
/// the partition's tail for its last marker (on a compacted topic the only one left), then
/// streams the partition from its beginning, applying each record as it is read
/// (``ChangelogStream``): memory beyond the state does not grow with the partition. A record is
/// taken when it lies before the last marker and its commit is as of an offset the markers close
/// and the input partition's committed offset covers. Past it, its transaction's offsets never
/// committed: a real cluster hides aborted records from `read_committed` already; the embedded
/// broker writes no abort markers and shows them, and without this check a restore after an
/// abort brought back state whose outputs the abort had purged. A record behind state applied
/// before it is skipped too: written late, by a member that had lost the partition, it would put
/// keys back as they were before newer input. Processing is deterministic, so a skipped
/// commit's changes are in the commits applied around it. Records written before the header
/// existed belong to the next marker and wait for it (``ChangelogGroup``).
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
    ///   - cancelled: Asked between batches of records; once it says `true` the restore stops
    ///     (the partition was revoked meanwhile) and returns `nil`.
    /// - Returns: The changelog records read, and how many of them were skipped as uncommitted;
    ///   `nil` when cancelled.
    /// - Throws: ``KafkaError`` when the read makes no progress for twice the operation timeout
    ///   (however long the whole restore takes while it progresses); the partition must not be
    ///   consumed then.
    func restore(
        partition: Int32, committed: Int64?, into state: inout PartitionState, cancelled: () -> Bool = { false }
    ) throws(KafkaError) -> (records: Int, uncommitted: Int)? {
        let (low, high) = try self.consumer.watermarks(topic: self.topic, partition: partition, timeout: self.timeout)
        guard high > low else { return (0, 0) }
        defer { try? self.consumer.assign([]) }
        let limit: Int64
        if let committed, committed >= 0 {
            limit = committed
        } else {
            limit = try self.consumer.watermarks(topic: self.inputTopic, partition: partition, timeout: self.timeout)
                .low
        }
        var stream = ChangelogStream(
            closing: try self.closingMarker(partition: partition, low: low, high: high), committed: limit)
        var legacy = false
        let complete = try self.read(
            partition: partition, from: low, to: high, logging: true, users: { state.userCount }, cancelled: cancelled
        ) { record in
            guard let key = record.key else { return true }
            guard key.first == 0 else {
                legacy = true
                return false
            }
            let asOf = record.header(PartitionState.asOfHeader).flatMap { $0.flatMap(PartitionState.asOfOffset) }
            stream.take(
                offset: record.offset, key: key, value: record.value, asOf: asOf, writtenAt: record.timestamp,
                to: &state)
            return true
        }
        guard complete else { return nil }
        if legacy {
            throw KafkaError(
                code: .state,
                message: """
                    \(self.topic)/\(partition) holds state records of the first state form (one record per user), \
                    which this version does not read. Stop every instance, delete and recreate the topic \
                    (badges and dedupe windows start empty), then start again; see docs/state.md, "Upgrading"
                    """, isFatal: true)
        }
        state.finishRestore()
        let uncommitted = stream.notApplied
        if uncommitted > 0 {
            self.logger.warning(
                "state records of transactions that did not commit their offsets were skipped",
                metadata: [
                    "kafka.topic": "\(self.topic)", "kafka.partition": "\(partition)",
                    "kafka.offset.committed": "\(limit)", "focusgate.records": "\(uncommitted)",
                    "focusgate.records.late": "\(stream.skippedLate + stream.legacy.skippedLate)",
                ]
            )
        }
        if stream.unreadable + stream.legacy.unreadable > 0 {
            self.logger.error(
                "state records this version cannot read were dropped",
                metadata: [
                    "kafka.topic": "\(self.topic)", "kafka.partition": "\(partition)",
                    "focusgate.records": "\(stream.unreadable + stream.legacy.unreadable)",
                ]
            )
        }
        return (Int(high - low), uncommitted)
    }

    /// The partition's last commit marker and the newest offset the markers of its tail close:
    /// read from the end back, in windows growing eightfold until one holds a marker (on a
    /// compacted topic only the newest marker is left, with at most one commit's records after
    /// it). `nil` when the partition has none.
    private func closingMarker(partition: Int32, low: Int64, high: Int64) throws(KafkaError) -> (
        lastMarker: Int64, through: Int64
    )? {
        var window: Int64 = 4096
        while true {
            let start = max(low, high - window)
            var last: Int64?
            var through = Int64.min
            _ = try self.read(partition: partition, from: start, to: high, logging: false, users: { 0 }) { record in
                if let key = record.key, let marker = PartitionState.commitMarkerOffset(key: key, value: record.value) {
                    last = record.offset
                    through = max(through, marker)
                }
                return true
            }
            if let last { return (last, through) }
            guard start > low else { return nil }
            window *= 8
        }
    }

    /// Reads the partition's records from `start` to `end` (exclusive), handing each to `body`
    /// until it returns `false`; logs progress every second when `logging` (with `users`, the
    /// users so far) and throws when no record comes for twice the operation timeout. Returns
    /// `false` when `cancelled` stopped it first.
    private func read(
        partition: Int32, from start: Int64, to end: Int64, logging: Bool, users: () -> Int,
        cancelled: () -> Bool = { false }, _ body: (KafkaRecord) -> Bool
    ) throws(KafkaError) -> Bool {
        try self.consumer.assign([KafkaTopicPartition(topic: self.topic, partition: partition, offset: start)])
        let started = ContinuousClock.now
        var progressed = started
        var nextReport = started + .seconds(1)
        var next = start
        var going = true
        while next < end && going {
            if cancelled() { return false }
            let before = next
            let count = self.consumer.consumeBatch(maxRecords: 4096, timeout: .milliseconds(100)) { batch in
                for record in batch where record.partition == partition && record.offset >= next {
                    next = record.offset + 1
                    if next > end { break }
                    guard body(record) else {
                        going = false
                        break
                    }
                }
                return batch.count
            }
            if count == 0,
                let position = try? self.consumer.position([
                    KafkaTopicPartition(topic: self.topic, partition: partition)
                ]).first?.offset,
                position >= end
            {
                break  // only control records (transaction markers) were left
            }
            let now = ContinuousClock.now
            if next > before { progressed = now }
            if logging, now >= nextReport {
                nextReport = now + .seconds(1)
                self.logger.info(
                    "restoring state",
                    metadata: [
                        "kafka.topic": "\(self.topic)", "kafka.partition": "\(partition)",
                        "focusgate.state.read": "\(next - start)", "focusgate.state.total": "\(end - start)",
                        "focusgate.state.users": "\(users())",
                    ])
            }
            if now - progressed > self.timeout {
                throw KafkaError(
                    code: .timedOut,
                    message:
                        "restoring \(self.topic)/\(partition): no record for \(self.timeout) at offset \(next) of \(end)"
                )
            }
        }
        return true
    }
}
