public import FocusGateCore
import FocusGateKafka

/// How the notification pipeline runs (docs/contract.md, Guarantees and Configuration: `kafka.*`, `delivery.mode`, `commit.*`,
/// `workers`, `limits.*`, `badges.*`).
public struct GatewayConfiguration: Sendable {
    /// `kafka.bootstrapServers` (resolved: the embedded broker's address when it runs).
    public var bootstrapServers: String
    /// `kafka.groupId`. Default: `focusgate`.
    public var groupID = "focusgate"
    /// `kafka.properties`: librdkafka properties for every client. Default: none.
    public var kafkaProperties: [String: String] = [:]
    /// `topics.*`. Default: the names of docs/contract.md, Topics.
    public var topics = TopicNames()
    /// `delivery.mode`. Default: `.exactlyOnce`.
    public var deliveryMode: DeliveryMode = .exactlyOnce
    /// `commit.intervalMs`: how often outputs, state and offsets are committed (see
    /// ``CommitSchedule``: the first record after a commit is committed about one interval after
    /// it was produced). Default: 250 ms.
    public var commitInterval: Duration = .milliseconds(250)
    /// `commit.replayBackoffMs`: after the second abort in a row, the pause before the replay,
    /// doubled with each further abort up to ``maxReplayBackoff`` (``ReplayBackoff``); an abort
    /// the group's rebalancing caused never pauses, and zero never pauses at all. Default: 100 ms.
    public var replayBackoff: Duration = .milliseconds(100)
    /// `commit.replayBackoffMaxMs`: the longest pause before a replay. Default: 10 s.
    public var maxReplayBackoff: Duration = .seconds(10)
    /// `commit.maxAttemptsPerInput`: refusals of one input record's outputs after which the
    /// record is dead-lettered as `undeliverable` on its replay (one, for a refusal of its size)
    /// (``UndeliverableInputs``); as many aborts in a row also fail readiness's `progress`
    /// check. Default: `3`.
    public var maxAttemptsPerInput = 3
    /// `workers`: consume-decide-produce threads, each a group member. Default: `1`.
    public var workers = 1
    /// `limits.maxEventBytes`: larger input (key, value and headers) goes to the DLQ as
    /// `too-large`. Default: `65536`.
    public var maxEventBytes = 65_536
    /// The largest input record (key, value and headers) copied whole to the DLQ: the producer's
    /// `message.max.bytes` less FocusGate's own headers. A larger one goes bounded (its first
    /// bytes, without its headers), since its copy would not fit a record. Default: `995904`.
    public var maxCopyBytes = 1_000_000 - 4096
    /// `badges.maxUnreadPerApp`. Default: `1000`.
    public var maxUnreadPerApp = 1000
    /// `dedupe.windowPerUser`: notification ids remembered per user to drop duplicates. Default: `1000`.
    public var dedupeWindowPerUser = 1000
    /// `summaries.maxItemsPerApp`: notifications a summary names per app (its totals count them
    /// all). Default: `5`.
    public var summaryItemsPerApp = 5
    /// `people.repeatedWindowSeconds`: a sender's second notification within this long (by record
    /// timestamps) gets through a Focus that allows repeated senders. Default: 180 s.
    public var repeatedSenderWindow: Duration = .seconds(FocusDecider.defaultRepeatedSenderWindowSeconds)
    /// `rateLimits.*`: the caps for users whose context sets no `rateLimits`. Default: none.
    public var rateLimits: RateLimitPolicy = .none
    /// The wall clock decisions, `focusgate-decided-at` and context expiry go by. Default: the
    /// system's; tests inject one they can move.
    public var clock: any WallClock = SystemWallClock()
    /// Records taken from the consumer per batch. Default: `2048`.
    public var maxBatchRecords = 2048
    /// Most timers (Focus transitions) a worker fires per loop turn, between record batches
    /// (`timers.maxFiredPerBatch`). Default: `1000`.
    public var maxTimersPerBatch = 1000
    /// `state.retentionMs`: a remembered or unread notification decided longer ago than this is
    /// forgotten, and a user left with nothing with it; `0`: kept forever. Default: 30 days.
    public var stateRetentionMilliseconds: Int64 = 30 * 86_400_000
    /// Users of each partition the retention's sweep looks at per step, and how often it steps:
    /// a partition of a million users is gone through in about two minutes, a step costing
    /// about as much as a small batch of records.
    public var retentionSweepUsers = 2_000
    public var retentionSweepInterval: Duration = .milliseconds(250)
    /// Prefix of each worker's `transactional.id` (the worker index is appended); `serve` sets the
    /// group id and `instance.name`. Default: the group id and a random instance tag.
    public var transactionalIDPrefix: String?
    /// `delivery.commitGroupOffsets`: in exactly-once mode, also commit the offsets through the
    /// consumer group, with each transaction.
    ///
    /// The embedded broker (librdkafka 2.0.2's mock cluster) accepts offsets sent with a
    /// transaction but does not store them; with this set, a restarted gateway resumes where the
    /// last transaction ended. They are committed just before the transaction, and a failure aborts
    /// it, as a real cluster's offset commit inside the transaction would. Redundant on a real
    /// cluster (the transaction carries the same offsets). Default: `false`; `serve` turns it on when it
    /// starts the embedded broker.
    public var commitGroupOffsets = false
    /// How long a transaction commit, flush or abort may take before it counts as failed. Default: 30 s.
    public var operationTimeout: Duration = .seconds(30)
    /// `readiness.kafkaTimeoutSeconds`: how long a worker's consumer may go without seeing a
    /// broker of the cluster and its group coordinator up (in its statistics, every 5 s) before
    /// the instance says it is not ready. Default: 30 s.
    public var readinessKafkaTimeout: Duration = .seconds(30)
    /// `readiness.loopTimeoutSeconds`: how long a worker's loop may go without turning (a batch,
    /// a commit, a restore or a wait for records that takes longer) before the instance says it
    /// is not ready. Default: 60 s.
    public var readinessLoopTimeout: Duration = .seconds(60)
    /// Session timeout of the group membership. Default: 45 s.
    public var sessionTimeout: Duration = .seconds(45)
    /// `kafka.staticMembership`: each worker's consumer joins the group as a static member
    /// (`group.instance.id`: its transactional id, from ``transactionalIDPrefix``), so that an
    /// instance restarted within ``sessionTimeout`` takes back its partitions at once instead of
    /// waiting for the group to drop its predecessor. The price: a static member that stops does
    /// not leave the group, so the partitions of an instance stopped for good (or dead) move only
    /// when its session times out. Needs a stable ``transactionalIDPrefix`` (`serve`'s
    /// `instance.name`); without one the workers join as dynamic members. Default: `false`;
    /// `serve` turns it on except against the embedded broker, whose coordinator does not know
    /// static members.
    public var staticMembership = false
    /// When set, the pipeline first asks the cluster for its id (up to 10 s), and when the cluster
    /// is the embedded broker (librdkafka's mock cluster, as `focusgate broker` runs it) runs with
    /// the settings this changes. `serve` sets it when it did not start the broker itself.
    /// Default: `nil`.
    public var embeddedBrokerSettings: (@Sendable (inout GatewayConfiguration) -> Void)?

