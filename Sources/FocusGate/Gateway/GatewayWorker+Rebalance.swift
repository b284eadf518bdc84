import FocusGateCore
import FocusGateKafka

// MARK: - Partitions arriving and leaving

extension GatewayWorker {
    /// The rebalance hook: runs on the worker's thread inside `consumeBatch`, before librdkafka
    /// changes the assignment. Failures are kept in ``hookFailure`` for the loop to rethrow.
    func rebalance(_ rebalance: KafkaRebalance) {
        self.metrics.rebalances.increment()
        self.replayBackoff.reset()
        do {
            switch rebalance {
            case .assigned(let assigned):
                self.notePartitionCount()
                try self.assign(assigned.filter { $0.topic == self.configuration.topics.notifications })
            case .revoked(let revoked, let lost):
                try self.revoke(
                    revoked.filter { $0.topic == self.configuration.topics.notifications }.map(\.partition), lost: lost)
            }
        } catch {
            self.hookFailure = KafkaError(code: error.code, message: "rebalance: \(error.message)", isFatal: true)
        }
    }

    /// Notes how many partitions the input topic has, for the answers about users of every
    /// instance (``StateDirectory``): a rebalance follows every change of it. Kept as it was when the
    /// metadata does not come.
    private func notePartitionCount() {
        do {
            let count = try self.consumer.partitionCount(
                topic: self.configuration.topics.notifications, timeout: self.configuration.operationTimeout)
            self.progress.inputPartitions.store(count, ordering: .relaxed)
        } catch {
            self.logger.warning(
                "cannot read the input topic's partition count", metadata: ["kafka.error": "\(error)"])
        }
    }

    /// Restores the arriving partitions' state from the changelog before any of their records is
    /// consumed, notes their committed offsets as the rewind points, and has the consumer start
    /// there.
    private func assign(_ assigned: [KafkaTopicPartition]) throws(KafkaError) {
        guard !assigned.isEmpty else { return }
        let started = ContinuousClock.now
        self.health.restoreStarted()
        defer { self.health.restoreEnded() }
        let committed = try self.consumer.committed(assigned, timeout: self.configuration.operationTimeout)
        var restoredRecords = 0
        var skippedRecords = 0
        for partition in committed {
            var state = PartitionState(
                maxUnreadPerApp: self.configuration.maxUnreadPerApp,
                dedupeWindow: self.configuration.dedupeWindowPerUser,
                summaryItemsPerApp: self.configuration.summaryItemsPerApp)
            let restored = try self.restorer.restore(
                partition: partition.partition, committed: partition.offset, into: &state)
            restoredRecords += restored.records
            skippedRecords += restored.uncommitted
            var sourcePrefix = self.sourcePrefix
            DecimalText.append(Int64(partition.partition), to: &sourcePrefix)
            sourcePrefix.append(UInt8(ascii: "/"))
            self.partitions[partition.partition] = Partition(
                state: state, committed: partition.offset.flatMap { $0 >= 0 ? $0 : nil } ?? KafkaOffset.beginning,
                sourcePrefix: sourcePrefix)
            self.progress.assigned.add(1, ordering: .relaxed)
            self.metrics.assignedPartitions.increment()
        }
        // The consumer starts where the state is as of: the offsets read above, not the group's
        // offsets as librdkafka would read them again after this hook (a late commit by the
        // partitions' previous owner could have moved them past records this state lacks).
        self.consumer.startAssigned(at: committed)
        self.logger.info(
            "partitions restored",
            metadata: [
                "kafka.partitions": "\(assigned.map(\.partition))",
                "focusgate.state.records": "\(restoredRecords)",
                "focusgate.state.uncommitted": "\(skippedRecords)",
                "focusgate.duration": "\(ContinuousClock.now - started)",
            ]
        )
    }

    /// Commits the work of the leaving partitions (or, when the assignment was lost, abandons the
    /// open transaction), then forgets their state.
    private func revoke(_ revoked: [Int32], lost: Bool) throws(KafkaError) {
        guard !revoked.isEmpty else { return }
        if !lost {
            do {
                try self.commit()
            } catch  where !error.isFatal || self.canReplaceProducer {
                try self.abortAndRewind(after: error)
            }
        }
        var pastGroup: Int64 = 0
        defer {
            if pastGroup > 0 {
                // At-least-once: delivered, but the group refused the offsets (a deferral, the
                // lost membership itself); the next owner takes these records again.
                self.metrics.reconsumed.increment(by: pastGroup)
                self.logger.warning(
                    "partitions left with the group's offsets behind what was delivered; their next owner repeats it",
                    metadata: ["kafka.partitions": "\(revoked)", "focusgate.records": "\(pastGroup)"])
            }
        }
        for partition in revoked {
            guard let progress = self.partitions.removeValue(forKey: partition) else { continue }
            pastGroup += progress.deliveredPastGroup
            self.progress.assigned.subtract(1, ordering: .relaxed)
            self.metrics.assignedPartitions.decrement()
            if let gauge = self.lagGauges.removeValue(forKey: partition) { self.metrics.removeConsumerLag(gauge) }
        }
        if lost {
            // Another member may own these partitions now; what this worker did since its last
            // commit for the others is undone too, since it shared the transaction.
            try self.abortAndRewind(after: KafkaError(code: .state, message: "assignment lost"))
        }
    }

