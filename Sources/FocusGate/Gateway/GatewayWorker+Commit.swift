import FocusGateCore
import FocusGateKafka

// MARK: - Commit, abort, rewind

extension GatewayWorker {
    /// Commits everything processed since the last commit: the state changelog records of the
    /// keys that changed, closed per partition by a commit marker holding the input offset the
    /// state is as of, then (exactly-once) the offsets inside the transaction and the
    /// transaction. At-least-once, the interval's records go to the ``backlog``, produced a slice
    /// per loop turn, and its offsets wait (``unsettled``) until the cluster has acknowledged every
    /// record produced in it, and go to the group then (``settle()``): the loop goes on meanwhile.
    /// A commit that must leave nothing behind (`final`: a revoke, the stop) produces and flushes
    /// everything and settles it before it returns, as does one whose interval was not counted
    /// (``IntervalLedger``).
    ///
    /// - Throws: ``KafkaError``; the caller aborts and rewinds unless it is fatal.
    func commit(final: Bool = false) throws(KafkaError) {
        let started = ContinuousClock.now
        // The last commit's records go first: the same keys' records keep their order. What is
        // left of them holds the loop as part of this commit.
        let drained = !self.backlog.isEmpty
        try self.drainBacklog()
        let owned = self.partitions.sorted { $0.key < $1.key }
        let changed = owned.filter { $0.value.state.hasChanges }
        let offsets = owned.compactMap { partition, progress -> KafkaTopicPartition? in
            let offset: Int64
            if progress.hasUncommittedOffsets, let next = progress.next {
                offset = next
            } else if progress.groupBehind {
                offset = progress.committed
            } else {
                return nil
            }
            return KafkaTopicPartition(
                topic: self.configuration.topics.notifications, partition: partition, offset: offset)
        }
        guard self.transactionOpen || !changed.isEmpty || !offsets.isEmpty else {
            if drained { self.metrics.commitDuration.record(.now - started) }
            if final { try self.settleAll() }
            return
        }

        // What the loop's records wait for, failed commits included (their abort follows).
        defer { self.metrics.commitDuration.record(.now - started) }
        try self.beginTransactionIfNeeded()
        let written = self.takeChanges(of: changed)
        if self.configuration.deliveryMode == .exactlyOnce {
            self.backlog.deliveryID = self.outputs.ledger.current
            try self.drainBacklog()
            if !offsets.isEmpty {
                let group = try self.consumer.groupMetadata()
                try self.retrying { () throws(KafkaError) in
                    try self.outputs.producer.sendOffsetsToTransaction(
                        offsets, groupMetadata: group, timeout: self.configuration.operationTimeout)
                }
                if self.configuration.commitGroupOffsets {
                    // The embedded broker keeps no transactional offsets: the group's own commit
                    // stands in, once the transaction has taken its offsets (a transaction already
                    // doomed fails there, before the group moves) and before it commits. Its
                    // failure (ILLEGAL_GENERATION in a rebalance) aborts the transaction, as a real
                    // cluster's offset commit inside the transaction would; if the transaction
                    // fails after it, the abort puts the group's offsets back.
                    try self.consumer.commit(offsets)
                    self.groupOffsetsAhead = offsets.map(\.partition)
                }
            }
            try self.retrying { () throws(KafkaError) in
                try self.outputs.producer.commitTransaction(timeout: self.configuration.operationTimeout)
            }
            self.transactionOpen = false
            self.groupOffsetsAhead.removeAll()
        } else {
            // The backlog's records count in the interval they were taken in.
            self.outputs.ledger.produced += self.backlog.count
            let interval = self.outputs.ledger.advance(self.outputs.producer.acknowledgements)
            self.backlog.deliveryID = interval.id
            let now = ContinuousClock.now
            self.backlog.schedule(from: now, until: now + self.configuration.commitInterval / 4)
            self.unsettled.append(
                UnsettledCommit(
                    interval: interval.id, produced: interval.produced, offsets: offsets,
                    latencySamples: self.commitLatencySamples))
            self.commitLatencySamples.removeAll(keepingCapacity: true)
            if final || interval.id == 0 || self.unsettled.count > Self.maxUnsettledCommits {
                try self.settleAll()
            }
        }
        for (_, progress) in owned {
            progress.state.commit()
            progress.reportForgotten(to: self.metrics)
            if let next = progress.next {
                progress.committed = next
            }
        }
        self.processedSinceCommit = 0
        self.metrics.stateRecords.increment(by: Int64(written.stateRecords + self.staged.records))
        self.metrics.stateBytes.increment(by: Int64(written.stateBytes + self.staged.bytes))
        self.staged = (0, 0)
        self.metrics.badgeUpdates.increment(by: Int64(written.badgeUpdates))
        if self.configuration.deliveryMode == .exactlyOnce {
            self.noteCommitted(latencySamples: self.commitLatencySamples, offsets: offsets)
            self.commitLatencySamples.removeAll(keepingCapacity: true)
        } else {
            try self.settle()
        }
    }

