internal import Crdkafka
public import Logging

/// A Kafka producer: keys, values, headers, explicit partitions, idempotence on by default,
/// delivery reports surfaced for every record (or, with
/// ``KafkaProducerConfiguration/reportsFailuresOnly``, for every failed one), and transactions
/// (see `KafkaProducer+Transactions.swift`).
///
/// Delivery reports are served on the thread that calls ``poll(timeout:)``, ``flush(timeout:)`` or
/// ``produce(topic:partition:key:value:headers:timestamp:deliveryID:)`` (when the local queue is
/// full). The producer is not `Sendable`: one thread owns it, as one FocusGate worker does.
public final class KafkaProducer {
    let client: RDKafkaHandle
    private var topics: [String: KafkaTopic] = [:]
    private let logger: Logger

    /// The configuration the producer was created with.
    public let configuration: KafkaProducerConfiguration

    /// How many records of each delivery id the cluster acknowledged or failed, counted as
    /// librdkafka learns of them, without polling.
    public let acknowledgements = KafkaAcknowledgements()

    /// Creates a producer.
    ///
    /// - Parameters:
    ///   - configuration: Brokers, idempotence, transactions and pass-through properties.
    ///   - logger: Receives librdkafka's log lines.
    ///   - onDeliveryReport: Called once per produced record with its outcome (once per failed
    ///     record when ``KafkaProducerConfiguration/reportsFailuresOnly``), on the polling thread.
    ///   - onStatistics: Called every `statisticsInterval` with librdkafka's statistics.
    /// - Throws: ``KafkaError`` naming the refused property.
    public init(
        configuration: KafkaProducerConfiguration,
        logger: Logger,
        onDeliveryReport: @escaping (KafkaDeliveryReport) -> Void,
        onStatistics: ((KafkaStatistics) -> Void)? = nil
    ) throws(KafkaError) {
        let callbacks = RDKafkaCallbacks(
            logger: logger, deliveryReport: onDeliveryReport, statistics: onStatistics,
            acknowledgements: self.acknowledgements)
        self.client = try RDKafkaHandle(
            type: RD_KAFKA_PRODUCER, properties: configuration.rdkafkaProperties, callbacks: callbacks)
        self.configuration = configuration
        self.logger = logger
    }

