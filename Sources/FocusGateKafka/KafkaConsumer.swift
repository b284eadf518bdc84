internal import Crdkafka
import Synchronization
public import Logging

/// A Kafka consumer: group subscription with cooperative rebalancing, batch consumption, and
/// offsets managed by the application (see `KafkaConsumer+Offsets.swift`).
///
/// Not `Sendable`: one thread creates it, consumes, pauses, resumes, seeks and closes it. The
/// rebalance hook runs synchronously on that thread inside ``consumeBatch(maxRecords:timeout:_:)``
/// (or ``close()``), before the assignment changes, so the caller can commit work for partitions
/// that are leaving and restore state for partitions that are arriving.
public final class KafkaConsumer {
    let client: RDKafkaHandle
    private let queue: OpaquePointer
    private let wakeRequests = WakeRequests()
    private var buffer: UnsafeMutableBufferPointer<UnsafeMutablePointer<rd_kafka_message_t>?>
    private var isClosed = false
    private var isSubscribed = false
    private let membership: GroupMembership
    private let logger: Logger

    /// The configuration the consumer was created with.
    public let configuration: KafkaConsumerConfiguration

    /// Creates a consumer.
    ///
    /// - Parameters:
    ///   - configuration: Brokers, group, offsets policy, prefetch and pass-through properties.
    ///   - logger: Receives librdkafka's log lines and rebalance events.
    ///   - onRebalance: Runs before partitions are assigned or revoked, on the consuming thread.
    ///   - onStatistics: Called every `statisticsInterval` on the consuming thread.
    /// - Throws: ``KafkaError`` naming the refused property.
    public init(
        configuration: KafkaConsumerConfiguration,
        logger: Logger,
        onRebalance: ((KafkaRebalance) -> Void)? = nil,
        onStatistics: ((KafkaStatistics) -> Void)? = nil
    ) throws(KafkaError) {
        let rebalanceLogger = logger
        let membership = GroupMembership()
        let callbacks = RDKafkaCallbacks(
            logger: logger,
            rebalance: { rk, err, list in
                Self.rebalance(
                    rk: rk, err: err, list: list, hook: membership.isClosing ? nil : onRebalance,
                    membership: membership, logger: rebalanceLogger)
                if err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS { membership.hasBeenAssigned = true }
            },
            statistics: onStatistics
        )
        self.client = try RDKafkaHandle(
            type: RD_KAFKA_CONSUMER, properties: configuration.rdkafkaProperties, callbacks: callbacks)
        // Route the main queue (errors, statistics, rebalances) to the consumer queue served by consumeBatch.
        rd_kafka_poll_set_consumer(self.client.pointer)
        self.queue = rd_kafka_queue_get_consumer(self.client.pointer)
        self.buffer = .allocate(capacity: 1024)
        self.configuration = configuration
        self.membership = membership
        self.logger = logger
    }

    /// Makes a ``consumeBatch(maxRecords:timeout:_:)`` that is waiting for records return at once
    /// (or the next one, when none is waiting), from any thread.
    ///
    /// `@unchecked Sendable`: `rd_kafka_queue_yield` takes the queue's lock. The queue lives as long
    /// as the consumer: whoever holds a waker must stop using it before the consumer goes away.
    public struct Waker: @unchecked Sendable {
        fileprivate let queue: OpaquePointer
        fileprivate let requests: WakeRequests

        public func wake() {
            self.requests.raised.store(true, ordering: .releasing)
            rd_kafka_queue_yield(self.queue)
        }
    }

    /// Set by a ``Waker``, taken by the next ``consumeBatch(maxRecords:timeout:_:)`` instead of
    /// waiting: librdkafka's yield flag can be taken by the call that only collects what is ready.
    final class WakeRequests: Sendable {
        let raised = Atomic(false)
    }

    /// A waker for this consumer's ``consumeBatch(maxRecords:timeout:_:)``.
    public var waker: Waker { Waker(queue: self.queue, requests: self.wakeRequests) }

    deinit {
        self.close()
        rd_kafka_queue_destroy(self.queue)
        self.buffer.deallocate()
        if self.isSubscribed && !self.membership.hasBeenAssigned {
            // librdkafka 2.0.2 asserts in rd_kafka_destroy (rdkafka_sticky_assignor.c:1896) when the
            // group answered JoinGroup but no assignment followed: the sticky assignor's state is made
            // only by an assignment, and its destructor requires it. Nothing tells the two moments
            // apart from here, so the closed client stays allocated until the process ends.
            _ = Unmanaged.passRetained(self.client)
            self.logger.warning("consumer closed before its first assignment; its client is left allocated")
        }
    }

    // MARK: - Membership