    /// At-least-once, the fewest of the last commit's records a loop turn produces. A turn
    /// produces more when the ``backlog``'s schedule says so: spread over the first quarter of
    /// the interval after the commit, the records are gone well before the next commit, and a
    /// record arriving meanwhile waits at most about a turn's share of them. Fewer, larger slices
    /// let the producer batch them better than many small ones spread thin, which left records
    /// waiting longer.
    static let backlogRecordsPerTurn = 2048

    /// Produces the next slice of the ``backlog``; called once per loop turn.
    func produceBacklogSlice() throws(KafkaError) {
        let started = ContinuousClock.now
        defer { self.timing.committing += .now - started }
        let due = self.backlog.recordsDue(at: started, minimum: Self.backlogRecordsPerTurn)
        try self.backlog.produce(upTo: due, through: self.outputs)
    }

    /// Produces everything left in the ``backlog``.
    func drainBacklog() throws(KafkaError) {
        guard !self.backlog.isEmpty else { return }
        try self.backlog.produce(upTo: self.backlog.count, through: self.outputs)
    }

    /// A commit took effect: its sampled records' commit latency, the commit counted.
    private func noteCommitted(latencySamples: [Int64], offsets: [KafkaTopicPartition]) {
        self.replayBackoff.reset()
        self.noteAborts(0)
        if !offsets.isEmpty {
            self.undeliverable.committed(
                Dictionary(
                    offsets.compactMap { offset in offset.offset.map { (offset.partition, $0) } },
                    uniquingKeysWith: max))
        }
        let committedAt = self.configuration.clock.nowMilliseconds()
        for timestamp in latencySamples where timestamp <= committedAt {
            self.metrics.commitLatency.record(.milliseconds(committedAt - timestamp))
        }
        self.metrics.committed.increment()
    }

    /// At-least-once, how many commits may wait for their records' acknowledgements before a
    /// commit flushes: the bound on what a late failure sends back to be processed again.
    static let maxUnsettledCommits = 16

    /// At-least-once: commits the offsets of the ``unsettled`` commits whose records are all
    /// acknowledged, oldest first, up to the first that is not; called once per loop turn.
    ///
    /// - Throws: The delivery failure of a record of the oldest commit left (the caller aborts:
    ///   ``abortAndRewind(after:)`` restores the state as of the group's offsets).
    func settle() throws(KafkaError) {
        if let failure = try self.settleAcknowledged() { throw failure }
    }

    /// At-least-once: produces the ``backlog``, flushes, then settles every commit (``settle()``).
    private func settleAll() throws(KafkaError) {
        guard !self.unsettled.isEmpty else { return }
        try self.drainBacklog()
        try self.outputs.producer.flush(timeout: self.configuration.operationTimeout)
        try self.settle()
        if !self.unsettled.isEmpty {
            // A record produced without a counted id (every slot busy): its report says.
            if let failure = self.deliveries.firstFailure { throw failure }
            // Flushed and no failure: every record was written.
            for commit in self.unsettled { try self.commitOffsets(commit) }
            self.unsettled.removeAll()
        }
    }