    /// The defaults, for `bootstrapServers`.
    public init(bootstrapServers: String) {
        self.bootstrapServers = bootstrapServers
    }

    /// Whether a cluster id is that of librdkafka's mock cluster (the embedded broker, in `serve`
    /// or `focusgate broker`): it names its clusters `mockCluster` followed by a hex number.
    public static func isEmbeddedBroker(clusterID: String) -> Bool {
        clusterID.hasPrefix("mockCluster")
    }

    /// `delivery.mode`.
    public struct DeliveryMode: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public var description: String { self.rawValue }

        /// A transactional producer per worker: outputs, state changelog and offsets in one
        /// Kafka transaction every commit interval.
        public static let exactlyOnce = DeliveryMode(rawValue: "exactly-once")
        /// An idempotent producer; offsets are committed once every output of the interval is
        /// delivered. For clusters without transactions; a crash replays the uncommitted window.
        public static let atLeastOnce = DeliveryMode(rawValue: "at-least-once")

        /// The mode named `text`, or `nil`.
        public init?(_ text: String) {
            guard text == Self.exactlyOnce.rawValue || text == Self.atLeastOnce.rawValue else { return nil }
            self.rawValue = text
        }

        private init(rawValue: String) {
            self.rawValue = rawValue
        }
    }

    // MARK: - Client configurations

    func consumerConfiguration(worker: Int, instanceTag: String) -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: self.bootstrapServers, groupID: self.groupID)
        configuration.properties = self.kafkaProperties
        configuration.sessionTimeout = self.sessionTimeout
        configuration.isolationLevel = .readCommitted
        if self.staticMembership && self.transactionalIDPrefix != nil {
            configuration.groupInstanceID = self.transactionalID(worker: worker, instanceTag: instanceTag)
        }
        return configuration
    }

    func producerConfiguration(worker: Int, instanceTag: String) -> KafkaProducerConfiguration {
        var configuration = KafkaProducerConfiguration(bootstrapServers: self.bootstrapServers)
        configuration.properties = self.kafkaProperties
        configuration.isIdempotent = true
        // The worker needs only failures: the flush or the transaction's commit says the rest
        // was written, and a delivered record is freed off the worker's thread.
        configuration.reportsFailuresOnly = true
        // At-least-once: no output may land after one the broker refused, ahead of its replay.
        configuration.isGapless = self.deliveryMode == .atLeastOnce
        if self.deliveryMode == .exactlyOnce {
            configuration.transactionalID = self.transactionalID(worker: worker, instanceTag: instanceTag)
        }
        return configuration
    }

    /// Worker `worker`'s transactional id: ``transactionalIDPrefix`` (`serve`: the group id and
    /// the instance's name), else the group id and the random `instanceTag`, then the worker.
    func transactionalID(worker: Int, instanceTag: String) -> String {
        "\(self.transactionalIDPrefix ?? "\(self.groupID)-\(instanceTag)")-\(worker)"
    }
}