    // MARK: - Context changes and expiry

    /// Recomputes the badges of owned users whose context the invalidation listener changed.
    func applyContextChanges() throws(KafkaError) {
        let changes = self.inbox.drain()
        guard !changes.isEmpty else { return }
        let now = self.configuration.clock.nowMilliseconds()
        for change in changes {
            // Also watches the user's next transition under the new context.
            self.recompute(userID: change.userID, context: change.context, nowMilliseconds: now)
        }
    }

    /// Fires the owned partitions' due timers: recomputes the badges of users whose Focus in
    /// force has just changed with no message to say so (an expiry, a schedule boundary, the end
    /// of a manual override). Each user's next transition is watched again by the recompute. At
    /// most `timers.maxFiredPerBatch` fire per loop turn, so a mass transition (a million users
    /// whose Sleep starts at 22:00) is spread between record batches.
    func applyExpirations() throws(KafkaError) {
        let now = self.configuration.clock.nowMilliseconds()
        var budget = self.configuration.maxTimersPerBatch
        var fired = 0
        for (_, progress) in self.partitions.sorted(by: { $0.key < $1.key }) where budget > 0 {
            guard let next = progress.state.nextTransitionAt(), next <= now else { continue }
            let due = progress.state.dueTransitions(atMilliseconds: now, limit: budget)
            budget -= due.count
            fired += due.count
            // One batched store query for the users the cache does not hold.
            let lookups = self.cache.resolve(due.map(\.userID))
            for (userID, at) in due {
                self.metrics.timerLateness.record(.milliseconds(max(0, now - at)))
                guard case .available(let context)? = lookups[userID] else {
                    // The store is down: try again in a second rather than lose the transition.
                    progress.state.watchTransition(userID: userID, at: now + 1_000)
                    continue
                }
                // Publishes the changed badges with the next commit and watches the next transition.
                _ = progress.state.recompute(
                    userID: userID, context: context, nowMilliseconds: now, timerAt: at)
            }
        }
        if fired > 0 { self.metrics.timersFired.increment(by: Int64(fired)) }
        let pending = self.partitions.values.reduce(0) { $0 + $1.state.pendingTransitions }
        if pending != self.reportedTimersPending {
            self.metrics.timersPending(worker: self.index).set(Int64(pending))
            self.reportedTimersPending = pending
        }
    }

    /// A step of the retention's sweep (`state.retentionMs`), every `retentionSweepInterval`:
    /// each owned partition looks at its next `retentionSweepUsers` users, and those with
    /// something decided before the cutoff forget it under their contexts (one batched store
    /// query for the users the cache does not hold). Changed badges and the tombstones of
    /// forgotten users go out with the next commit. A user whose context cannot be had now is
    /// looked at again on the next pass.
    func applyRetention() throws(KafkaError) {
        let retention = self.configuration.stateRetentionMilliseconds
        guard retention > 0, ContinuousClock.now >= self.nextRetentionSweep else { return }
        self.nextRetentionSweep = ContinuousClock.now + self.configuration.retentionSweepInterval
        let now = self.configuration.clock.nowMilliseconds()
        let cutoff = now - retention
        for (_, progress) in self.partitions {
            let users = progress.state.usersToExpire(
                before: cutoff, examining: self.configuration.retentionSweepUsers)
            guard !users.isEmpty else { continue }
            let lookups = self.cache.resolve(users)
            for userID in users {
                guard case .available(let context)? = lookups[userID] else { continue }
                _ = progress.state.expire(userID: userID, context: context, nowMilliseconds: now, before: cutoff)
            }
        }
    }

    private func recompute(userID: String, context: CompiledFocusContext?, nowMilliseconds: Int64) {
        guard let owner = self.partitions.values.first(where: { $0.state.contains(userID: userID) }) else { return }
        // The changed badges are published with the next commit.
        _ = owner.state.recompute(userID: userID, context: context, nowMilliseconds: nowMilliseconds)
    }
}
