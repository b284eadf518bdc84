internal import Crdkafka

// MARK: - Transactions (KIP-98, KIP-447)

/// Each call first throws the producer's fatal error, if one was raised: librdkafka 2.0.2 can answer
/// the call after a fatal one with a success it never performed. (A fatal error met during a call
/// sets that call's result twice; when the caller has taken the first before the second arrives,
/// the second stays behind as "a result is ready", and the next call returns it without running.)
extension KafkaProducer {
    /// Registers the `transactional.id` with the coordinator, fencing older producers with the same id.
    ///
    /// - Throws: ``KafkaError``; a retriable error may be retried with the same call.
    public func initTransactions(timeout: Duration) throws(KafkaError) {
        try self.client.throwIfFatal()
        try KafkaError.check(
            rd_kafka_init_transactions(self.client.pointer, timeout.timeoutMilliseconds), "init transactions")
    }

    /// Starts a transaction; records produced from now on belong to it.
    public func beginTransaction() throws(KafkaError) {
        try self.client.throwIfFatal()
        try KafkaError.check(rd_kafka_begin_transaction(self.client.pointer), "begin transaction")
    }

    /// Adds the consumer's offsets to the transaction: they are committed if and only if the transaction is.
    ///
    /// - Parameters:
    ///   - offsets: For each partition, the offset of the next record to consume (last processed + 1).
    ///   - groupMetadata: The consumer's group metadata, so that zombie consumers are fenced.
    ///   - timeout: The longest the call may block.
    /// - Throws: ``KafkaError``: retriable → call again; requires abort → abort; fatal → close.
    public func sendOffsetsToTransaction(
        _ offsets: [KafkaTopicPartition],
        groupMetadata: KafkaConsumerGroupMetadata,
        timeout: Duration
    ) throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        try self.client.throwIfFatal()
        let list = RDKafkaTopicPartitionList(offsets)
        try KafkaError.check(
            rd_kafka_send_offsets_to_transaction(
                self.client.pointer, list.pointer, groupMetadata.pointer, timeout.timeoutMilliseconds),
            "send offsets to transaction"
        )
    }

    /// Flushes outstanding records and commits the transaction. Blocks: call it from a dedicated thread.
    public func commitTransaction(timeout: Duration) throws(KafkaError) {
        try self.client.throwIfFatal()
        let left = self.awaitOutstanding(timeout: timeout)  // librdkafka's flush would wait in 10 ms steps
        try KafkaError.check(
            rd_kafka_commit_transaction(self.client.pointer, left.timeoutMilliseconds), "commit transaction")
    }

    /// Aborts the transaction; its records are purged or marked aborted.
    public func abortTransaction(timeout: Duration) throws(KafkaError) {
        try self.client.throwIfFatal()
        try KafkaError.check(
            rd_kafka_abort_transaction(self.client.pointer, timeout.timeoutMilliseconds), "abort transaction")
    }
}