    deinit {
        let remaining =
            rd_kafka_flush(self.client.pointer, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR
            ? 0 : rd_kafka_outq_len(self.client.pointer)
        if remaining > 0 {
            self.logger.warning(
                "producer closed with undelivered records", metadata: ["kafka.outstanding": "\(remaining)"])
        }
        self.topics.removeAll()
    }

    // MARK: - Producing

    /// The handle for `name`, created once and reused.
    public func topic(_ name: String) throws(KafkaError) -> KafkaTopic {
        if let topic = self.topics[name] {
            return topic
        }
        let topic = try KafkaTopic(name: name, client: self.client)
        self.topics[name] = topic
        return topic
    }

    /// Enqueues one record. Bytes are copied before the call returns.
    ///
    /// When the local queue is full, serves delivery reports and retries for up to ten seconds.
    ///
    /// - Parameters:
    ///   - topic: The topic handle.
    ///   - partition: An explicit partition, or `nil` to let the partitioner choose from the key.
    ///   - key: Key bytes, or `nil`.
    ///   - value: Value bytes, or `nil` for a tombstone.
    ///   - headers: Record headers.
    ///   - timestamp: Milliseconds since the epoch, or `nil` for now.
    ///   - deliveryID: Echoed in the record's ``KafkaDeliveryReport``; a nonzero one also counts the
    ///     record in ``acknowledgements``.
    /// - Throws: ``KafkaError``, e.g. unknown partition, record too large, or a fatal producer error.
    public func produce(
        topic: KafkaTopic,
        partition: Int32? = nil,
        key: UnsafeRawBufferPointer?,
        value: UnsafeRawBufferPointer?,
        headers: [KafkaHeader] = [],
        timestamp: Int64? = nil,
        deliveryID: UInt64 = 0
    ) throws(KafkaError) {
        try self.produce(
            topic: topic, partition: partition, key: key, value: value, headers: KafkaHeaderBuffer(headers),
            timestamp: timestamp, deliveryID: deliveryID)
    }

    /// Enqueues one record with headers from a reused ``KafkaHeaderBuffer``; see
    /// ``produce(topic:partition:key:value:headers:timestamp:deliveryID:)``.
    public func produce(
        topic: KafkaTopic,
        partition: Int32? = nil,
        key: UnsafeRawBufferPointer?,
        value: UnsafeRawBufferPointer?,
        headers: borrowing KafkaHeaderBuffer,
        timestamp: Int64? = nil,
        deliveryID: UInt64 = 0
    ) throws(KafkaError) {
        var attempts = 0
        while true {
            let error = self.enqueue(
                topic: topic, partition: partition, key: key, value: value,
                headers: headers, timestamp: timestamp, deliveryID: deliveryID
            )
            guard let error else { return }
            let code = rd_kafka_error_code(error)
            if code == RD_KAFKA_RESP_ERR__QUEUE_FULL && attempts < 100 {
                rd_kafka_error_destroy(error)
                attempts += 1
                self.client.poll(timeoutMilliseconds: 100)
                continue
            }
            throw KafkaError.consuming(error, context: "produce to \(topic.name)")
        }
    }

    /// Enqueues one record from byte arrays; see ``produce(topic:partition:key:value:headers:timestamp:deliveryID:)``.
    public func produce(
        topic name: String,
        partition: Int32? = nil,
        key: [UInt8]?,
        value: [UInt8]?,
        headers: [KafkaHeader] = [],
        timestamp: Int64? = nil,
        deliveryID: UInt64 = 0
    ) throws(KafkaError) {
        try self.produce(
            topic: try self.topic(name), partition: partition, key: key, value: value,
            headers: headers, timestamp: timestamp, deliveryID: deliveryID
        )
    }

    /// Enqueues one record from byte arrays to a topic handle; see
    /// ``produce(topic:partition:key:value:headers:timestamp:deliveryID:)``.
    public func produce(
        topic: KafkaTopic,
        partition: Int32? = nil,
        key: [UInt8]?,
        value: [UInt8]?,
        headers: [KafkaHeader] = [],
        timestamp: Int64? = nil,
        deliveryID: UInt64 = 0
    ) throws(KafkaError) {
        try self.produce(
            topic: topic, partition: partition, key: key, value: value, headers: KafkaHeaderBuffer(headers),
            timestamp: timestamp, deliveryID: deliveryID)
    }

    /// Enqueues one record from byte arrays to a topic handle, with headers from a reused
    /// ``KafkaHeaderBuffer``; see ``produce(topic:partition:key:value:headers:timestamp:deliveryID:)``.
    public func produce(
        topic: KafkaTopic,
        partition: Int32? = nil,
        key: [UInt8]?,
        value: [UInt8]?,
        headers: borrowing KafkaHeaderBuffer,
        timestamp: Int64? = nil,
        deliveryID: UInt64 = 0
    ) throws(KafkaError) {
        let result = withOptionalBytes(key) { keyBytes in
            withOptionalBytes(value) { valueBytes in
                Result { () throws(KafkaError) in
                    try self.produce(
                        topic: topic, partition: partition, key: keyBytes, value: valueBytes,
                        headers: headers, timestamp: timestamp, deliveryID: deliveryID
                    )
                }
            }
        }
        try result.get()
    }

    private func enqueue(
        topic: KafkaTopic,
        partition: Int32?,
        key: UnsafeRawBufferPointer?,
        value: UnsafeRawBufferPointer?,
        headers: borrowing KafkaHeaderBuffer,
        timestamp: Int64?,
        deliveryID: UInt64
    ) -> OpaquePointer? {
        headers.bytes.withUnsafeBytes { headerBytes in
            withUnsafeTemporaryAllocation(of: rd_kafka_vu_t.self, capacity: 7 + headers.entries.count) { vus in
                var count = 0
                func append(_ type: rd_kafka_vtype_t, _ fill: (inout rd_kafka_vu_t) -> Void) {
                    var vu = rd_kafka_vu_t()
                    vu.vtype = type
                    fill(&vu)
                    vus[count] = vu
                    count += 1
                }
                append(RD_KAFKA_VTYPE_RKT) { $0.u.rkt = topic.pointer }
                append(RD_KAFKA_VTYPE_PARTITION) { $0.u.i32 = partition ?? RD_KAFKA_PARTITION_UA }
                append(RD_KAFKA_VTYPE_MSGFLAGS) { $0.u.i = RD_KAFKA_MSG_F_COPY }
                if let value {
                    append(RD_KAFKA_VTYPE_VALUE) {
                        $0.u.mem.ptr = UnsafeMutableRawPointer(mutating: value.baseAddress)
                        $0.u.mem.size = value.count
                    }
                }
                if let key {
                    append(RD_KAFKA_VTYPE_KEY) {
                        $0.u.mem.ptr = UnsafeMutableRawPointer(mutating: key.baseAddress)
                        $0.u.mem.size = key.count
                    }
                }
                if deliveryID != 0 {
                    append(RD_KAFKA_VTYPE_OPAQUE) { $0.u.ptr = UnsafeMutableRawPointer(bitPattern: UInt(deliveryID)) }
                }
                if let timestamp {
                    append(RD_KAFKA_VTYPE_TIMESTAMP) { $0.u.i64 = timestamp }
                }
                // Each header is copied by librdkafka (name up to its NUL; a nil value is no value).
                for entry in headers.entries {
                    append(RD_KAFKA_VTYPE_HEADER) {
                        $0.u.header.name = headerBytes.baseAddress!.advanced(by: entry.name)
                            .assumingMemoryBound(to: CChar.self)
                        $0.u.header.val = entry.length < 0 ? nil : headerBytes.baseAddress!.advanced(by: entry.value)
                        $0.u.header.size = max(0, entry.length)
                    }
                }
                return rd_kafka_produceva(self.client.pointer, vus.baseAddress, count)
            }
        }
    }

    // MARK: - Delivery

    /// Serves delivery reports and statistics; returns how many callbacks ran.
    @discardableResult
    public func poll(timeout: Duration = .zero) -> Int {
        Int(self.client.poll(timeoutMilliseconds: timeout.timeoutMilliseconds))
    }

    /// Waits until every enqueued record has its delivery report, serving the reports.
    ///
    /// - Throws: ``KafkaError`` with code `_TIMED_OUT` when records are still outstanding after `timeout`.
    public func flush(timeout: Duration) throws(KafkaError) {
        let left = self.awaitOutstanding(timeout: timeout)
        try KafkaError.check(rd_kafka_flush(self.client.pointer, left.timeoutMilliseconds), "flush")
    }

    /// Serves delivery reports until no record is outstanding, or until `timeout`, in steps of a
    /// millisecond; returns what is left of `timeout`. librdkafka's flush (and a transaction's
    /// commit, which flushes first) polls in steps of 10 ms and is woken early only by a report:
    /// with reports for failures only (`delivery.report.only.error`), the last acknowledgement
    /// wakes nothing, and it returned up to 10 ms after it. Called first, this leaves it nothing
    /// to wait for.
    func awaitOutstanding(timeout: Duration) -> Duration {
        let deadline = ContinuousClock.now + timeout
        while self.outstandingCount > 0 && ContinuousClock.now < deadline {
            self.poll(timeout: .milliseconds(1))
        }
        return max(.zero, deadline - .now)
    }

    /// Fails every record still queued or waiting for the broker's answer (`_PURGE_QUEUE`,
    /// `_PURGE_INFLIGHT` in their delivery reports), so that a producer being given up closes
    /// without waiting for them. A purged record in flight may still have been written.
    public func purge() {
        _ = rd_kafka_purge(self.client.pointer, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT)
        self.poll()
    }

    /// Records enqueued or in flight without a delivery report yet.
    public var outstandingCount: Int {
        Int(rd_kafka_outq_len(self.client.pointer))
    }

    /// The fatal error raised on this producer, if any; the producer must then be closed.
    public var fatalError: KafkaError? {
        self.client.fatalError
    }

    /// Raises a fatal error on this producer as librdkafka would, for tests of what follows one.
    package func raiseFatalError(_ code: KafkaError.Code, reason: String) {
        self.client.raiseFatalError(code, reason: reason)
    }

    /// Low and high watermarks of a partition, asked of its leader.
    public func watermarks(topic: String, partition: Int32, timeout: Duration) throws(KafkaError) -> (
        low: Int64, high: Int64
    ) {
        try self.client.queryWatermarks(
            topic: topic, partition: partition, timeoutMilliseconds: timeout.timeoutMilliseconds)
    }

    /// The cluster's id, from its metadata; `nil` when no broker answered within `timeout`.
    public func clusterID(timeout: Duration) -> String? {
        self.client.clusterID(timeoutMilliseconds: timeout.timeoutMilliseconds)
    }

    /// The number of partitions of `topic`, from the cluster's metadata.
    public func partitionCount(topic: String, timeout: Duration) throws(KafkaError) -> Int {
        try self.client.partitionCount(topic: topic, timeoutMilliseconds: timeout.timeoutMilliseconds)
    }
}

// MARK: - Helpers

func withOptionalBytes<R>(_ bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
    guard let bytes else { return body(nil) }
    // An empty array may have no storage; give librdkafka a non-nil, zero-length buffer.
    return bytes.withUnsafeBytes { buffer in
        body(buffer.baseAddress == nil ? UnsafeRawBufferPointer(start: emptyByte, count: 0) : buffer)
    }
}

private nonisolated(unsafe) let emptyByte = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
