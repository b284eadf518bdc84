/// Settings of a ``KafkaConsumer``.
///
/// Offsets are managed by the application: auto-commit and automatic offset storing are off, and
/// the application commits (or sends offsets with a transaction) what it has processed.
public struct KafkaConsumerConfiguration: Sendable {
    /// Comma-separated `host:port` list (`bootstrap.servers`).
    public var bootstrapServers: String
    /// The consumer group (`group.id`); `nil` for a consumer that only uses manual assignment.
    ///
    /// librdkafka's consumer API needs a `group.id` even then: a consumer without a group gets
    /// ``manualAssignmentGroupID``, never joins it, and should not commit.
    public var groupID: String?

    /// The `group.id` given to a consumer configured without a group.
    public static let manualAssignmentGroupID = "focusgate.manual-assignment"
    /// The client id reported to brokers (`client.id`). Default: `"focusgate"`.
    public var clientID: String = "focusgate"
    /// Where to start when the group has no committed offset (`auto.offset.reset`). Default: `.earliest`.
    public var autoOffsetReset: AutoOffsetReset = .earliest
    /// Which records are visible (`isolation.level`). Default: `.readCommitted`.
    public var isolationLevel: IsolationLevel = .readCommitted
    /// The partition assignment strategy (`partition.assignment.strategy`). Default: `.cooperativeSticky`.
    public var assignmentStrategy: AssignmentStrategy = .cooperativeSticky
    /// Time without heartbeats after which the group coordinator drops a member (`session.timeout.ms`).
    /// Default: `45` seconds.
    public var sessionTimeout: Duration = .seconds(45)
    /// Joins the group as a static member with this id (`group.instance.id`, KIP-345): a member
    /// that comes back with the same id within ``sessionTimeout`` takes back its partitions
    /// without a rebalance, and one that closes does not leave the group (its partitions wait
    /// out the session). Unique within the group. Default: `nil`, a dynamic member.
    public var groupInstanceID: String?
    /// How long ``KafkaConsumer/close()`` waits for a group member's first assignment when it closes
    /// before one arrived (librdkafka 2.0.2 aborts the process when such a consumer is destroyed
    /// between the group's JoinGroup and SyncGroup answers). A consumer still unassigned after the
    /// wait is closed and left allocated. Default: `10` seconds.
    public var firstAssignmentWait: Duration = .seconds(10)
    /// Prefetch limits; see ``Prefetch``.
    public var prefetch: Prefetch = .throughput
    /// Sends each request as soon as it is written, without waiting for the acknowledgement of
    /// the previous small one (`socket.nagle.disable`, i.e. `TCP_NODELAY`): with Nagle's algorithm,
    /// a request can wait up to 40 ms for a delayed ACK. Default: `true` (librdkafka's is `false`).
    public var disablesNagle: Bool = true
    /// Emit statistics at this interval (`statistics.interval.ms`); `nil` turns them off. Default: `nil`.
    public var statisticsInterval: Duration?
    /// Any librdkafka property, passed through; wins over a typed setting of the same name. One that
    /// librdkafka defines for producers only is left out. Default: empty.
    public var properties: [String: String] = [:]

    /// Creates a configuration for the given brokers and group.
    public init(bootstrapServers: String, groupID: String?) {
        self.bootstrapServers = bootstrapServers
        self.groupID = groupID
    }

    /// The librdkafka properties this configuration stands for.
    public var rdkafkaProperties: [(String, String)] {
        var typed: [(String, String)] = [
            ("bootstrap.servers", self.bootstrapServers),
            ("client.id", self.clientID),
            ("enable.auto.commit", "false"),
            ("enable.auto.offset.store", "false"),
            ("enable.partition.eof", "false"),
            ("auto.offset.reset", self.autoOffsetReset.rawValue),
            ("isolation.level", self.isolationLevel.rawValue),
            ("partition.assignment.strategy", self.assignmentStrategy.rawValue),
            ("session.timeout.ms", String(self.sessionTimeout.wholeMilliseconds)),
            ("queued.min.messages", String(self.prefetch.minMessages)),
            ("queued.max.messages.kbytes", String(self.prefetch.maxKilobytes)),
            ("socket.nagle.disable", self.disablesNagle ? "true" : "false"),
        ]
        typed.append(("group.id", self.groupID ?? Self.manualAssignmentGroupID))
        if let instance = self.groupInstanceID, self.groupID != nil {
            typed.append(("group.instance.id", instance))
        }
        if let interval = self.statisticsInterval {
            typed.append(("statistics.interval.ms", String(interval.wholeMilliseconds)))
        }
        return mergedProperties(typed: typed, passThrough: self.properties, for: .consumer)
    }
}

// MARK: - Option types

extension KafkaConsumerConfiguration {
    /// Where a consumer starts without a committed offset.
    public struct AutoOffsetReset: Sendable, Hashable {
        public let rawValue: String
        /// The oldest record still in the partition.
        public static let earliest = AutoOffsetReset(rawValue: "earliest")
        /// Only records produced from now on.
        public static let latest = AutoOffsetReset(rawValue: "latest")
        /// Fail with an error.
        public static let error = AutoOffsetReset(rawValue: "error")
    }

    /// Which records a consumer sees.
    public struct IsolationLevel: Sendable, Hashable {
        public let rawValue: String
        /// Only records of committed transactions (and non-transactional records).
        public static let readCommitted = IsolationLevel(rawValue: "read_committed")
        /// Every record, including those of open or aborted transactions.
        public static let readUncommitted = IsolationLevel(rawValue: "read_uncommitted")
    }

    /// How partitions are shared among the members of a group.
    public struct AssignmentStrategy: Sendable, Hashable {
        public let rawValue: String
        /// Incremental (cooperative) rebalancing: only moved partitions are revoked.
        public static let cooperativeSticky = AssignmentStrategy(rawValue: "cooperative-sticky")
        /// Eager rebalancing with range assignment.
        public static let range = AssignmentStrategy(rawValue: "range")
        /// Eager rebalancing with round-robin assignment.
        public static let roundRobin = AssignmentStrategy(rawValue: "roundrobin")
    }

    /// How much librdkafka fetches ahead of the application.
    ///
    /// librdkafka 2.0.2's defaults (100,000 messages or 64 MB per partition) pause fetching for up
    /// to a second once passed, which caps a backlogged pipeline at a sixth of what the library can
    /// do. ``throughput`` raises both limits.
    public struct Prefetch: Sendable, Hashable {
        /// `queued.min.messages`.
        public var minMessages: Int
        /// `queued.max.messages.kbytes`.
        public var maxKilobytes: Int

        /// Creates prefetch limits.
        public init(minMessages: Int, maxKilobytes: Int) {
            self.minMessages = minMessages
            self.maxKilobytes = maxKilobytes
        }

        /// 10,000,000 messages and 2,097,151 KiB (librdkafka's maximum). Default.
        public static let throughput = Prefetch(minMessages: 10_000_000, maxKilobytes: 2_097_151)
        /// librdkafka's own defaults: 100,000 messages and 65,536 KiB.
        public static let librdkafkaDefault = Prefetch(minMessages: 100_000, maxKilobytes: 65_536)
    }
}
