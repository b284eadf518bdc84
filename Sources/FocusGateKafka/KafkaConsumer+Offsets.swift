internal import Crdkafka

// MARK: - Offsets and watermarks

extension KafkaConsumer {
    /// Commits these offsets to the group synchronously (offset = next record to consume).
    ///
    /// - Throws: ``KafkaError`` for the request or the first partition that failed.
    public func commit(_ offsets: [KafkaTopicPartition]) throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        let list = RDKafkaTopicPartitionList(offsets)
        try KafkaError.check(rd_kafka_commit(self.client.pointer, list.pointer, 0), "commit")
        if let error = list.firstError(context: "commit") { throw error }
    }

    /// The group's committed offsets for these partitions; `offset` is `nil` where nothing was committed.
    public func committed(_ partitions: [KafkaTopicPartition], timeout: Duration) throws(KafkaError)
        -> [KafkaTopicPartition]
    {
        let list = RDKafkaTopicPartitionList(partitions.map(\.withoutOffset))
        try KafkaError.check(
            rd_kafka_committed(self.client.pointer, list.pointer, timeout.timeoutMilliseconds), "committed offsets")
        if let error = list.firstError(context: "committed offsets") { throw error }
        return list.partitions
    }

    /// The fetch positions (offset of the next record this consumer will return) of these partitions.
    public func position(_ partitions: [KafkaTopicPartition]) throws(KafkaError) -> [KafkaTopicPartition] {
        let list = RDKafkaTopicPartitionList(partitions.map(\.withoutOffset))
        try KafkaError.check(rd_kafka_position(self.client.pointer, list.pointer), "position")
        return list.partitions
    }

    /// Low and high watermarks of a partition, asked of its leader.
    public func watermarks(topic: String, partition: Int32, timeout: Duration) throws(KafkaError) -> (
        low: Int64, high: Int64
    ) {
        try self.client.queryWatermarks(
            topic: topic, partition: partition, timeoutMilliseconds: timeout.timeoutMilliseconds)
    }

    /// The cluster's id, from its metadata; `nil` when it did not come within `timeout`.
    public func clusterID(timeout: Duration) -> String? {
        self.client.clusterID(timeoutMilliseconds: timeout.timeoutMilliseconds)
    }

    /// Every topic of the cluster with its partition count (one metadata request for all topics,
    /// which has no topic created, as a request naming one may).
    public func topicPartitionCounts(timeout: Duration) throws(KafkaError) -> [String: Int] {
        try self.client.topicPartitionCounts(timeoutMilliseconds: timeout.timeoutMilliseconds)
    }

    /// The number of partitions of `topic`, from the cluster's metadata.
    public func partitionCount(topic: String, timeout: Duration) throws(KafkaError) -> Int {
        try self.client.partitionCount(topic: topic, timeoutMilliseconds: timeout.timeoutMilliseconds)
    }
}
