/// A topic to create: name, partitions, replication and topic-level configuration.
public struct KafkaTopicSpecification: Sendable, Hashable {
    /// The topic name.
    public var name: String
    /// Number of partitions.
    public var partitions: Int
    /// Replicas per partition; `-1` uses the cluster's `default.replication.factor`. Default: `-1`.
    public var replicationFactor: Int = -1
    /// Topic-level configuration, e.g. `cleanup.policy`, `retention.ms`. Default: empty.
    public var config: [String: String] = [:]

    /// Creates a topic specification.
    public init(name: String, partitions: Int, replicationFactor: Int = -1, config: [String: String] = [:]) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.config = config
    }

    /// A log-compacted topic (`cleanup.policy=compact`): the newest record per key is kept.
    public static func compacted(_ name: String, partitions: Int, replicationFactor: Int = -1)
        -> KafkaTopicSpecification
    {
        KafkaTopicSpecification(
            name: name, partitions: partitions, replicationFactor: replicationFactor,
            config: ["cleanup.policy": "compact"]
        )
    }

    /// Whether records are compacted by key rather than deleted by age.
    public var isCompacted: Bool {
        self.config["cleanup.policy"]?.contains("compact") ?? false
    }
}
