public import FocusGateKafka

/// The topics FocusGate reads and writes (docs/contract.md, Topics). Every name is configurable (`topics.*`).
public struct TopicNames: Sendable, Hashable {
    /// Notification events in (`topics.notifications`). Default: `"notifications"`.
    public var notifications = "notifications"
    /// Context invalidations in, read by every instance (`topics.invalidations`). Default: `"focus.invalidations"`.
    public var invalidations = "focus.invalidations"
    /// Delivered notifications out (`topics.delivered`). Default: `"notifications.delivered"`.
    public var delivered = "notifications.delivered"
    /// Silenced notifications out (`topics.silenced`). Default: `"notifications.silenced"`.
    public var silenced = "notifications.silenced"
    /// Badge updates out, compacted (`topics.badges`). Default: `"notifications.badges"`.
    public var badges = "notifications.badges"
    /// Undecodable or invalid input (`topics.dlq`). Default: `"notifications.dlq"`.
    public var deadLetters = "notifications.dlq"
    /// Internal state changelog, compacted (`topics.state`). Default: `"focusgate.state"`.
    public var state = "focusgate.state"
    /// Users' Focus status out, compacted (`topics.status`): focused or not, never the Focus's
    /// name. Default: `"focus.status"`.
    public var status = "focus.status"
    /// Summaries of what users' Foci silenced (`topics.summaries`), key the user id. Default:
    /// `"notifications.summaries"`.
    public var summaries = "notifications.summaries"

    /// The contract's default names.
    public init() {}

    /// How FocusGate uses one of its topics.
    public struct Usage: Sendable, Hashable {
        /// The topic's name.
        public var name: String
        /// FocusGate consumes it (the pipeline, the invalidation listener, the state restore).
        public var isRead: Bool
        /// FocusGate produces to it (the pipeline, or the admin API's invalidations).
        public var isWritten: Bool
        /// It must be compacted (`cleanup.policy=compact`): only the newest record of a key matters.
        public var isCompacted: Bool
    }

    /// Every topic with how FocusGate uses it (docs/asyncapi.yaml says the same, checked by a test).
    public var usages: [Usage] {
        [
            Usage(name: self.notifications, isRead: true, isWritten: false, isCompacted: false),
            // The admin API announces context changes; every instance's listener reads them.
            Usage(name: self.invalidations, isRead: true, isWritten: true, isCompacted: false),
            Usage(name: self.delivered, isRead: false, isWritten: true, isCompacted: false),
            Usage(name: self.silenced, isRead: false, isWritten: true, isCompacted: false),
            Usage(name: self.badges, isRead: false, isWritten: true, isCompacted: true),
            Usage(name: self.status, isRead: false, isWritten: true, isCompacted: true),
            Usage(name: self.summaries, isRead: false, isWritten: true, isCompacted: false),
            Usage(name: self.deadLetters, isRead: false, isWritten: true, isCompacted: false),
            // Written by the workers' commits, read back by a restore on assignment.
            Usage(name: self.state, isRead: true, isWritten: true, isCompacted: true),
        ]
    }

    /// The specifications to create every topic with `partitions` partitions.
    ///
    /// The state changelog must have as many partitions as `notifications`: a user's state record
    /// goes to the same partition index as the user's notifications.
    public func specifications(partitions: Int, replicationFactor: Int = -1) -> [KafkaTopicSpecification] {
        self.usages.map { usage in
            usage.isCompacted
                ? KafkaTopicSpecification.compacted(
                    usage.name, partitions: partitions, replicationFactor: replicationFactor)
                : KafkaTopicSpecification(
                    name: usage.name, partitions: partitions, replicationFactor: replicationFactor)
        }
    }
}