    /// Joins the group and subscribes to `topics`; partitions arrive through rebalances.
    public func subscribe(_ topics: [String]) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(
            topics.map { KafkaTopicPartition(topic: $0, partition: RD_KAFKA_PARTITION_UA) })
        try KafkaError.check(rd_kafka_subscribe(self.client.pointer, list.pointer), "subscribe \(topics)")
        self.isSubscribed = true
    }

    /// Consumes exactly these partitions, without group management (e.g. a state-restore consumer).
    ///
    /// An offset of `nil` starts from the committed offset, or `auto.offset.reset` without one.
    public func assign(_ partitions: [KafkaTopicPartition]) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(
            partitions.map {
                KafkaTopicPartition(topic: $0.topic, partition: $0.partition, offset: $0.offset ?? KafkaOffset.stored)
            })
        try KafkaError.check(rd_kafka_assign(self.client.pointer, list.pointer), "assign")
    }

    /// Adds `partitions` to a manual assignment (``assign(_:)``), leaving the others where they
    /// are. An offset of `nil` starts as in ``assign(_:)``.
    public func addAssigned(_ partitions: [KafkaTopicPartition]) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(
            partitions.map {
                KafkaTopicPartition(topic: $0.topic, partition: $0.partition, offset: $0.offset ?? KafkaOffset.stored)
            })
        if let error = rd_kafka_incremental_assign(self.client.pointer, list.pointer) {
            defer { rd_kafka_error_destroy(error) }
            throw KafkaError(
                code: KafkaError.Code(rawValue: rd_kafka_error_code(error).rawValue),
                message: "assign more: \(String(cString: rd_kafka_error_string(error)))")
        }
    }

    /// The partitions currently assigned to this consumer.
    public func assignment() throws(KafkaError) -> [KafkaTopicPartition] {
        var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
        try KafkaError.check(rd_kafka_assignment(self.client.pointer, &list), "assignment")
        guard let list else { return [] }
        defer { rd_kafka_topic_partition_list_destroy(list) }
        return RDKafkaTopicPartitionList.partitions(of: list).map(\.withoutOffset)
    }

    /// Leaves the group (running the rebalance hook for the revoked partitions) and stops fetching.
    /// Idempotent; also done on deinit.
    ///
    /// A group member that has had no assignment yet first waits, at most
    /// ``KafkaConsumerConfiguration/firstAssignmentWait``, for the one its join is about to bring,
    /// without handing it (or any record) to the application: a client destroyed between the
    /// group's answers to JoinGroup and SyncGroup aborts the process in librdkafka 2.0.2.
    public func close() {
        guard !self.isClosed else { return }
        self.isClosed = true
        if self.isSubscribed && !self.membership.hasBeenAssigned {
            self.awaitFirstAssignment()
        }
        let err = rd_kafka_consumer_close(self.client.pointer)
        self.client.consumerClosed = true
        if err != RD_KAFKA_RESP_ERR_NO_ERROR {
            self.logger.warning(
                "consumer close failed", metadata: ["kafka.error": "\(KafkaError(err, context: "close"))"])
        }
    }

    /// Serves the consumer queue until the first assignment has been taken, discarding records;
    /// rebalances from now on reach librdkafka only, not the application's hook.
    private func awaitFirstAssignment() {
        self.membership.isClosing = true
        let deadline = ContinuousClock.now + self.configuration.firstAssignmentWait
        while !self.membership.hasBeenAssigned && ContinuousClock.now < deadline {
            if let message = rd_kafka_consume_queue(self.queue, 100) {
                rd_kafka_message_destroy(message)
            }
        }
    }

    /// The fatal error raised on this consumer, if any; the consumer must then be closed.
    public var fatalError: KafkaError? {
        self.client.fatalError
    }

    /// The group membership to send with a transaction's offsets.
    public func groupMetadata() throws(KafkaError) -> KafkaConsumerGroupMetadata {
        guard let pointer = rd_kafka_consumer_group_metadata(self.client.pointer) else {
            throw KafkaError(code: .state, message: "consumer has no group metadata (no group.id)")
        }
        return KafkaConsumerGroupMetadata(pointer: pointer)
    }

    // MARK: - Consuming

    /// Hands up to `maxRecords` records to `body` as borrowed views: those already fetched, or, when
    /// none are, the ones that arrive first within `timeout` (so a record waits for no batch to fill).
    ///
    /// Rebalance hooks and statistics callbacks run inside this call. The records are released
    /// when `body` returns.
    ///
    /// - Returns: What `body` returns.
    public func consumeBatch<Result, Failure: Error>(
        maxRecords: Int = 1024,
        timeout: Duration,
        _ body: (KafkaRecordBatch) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        precondition(maxRecords > 0, "maxRecords must be positive")
        if maxRecords > self.buffer.count {
            self.buffer.deallocate()
            self.buffer = .allocate(capacity: maxRecords)
        }
        // rd_kafka_consume_batch_queue waits for a *full* batch until its timeout, which would add
        // the whole timeout to every record's latency at low rates. Take what is ready; if nothing
        // is, wait for one record, then take what arrived with it.
        var count = max(Int(rd_kafka_consume_batch_queue(self.queue, 0, self.buffer.baseAddress, maxRecords)), 0)
        if count == 0, timeout > .zero, !self.wakeRequests.raised.exchange(false, ordering: .acquiring),
            let first = rd_kafka_consume_queue(self.queue, Int32(clamping: timeout.wholeMilliseconds))
        {
            self.buffer[0] = first
            count = 1
            if maxRecords > 1 {
                count += max(
                    Int(rd_kafka_consume_batch_queue(self.queue, 0, self.buffer.baseAddress! + 1, maxRecords - 1)), 0)
            }
        }
        var errors: [KafkaError] = []
        var kept = 0
        for index in 0..<count {
            let message = self.buffer[index]!
            let err = message.pointee.err
            if err == RD_KAFKA_RESP_ERR_NO_ERROR {
                self.buffer[kept] = message
                kept += 1
            } else {
                errors.append(KafkaError(err, context: Self.describeFailure(message)))
                rd_kafka_message_destroy(message)
            }
        }
        defer {
            for index in 0..<kept {
                rd_kafka_message_destroy(self.buffer[index])
            }
        }
        let batch = KafkaRecordBatch(messages: UnsafeBufferPointer(rebasing: self.buffer[0..<kept]), errors: errors)
        return try body(batch)
    }

    // MARK: - Flow control

    /// Stops fetching these partitions until resumed; the position is kept.
    public func pause(_ partitions: [KafkaTopicPartition]) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(partitions)
        try KafkaError.check(rd_kafka_pause_partitions(self.client.pointer, list.pointer), "pause")
        if let error = list.firstError(context: "pause") { throw error }
    }

    /// Resumes fetching paused partitions.
    public func resume(_ partitions: [KafkaTopicPartition]) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(partitions)
        try KafkaError.check(rd_kafka_resume_partitions(self.client.pointer, list.pointer), "resume")
        if let error = list.firstError(context: "resume") { throw error }
    }

    /// Moves the fetch position of assigned partitions to the given offsets (e.g. back to the
    /// committed offsets after an aborted transaction). Records already fetched are discarded.
    public func seek(_ partitions: [KafkaTopicPartition]) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(partitions)
        // librdkafka 2.0.2 treats a finite timeout 1000x too short here: wait without a limit.
        try KafkaError.check(rd_kafka_seek_partitions(self.client.pointer, list.pointer, -1), "seek")
        if let error = list.firstError(context: "seek") { throw error }
    }

    // MARK: - Rebalance

    /// Called from the rebalance hook while it handles ``KafkaRebalance/assigned(_:)``: the
    /// partitions given start at these offsets, not at the group's committed offsets, which
    /// librdkafka fetches again once the hook returns and which may have moved since the hook
    /// read them (a commit landing late). A consumer whose state was restored as of an offset
    /// starts exactly there. Offsets below zero are ignored (the group's, or the reset policy).
    public func startAssigned(at offsets: [KafkaTopicPartition]) {
        for partition in offsets {
            guard let offset = partition.offset, offset >= 0 else { continue }
            self.membership.startOffsets[partition.withoutOffset] = offset
        }
    }

    /// Called from the rebalance hook while it handles ``KafkaRebalance/assigned(_:)``, under
    /// cooperative rebalancing: these partitions stay this member's in the group, but are not
    /// fetched until ``assignHeldBack(_:)`` (their state is restored meanwhile, while the others
    /// flow). A revoked partition still held back is simply forgotten. Returns `false`, holding
    /// nothing back, under an eager protocol, where an assignment is taken whole.
    public func holdBack(_ partitions: [KafkaTopicPartition]) -> Bool {
        guard String(cString: rd_kafka_rebalance_protocol(self.client.pointer)) == "COOPERATIVE" else { return false }
        for partition in partitions { self.membership.heldBack.insert(partition.withoutOffset) }
        return true
    }

    /// Starts fetching partitions held back (``holdBack(_:)``) at the given offsets; those revoked
    /// meanwhile are left out.
    public func assignHeldBack(_ partitions: [KafkaTopicPartition]) throws(KafkaError) {
        let taken = partitions.filter { self.membership.heldBack.remove($0.withoutOffset) != nil }
        guard !taken.isEmpty else { return }
        try self.addAssigned(taken)
    }

    private static func rebalance(
        rk: OpaquePointer,
        err: rd_kafka_resp_err_t,
        list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>,
        hook: ((KafkaRebalance) -> Void)?,
        membership: GroupMembership,
        logger: Logger
    ) {
        let partitions = RDKafkaTopicPartitionList.partitions(of: list).map(\.withoutOffset)
        let cooperative = String(cString: rd_kafka_rebalance_protocol(rk)) == "COOPERATIVE"
        switch err {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            logger.info("partitions assigned", metadata: ["kafka.partitions": "\(partitions)"])
            membership.startOffsets.removeAll()
            hook?(.assigned(partitions))
            // Offsets the hook chose (``startAssigned(at:)``) replace "the group's committed
            // offset", which librdkafka would otherwise fetch again after the hook.
            for index in 0..<Int(list.pointee.cnt) {
                let element = list.pointee.elems.advanced(by: index)
                let key = KafkaTopicPartition(
                    topic: String(cString: element.pointee.topic), partition: element.pointee.partition)
                if let offset = membership.startOffsets[key] { element.pointee.offset = offset }
            }
            membership.startOffsets.removeAll()
            if cooperative {
                let taken = Self.without(membership.heldBack, list)
                defer { rd_kafka_topic_partition_list_destroy(taken) }
                logIfFailed(rd_kafka_incremental_assign(rk, taken), "incremental assign", logger)
            } else {
                logIfFailed(rd_kafka_assign(rk, list), "assign", logger)
            }
        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            let lost = rd_kafka_assignment_lost(rk) != 0
            logger.info("partitions revoked", metadata: ["kafka.partitions": "\(partitions)", "kafka.lost": "\(lost)"])
            hook?(.revoked(partitions, lost: lost))
            if cooperative {
                // Partitions still held back were never assigned: librdkafka refuses to unassign them.
                let assigned = Self.without(membership.heldBack, list)
                defer { rd_kafka_topic_partition_list_destroy(assigned) }
                for partition in partitions { membership.heldBack.remove(partition) }
                logIfFailed(rd_kafka_incremental_unassign(rk, assigned), "incremental unassign", logger)
            } else {
                logIfFailed(rd_kafka_assign(rk, nil), "unassign", logger)
            }
        default:
            logger.error("rebalance failed", metadata: ["kafka.error": "\(KafkaError(err, context: "rebalance"))"])
            membership.heldBack.removeAll()
            logIfFailed(rd_kafka_assign(rk, nil), "unassign", logger)
        }
    }

    /// A copy of `list` without the partitions in `excluded` (offsets kept); the caller destroys it.
    private static func without(
        _ excluded: Set<KafkaTopicPartition>, _ list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>
    ) -> UnsafeMutablePointer<rd_kafka_topic_partition_list_t> {
        let copy = rd_kafka_topic_partition_list_copy(list)!
        for partition in excluded {
            _ = rd_kafka_topic_partition_list_del(copy, partition.topic, partition.partition)
        }
        return copy
    }

    private static func describeFailure(_ message: UnsafeMutablePointer<rd_kafka_message_t>) -> String {
        var context = "consume"
        if let rkt = message.pointee.rkt {
            context += " \(String(cString: rd_kafka_topic_name(rkt)))/\(message.pointee.partition)"
        }
        if let text = rd_kafka_message_errstr(message) {
            context += ": \(String(cString: text))"
        }
        return context
    }
}

/// What the rebalance callback has seen of the group, for ``KafkaConsumer/close()``. Touched only
/// by the thread that owns the consumer (the callback runs inside its consume and close calls).
final class GroupMembership {
    /// Where the partitions being assigned start, as the rebalance hook chose; by partition
    /// (offsets left out of the keys).
    var startOffsets: [KafkaTopicPartition: Int64] = [:]
    /// Partitions of this member's that the hook held back from fetching (offsets left out).
    var heldBack: Set<KafkaTopicPartition> = []
    /// An assignment (possibly empty) has been taken: librdkafka's assignor state exists.
    var hasBeenAssigned = false
    /// The consumer is closing before its first assignment: the application's hook is not called.
    var isClosing = false
}

private func logIfFailed(_ error: OpaquePointer?, _ what: String, _ logger: Logger) {
    if let error {
        logger.error("\(what) failed", metadata: ["kafka.error": "\(KafkaError.consuming(error, context: what))"])
    }
}

private func logIfFailed(_ err: rd_kafka_resp_err_t, _ what: String, _ logger: Logger) {
    if err != RD_KAFKA_RESP_ERR_NO_ERROR {
        logger.error("\(what) failed", metadata: ["kafka.error": "\(KafkaError(err, context: what))"])
    }
}
