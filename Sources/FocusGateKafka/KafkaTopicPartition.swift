/// A partition of a topic, optionally with an offset.
///
/// Used for assignments, committed offsets, seeks and the offsets sent with a transaction. As with
/// Kafka itself, a committed offset is the offset of the *next* record to consume.
public struct KafkaTopicPartition: Sendable, Hashable, CustomStringConvertible {
    /// The topic name.
    public var topic: String
    /// The partition index.
    public var partition: Int32
    /// An offset, or `nil` for "not set" (`RD_KAFKA_OFFSET_INVALID`).
    public var offset: Int64?

    /// Creates a topic partition.
    public init(topic: String, partition: Int32, offset: Int64? = nil) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
    }

    /// The same partition without its offset, for use as a dictionary key.
    public var withoutOffset: KafkaTopicPartition {
        KafkaTopicPartition(topic: self.topic, partition: self.partition)
    }

    public var description: String {
        if let offset = self.offset {
            return "\(self.topic)/\(self.partition)@\(offset)"
        }
        return "\(self.topic)/\(self.partition)"
    }
}

/// Special offsets understood by Kafka clients.
public enum KafkaOffset {
    /// The first offset still present in the partition (`RD_KAFKA_OFFSET_BEGINNING`).
    public static let beginning: Int64 = -2
    /// The offset after the last record (`RD_KAFKA_OFFSET_END`).
    public static let end: Int64 = -1
    /// Use the committed offset, or `auto.offset.reset` if none (`RD_KAFKA_OFFSET_STORED`).
    public static let stored: Int64 = -1000
    /// No offset (`RD_KAFKA_OFFSET_INVALID`).
    public static let invalid: Int64 = -1001
}
