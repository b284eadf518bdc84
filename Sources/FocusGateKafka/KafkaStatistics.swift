import Foundation

/// librdkafka's statistics, emitted every `statistics.interval.ms`.
///
/// The full JSON document is kept in ``json``; the figures FocusGate's metrics need are decoded
/// on demand. The document's layout is described in librdkafka's STATISTICS.md.
public struct KafkaStatistics: Sendable {
    /// The raw statistics JSON document.
    public let json: String
    /// The figures read from ``json``, decoded once.
    private let decoded: Document?

    /// Creates statistics from librdkafka's JSON document.
    public init(json: String) {
        self.json = json
        self.decoded = try? JSONDecoder().decode(Document.self, from: Data(json.utf8))
    }

    /// One partition's figures. Offsets are `nil` where librdkafka reports them as unknown (-1001).
    public struct Partition: Sendable, Hashable {
        public var topic: String
        public var partition: Int32
        /// Records between the group's committed offset and the high watermark (`consumer_lag`):
        /// what is not yet durably processed.
        public var consumerLag: Int64?
        /// The offset after the last record handed to the application (`app_offset`).
        public var applicationOffset: Int64?
        /// The partition's high watermark as last seen (`hi_offset`).
        public var highWatermark: Int64?
        /// The last committed offset (`committed_offset`).
        public var committedOffset: Int64?
    }

    /// The client's name (`name`).
    public var clientName: String? { self.decoded?.name }

    /// Messages waiting in the producer queue (`msg_cnt`).
    public var queuedMessages: Int64? { self.decoded?.msg_cnt }

    /// Whether a broker of the cluster (a node id of 0 or more: not a bootstrap address or a
    /// logical broker) had its connection up (`brokers.*.state` `UP`); `nil` when the document
    /// names no such broker.
    public var hasBrokerUp: Bool? {
        let brokers = (self.decoded?.brokers ?? [:]).values.filter { ($0.nodeid ?? -1) >= 0 }
        guard !brokers.isEmpty else { return nil }
        return brokers.contains { $0.state == "UP" }
    }

    /// The consumer group handler's state (`cgrp.state`): `up` when the group coordinator is
    /// known and reachable; `nil` for a client without a group.
    public var groupState: String? { self.decoded?.cgrp?.state }

    /// Per partition figures; the internal `-1` (unassigned) partition is left out.
    public var partitions: [Partition] {
        guard let topics = self.decoded?.topics else { return [] }
        var result: [Partition] = []
        for (topic, entry) in topics.sorted(by: { $0.key < $1.key }) {
            for (_, partition) in entry.partitions where partition.partition >= 0 {
                result.append(
                    Partition(
                        topic: topic,
                        partition: partition.partition,
                        consumerLag: partition.consumer_lag.flatMap { $0 >= 0 ? $0 : nil },
                        applicationOffset: partition.app_offset.flatMap { $0 >= 0 ? $0 : nil },
                        highWatermark: partition.hi_offset.flatMap { $0 >= 0 ? $0 : nil },
                        committedOffset: partition.committed_offset.flatMap { $0 >= 0 ? $0 : nil }
                    )
                )
            }
        }
        return result.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
    }

    // MARK: - Decoding

    private struct Document: Decodable, Sendable {
        var name: String?
        var msg_cnt: Int64?
        var topics: [String: Topic]?
        var brokers: [String: Broker]?
        var cgrp: Group?
    }

    private struct Broker: Decodable, Sendable {
        var nodeid: Int32?
        var state: String?
    }

    private struct Group: Decodable, Sendable {
        var state: String?
    }

    private struct Topic: Decodable, Sendable {
        var partitions: [String: PartitionEntry]
    }

    private struct PartitionEntry: Decodable, Sendable {
        var partition: Int32
        var consumer_lag: Int64?
        var app_offset: Int64?
        var hi_offset: Int64?
        var committed_offset: Int64?
    }
}
