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

    /// The specifications to create every topic with `partitions` partitions.
    ///
    /// The state changelog must have as many partitions as `notifications`: a user's state record
    /// goes to the same partition index as the user's notifications.
    public func specifications(partitions: Int, replicationFactor: Int = -1) -> [KafkaTopicSpecification] {
        let plain = [
            self.notifications, self.invalidations, self.delivered, self.silenced, self.deadLetters, self.summaries,
        ]
        let compacted = [self.badges, self.state, self.status]
        return plain.map {
            KafkaTopicSpecification(name: $0, partitions: partitions, replicationFactor: replicationFactor)
        }
            + compacted.map {
                KafkaTopicSpecification.compacted($0, partitions: partitions, replicationFactor: replicationFactor)
            }
    }
}