    /// Commits the offsets of the acknowledged commits, oldest first; stops at one that is not
    /// (yet), or one of whose records failed.
    ///
    /// - Returns: The failure of a record of the oldest commit left, if one failed.
    private func settleAcknowledged() throws(KafkaError) -> KafkaError? {
        while let oldest = self.unsettled.first, oldest.interval != 0 {
            let counts = self.outputs.producer.acknowledgements.counts(of: oldest.interval)
            if counts.failed > 0 {
                self.outputs.producer.poll()  // serves the failures' reports
                return self.deliveries.firstFailure
                    ?? KafkaError(
                        code: .state, message: "\(counts.failed) records of a commit interval were not delivered")
            }
            guard counts.delivered >= oldest.produced else { return nil }
            self.unsettled.removeFirst()
            try self.commitOffsets(oldest)
        }
        return nil
    }

    /// At-least-once: everything of `commit` was delivered, the changelog's commit markers
    /// included: its offsets go to the group (which may lag behind that, never run ahead of it).
    private func commitOffsets(_ commit: UnsettledCommit) throws(KafkaError) {
        // A partition revoked or lost since is another member's to commit.
        let offsets = commit.offsets.filter { self.partitions[$0.partition] != nil }
        let groupTook = try self.commitOffsetsOrDefer(offsets)
        for offset in offsets {
            guard let progress = self.partitions[offset.partition] else { continue }
            progress.groupBehind = !groupTook
            if groupTook { progress.groupOffset = offset.offset }
        }
        self.noteCommitted(latencySamples: commit.latencySamples, offsets: offsets)
    }

    /// At-least-once: commits the input offsets to the group once everything before them was
    /// delivered. A refusal that is not fatal (a rebalance in progress, a coordinator moving)
    /// leaves them for the next commit instead of replaying what was delivered: a restart or the
    /// next owner meanwhile starts from the group's older offset, with the state as of it. A
    /// member that lost its partitions hears it from the rebalance.
    ///
    /// - Returns: Whether the group took the offsets.
    /// - Throws: A fatal ``KafkaError``.
    private func commitOffsetsOrDefer(_ offsets: [KafkaTopicPartition]) throws(KafkaError) -> Bool {
        guard !offsets.isEmpty else { return true }
        do {
            try self.consumer.commit(offsets)
        } catch  where !error.isFatal {
            self.metrics.offsetsDeferred.increment()
            self.offsetCommitsRefusedInARow += 1
            if self.offsetCommitsRefusedInARow == 1 {
                self.logger.warning(
                    "the group did not take the offsets; they go with the next commit",
                    metadata: ["kafka.error": "\(error)", "kafka.partitions": "\(offsets.map(\.partition))"])
            }
            return false
        }
        if self.offsetCommitsRefusedInARow > 0 {
            self.logger.info(
                "the group took the deferred offsets",
                metadata: ["focusgate.refused": "\(self.offsetCommitsRefusedInARow)"])
            self.offsetCommitsRefusedInARow = 0
        }
        return true
    }

