import FocusGateKafka
import Logging

/// The start's check of the contract's topics (docs/contract.md, "Creating the topics"): every
/// topic exists, `focusgate.state` has as many partitions as `notifications` (a user's state goes
/// to the partition index of the user's notifications), the compacted topics are compacted and
/// `focusgate.state` keeps the writer's timestamps, and every topic FocusGate writes takes the
/// largest record it may write (`max.message.bytes`; where the cluster answers DescribeConfigs:
/// not the embedded broker, which is not asked). A definite answer that something is wrong stops
/// the start with the key named (exit status 2); a cluster that does not answer is not held
/// against the start (readiness reports it), and the check is skipped with a warning.
enum TopicCheck {
    /// Checks `topics` on the cluster at `bootstrapServers`: asks up to `attempts` times, each
    /// waiting up to `timeout`, until `shouldStop` says to give up.
    ///
    /// - Throws: ``ServerConfiguration/Error`` naming the `topics.*` key of the first topic that
    ///   is missing or whose partitions do not match.
    ///
    /// `largestRecord`: the producer's `message.max.bytes`, which every record (and batch)
    /// FocusGate writes fits by construction.
    static func verify(
        _ topics: TopicNames, bootstrapServers: String, properties: [String: String], largestRecord: Int,
        attempts: Int, timeout: Duration, shouldStop: () -> Bool, logger: Logger
    ) throws {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers, groupID: nil)
        configuration.properties = properties
        let consumer = try KafkaConsumer(configuration: configuration, logger: logger)
        defer { consumer.close() }
        var answer: [String: Int]?
        var lastError: KafkaError?
        for _ in 0..<attempts where answer == nil && !shouldStop() {
            do {
                answer = try consumer.topicPartitionCounts(timeout: timeout)
            } catch {
                lastError = error
            }
        }
        guard let counts = answer else {
            if !shouldStop() {
                logger.warning(
                    "the topics were not checked: the cluster did not answer",
                    metadata: ["kafka.error": "\(lastError.map { "\($0)" } ?? "none")"])
            }
            return
        }
        for (key, name) in Self.keys(topics) where counts[name] == nil {
            throw ServerConfiguration.Error(
                key: key,
                message:
                    "topic \(name) does not exist on the cluster; create the topics first (docs/contract.md, \"Creating the topics\")"
            )
        }
        try Self.checkPartitions(topics, counts: counts)
        // cleanup.policy of the compacted topics, where the cluster answers DescribeConfigs: not
        // the embedded broker, which would keep the start waiting for the request's timeout.
        if let clusterID = consumer.clusterID(timeout: timeout),
            GatewayConfiguration.isEmbeddedBroker(clusterID: clusterID)
        {
            return
        }
        var adminProperties = properties
        adminProperties["bootstrap.servers"] = bootstrapServers
        let settings: [String: [String: String]]
        do {
            let admin = try KafkaAdmin(properties: adminProperties, logger: logger)
            settings = try admin.topicSettings(
                [Self.cleanupPolicy, Self.timestampType, Self.maxMessageBytes], of: Self.keys(topics).map(\.name),
                timeout: timeout)
        } catch {
            logger.notice(
                "the topics' settings not checked: the cluster does not describe topic settings",
                metadata: ["kafka.error": "\(error)"])
            return
        }
        try Self.checkCompaction(topics, policies: settings.compactMapValues { $0[Self.cleanupPolicy] })
        try Self.checkStateTimestamps(topics, type: settings[topics.state]?[Self.timestampType])
        try Self.checkRecordSizes(
            topics, limits: settings.compactMapValues { $0[Self.maxMessageBytes] }, largestRecord: largestRecord)
    }

    /// Every topic FocusGate writes (all but `notifications`) takes a record batch of
    /// `largestRecord` bytes (as `limits`, by topic, report `max.message.bytes`; a topic not
    /// reported is not judged): a copy of an input, a DLQ record or a context's invalidation that
    /// the broker refused would be refused again on every replay.
    static func checkRecordSizes(_ topics: TopicNames, limits: [String: String], largestRecord: Int) throws {
        for (key, name) in Self.keys(topics) where name != topics.notifications {
            guard let text = limits[name], let limit = Int(text), limit < largestRecord else { continue }
            throw ServerConfiguration.Error(
                key: key,
                message:
                    "topic \(name) has max.message.bytes=\(limit), below the \(largestRecord) bytes FocusGate's records may take (the producer's message.max.bytes, from limits.maxEventBytes): raise the topic's max.message.bytes, or lower limits.maxEventBytes and kafka.properties.message.max.bytes"
            )
        }
    }

    static let cleanupPolicy = "cleanup.policy"
    static let timestampType = "message.timestamp.type"
    static let maxMessageBytes = "max.message.bytes"

    /// `focusgate.state` keeps the timestamps FocusGate writes (`CreateTime`, Kafka's default):
    /// an entry's decided-at is written as its distance below its record's timestamp, which a
    /// broker's `LogAppendTime` would replace. `type` `nil`: not reported, not judged.
    static func checkStateTimestamps(_ topics: TopicNames, type: String?) throws {
        guard let type, type != "CreateTime" else { return }
        throw ServerConfiguration.Error(
            key: "topics.state",
            message:
                "topic \(topics.state) has message.timestamp.type=\(type); it must be CreateTime (the default): a state record's timestamp is part of it (an entry's decided-at is written relative to it)"
        )
    }

    /// `focusgate.state` has as many partitions as `notifications`.
    static func checkPartitions(_ topics: TopicNames, counts: [String: Int]) throws {
        let input = counts[topics.notifications] ?? 0
        let state = counts[topics.state] ?? 0
        guard state == input else {
            throw ServerConfiguration.Error(
                key: "topics.state",
                message:
                    "topic \(topics.state) has \(state) partitions and \(topics.notifications) \(input): they must be equal (a user's state goes to the partition index of the user's notifications)"
            )
        }
    }

    /// Every topic the contract says is compacted has `compact` among its `cleanup.policy`
    /// values (as `policies`, by topic, report them; a topic not reported is not judged).
    static func checkCompaction(_ topics: TopicNames, policies: [String: String]) throws {
        for (key, name) in Self.keys(topics) where topics.usages.contains(where: { $0.name == name && $0.isCompacted })
        {
            guard let policy = policies[name] else { continue }
            let values = policy.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard values.contains("compact") else {
                throw ServerConfiguration.Error(
                    key: key,
                    message:
                        "topic \(name) has cleanup.policy=\(policy); it must be compacted (cleanup.policy=compact): only the newest record of a key matters, and without compaction it grows without bound"
                )
            }
        }
    }

    /// Every topic with the configuration key that names it.
    static func keys(_ topics: TopicNames) -> [(key: String, name: String)] {
        [
            ("topics.notifications", topics.notifications), ("topics.invalidations", topics.invalidations),
            ("topics.delivered", topics.delivered), ("topics.silenced", topics.silenced),
            ("topics.badges", topics.badges), ("topics.status", topics.status),
            ("topics.summaries", topics.summaries), ("topics.dlq", topics.deadLetters),
            ("topics.state", topics.state),
        ]
    }
}
