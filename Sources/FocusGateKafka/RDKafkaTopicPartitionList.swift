internal import Crdkafka

/// Owns an `rd_kafka_topic_partition_list_t` and converts it to and from ``KafkaTopicPartition`` values.
final class RDKafkaTopicPartitionList {
    let pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

    init(_ partitions: [KafkaTopicPartition]) {
        self.pointer = rd_kafka_topic_partition_list_new(Int32(max(partitions.count, 1)))
        for item in partitions {
            let element = rd_kafka_topic_partition_list_add(self.pointer, item.topic, item.partition)!
            element.pointee.offset = item.offset ?? KafkaOffset.invalid
        }
    }

    deinit {
        rd_kafka_topic_partition_list_destroy(self.pointer)
    }

    /// The partitions with their offsets; per-partition errors are returned separately.
    var partitions: [KafkaTopicPartition] {
        Self.partitions(of: self.pointer)
    }

    /// The first per-partition error, if any (commit and offset requests report them per element).
    func firstError(context: String) -> KafkaError? {
        let list = self.pointer.pointee
        for index in 0..<Int(list.cnt) where list.elems[index].err != RD_KAFKA_RESP_ERR_NO_ERROR {
            let element = list.elems[index]
            let where_ = "\(String(cString: element.topic))/\(element.partition)"
            return KafkaError(element.err, context: "\(context) \(where_)")
        }
        return nil
    }

    /// Reads a list owned by librdkafka (for example in a rebalance callback) without taking ownership.
    static func partitions(of list: UnsafePointer<rd_kafka_topic_partition_list_t>) -> [KafkaTopicPartition] {
        let count = Int(list.pointee.cnt)
        var result: [KafkaTopicPartition] = []
        result.reserveCapacity(count)
        for index in 0..<count {
            let element = list.pointee.elems[index]
            result.append(
                KafkaTopicPartition(
                    topic: String(cString: element.topic),
                    partition: element.partition,
                    offset: element.offset == KafkaOffset.invalid ? nil : element.offset
                )
            )
        }
        return result
    }
}