    /// Undoes everything since the last commit after a non-fatal error: aborts the transaction
    /// (exactly-once), rolls the partitions' state back, and rewinds them to the committed offsets
    /// so the same records are processed again.
    ///
    /// - Throws: A fatal ``KafkaError`` when the abort itself fails.
    ///
    /// At-least-once, a commit already put in use whose records failed (or were lost with a
    /// producer stopped by a fatal error) cannot be rolled back in memory: the partitions' state
    /// is then restored as of the group's offsets instead (``restoreFromGroup()``).
    func abortAndRewind(after error: KafkaError) throws(KafkaError) {
        self.logger.warning("aborting and rewinding to the last commit", metadata: ["kafka.error": "\(error)"])
        self.metrics.aborted.increment()
        self.commitLatencySamples.removeAll(keepingCapacity: true)  // sampled again when replayed
        var appliedCommitFailed = false
        if self.configuration.deliveryMode == .exactlyOnce && self.transactionOpen {
            do {
                try self.retrying { () throws(KafkaError) in
                    try self.outputs.producer.abortTransaction(timeout: self.configuration.operationTimeout)
                }
            } catch {
                throw KafkaError(code: error.code, message: "abort failed: \(error.message)", isFatal: true)
            }
            self.transactionOpen = false
            self.backlog.removeAll()  // aborted with the transaction, and its stages
            self.staged = (0, 0)
        } else if self.canReplaceProducer, let stopped = self.outputs.producer.fatalError {
            // What the stopped producer has not written is lost with it, the backlog too (its
            // commit is one of the unsettled ones).
            self.backlog.removeAll()
            _ = try self.settleAcknowledged()
            appliedCommitFailed = !self.unsettled.isEmpty
            try self.replaceProducer(stoppedBy: stopped)
        } else {
            // At-least-once: what was produced stays produced; the replay may duplicate it. The
            // last commit is in use: its records still to produce go too, or it failed.
            var backlogLost = false
            do {
                try self.drainBacklog()
            } catch {
                self.outputs.ledger.withdraw(self.backlog.removeAll(), from: self.backlog.deliveryID)
                backlogLost = true
            }
            _ = try? self.outputs.producer.flush(timeout: self.configuration.operationTimeout)
            // The interval being produced is given up (its records keep their id until acknowledged).
            self.outputs.ledger.advance(self.outputs.producer.acknowledgements)
            appliedCommitFailed = try self.settleAcknowledged() != nil || backlogLost
        }
        self.noteRefusedInput(error)
        self.deliveries.reset()
        self.putGroupOffsetsBack()
        if appliedCommitFailed {
            self.unsettled.removeAll()
            self.processedSinceCommit = 0
            return try self.restoreFromGroup()
        }
        self.metrics.replayed.increment(by: Int64(self.processedSinceCommit))
        self.processedSinceCommit = 0
        var seeks: [KafkaTopicPartition] = []
        for (partition, progress) in self.partitions {
            let seen = progress.seen
            progress.state.rollback()
            progress.next = nil
            progress.seen = nil
            // Every partition the consumer handed records of since the commit goes back, processed
            // or not: the records left in an interrupted batch are gone from the consumer's queue.
            guard let seen, seen != progress.committed else { continue }
            seeks.append(
                KafkaTopicPartition(
                    topic: self.configuration.topics.notifications, partition: partition, offset: progress.committed))
            progress.staleFrom = seen
        }
        if !seeks.isEmpty {
            seeks.sort { $0.partition < $1.partition }
            self.logger.info("rewinding", metadata: ["kafka.partitions": "\(seeks)"])
            try self.seek(seeks)
        }
    }

    /// At-least-once, a producer stopped by a fatal error is given up for a new one and the
    /// records since the last commit are replayed: nothing it failed was committed. (Exactly-once,
    /// a fatal producer error, a fenced one included, stops the instance.)
    var canReplaceProducer: Bool {
        self.configuration.deliveryMode == .atLeastOnce && self.outputs.producer.fatalError != nil
    }

    /// Replaces a producer stopped by a fatal error with a new one; what it still held, queued or
    /// in flight, is purged at once: the replay produces all of it again, and a purged record in
    /// flight that the broker wrote anyway is one of the replay's counted repeats. (Flushing it
    /// first waited up to `operationTimeout` for records queued behind the error, which a stopped
    /// producer never sends: a stall of that long per replacement.)
    /// The usual cause is a gap (``KafkaProducerConfiguration/isGapless``): the broker refused
    /// records for good, and the producer failed every record after them rather than write them
    /// ahead of the replay.
    private func replaceProducer(stoppedBy error: KafkaError) throws(KafkaError) {
        self.logger.warning(
            "the producer stopped with a fatal error; replaying since the last commit with a new producer",
            metadata: ["kafka.error": "\(error)"])
        self.outputs.producer.purge()
        self.outputs = try GatewayOutputs(
            configuration: self.configuration, worker: self.index, instanceTag: self.instanceTag,
            deliveries: self.deliveries, logger: self.logger)
        self.metrics.producerReplacements.increment()
    }

    /// Tries again the rewinds librdkafka refused (see ``seek(_:)``); called once per loop turn.
    func retryPendingRewinds() throws(KafkaError) {
        guard self.partitions.values.contains(where: \.rewindPending) else { return }
        let seeks = self.partitions.filter(\.value.rewindPending).sorted { $0.key < $1.key }.map {
            partition, progress in
            KafkaTopicPartition(
                topic: self.configuration.topics.notifications, partition: partition, offset: progress.committed)
        }
        try self.seek(seeks)
        if !self.partitions.values.contains(where: \.rewindPending) {
            self.logger.info("rewound", metadata: ["kafka.partitions": "\(seeks)"])
        }
    }

    /// Seeks each partition back to its committed offset. A seek librdkafka refuses with an error
    /// that is not fatal (`_OUTDATED` when it raced a rebalance of the partition) leaves the
    /// partition's records refused (``Partition/rewindPending``) and is tried again at the next
    /// loop turn, so that no record past the committed offset is taken without its replay; a
    /// partition revoked meanwhile is simply forgotten.
    func seek(_ seeks: [KafkaTopicPartition]) throws(KafkaError) {
        var refused: [KafkaTopicPartition] = []
        var firstError: KafkaError?
        for seek in seeks {
            guard let progress = self.partitions[seek.partition] else { continue }
            do {
                try self.consumer.seek([seek])
                progress.rewindPending = false
            } catch  where !error.isFatal {
                if !progress.rewindPending { refused.append(seek) }
                progress.rewindPending = true
                firstError = firstError ?? error
            }
        }
        if let firstError, !refused.isEmpty {
            self.logger.warning(
                "a rewind was refused; the partitions take no record until it is tried again and succeeds",
                metadata: ["kafka.partitions": "\(refused)", "kafka.error": "\(firstError)"])
        }
    }

    /// Commits the owned partitions' last committed offsets to the group again where an aborted
    /// transaction's group commit (``groupOffsetsAhead``) moved them on, so that a restart or the
    /// next owner replays the aborted records. Best effort: a failure is logged.
    private func putGroupOffsetsBack() {
        guard !self.groupOffsetsAhead.isEmpty else { return }
        defer { self.groupOffsetsAhead.removeAll() }
        let back = self.groupOffsetsAhead.compactMap { partition -> KafkaTopicPartition? in
            guard let committed = self.partitions[partition]?.committed, committed >= 0 else { return nil }
            return KafkaTopicPartition(
                topic: self.configuration.topics.notifications, partition: partition, offset: committed)
        }
        guard !back.isEmpty else { return }
        do {
            try self.consumer.commit(back)
        } catch {
            self.logger.warning(
                "could not put the group's offsets back after an abort",
                metadata: ["kafka.error": "\(error)", "kafka.partitions": "\(back)"])
        }
    }

    /// Runs a transactional call again while librdkafka says the error is retriable.
    private func retrying(_ call: () throws(KafkaError) -> Void) throws(KafkaError) {
        var attempts = 0
        while true {
            do {
                return try call()
            } catch  where error.isRetriable && !error.requiresTransactionAbort && !error.isFatal && attempts < 5 {
                attempts += 1
                self.logger.info("retrying", metadata: ["kafka.error": "\(error)", "focusgate.attempt": "\(attempts)"])
            }
        }
    }
}
