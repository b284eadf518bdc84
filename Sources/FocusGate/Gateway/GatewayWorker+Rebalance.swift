import FocusGateCore
import FocusGateKafka

// MARK: - Partitions arriving and leaving

extension GatewayWorker {
    /// The rebalance hook: runs on the worker's thread inside `consumeBatch`, before librdkafka
    /// changes the assignment. Failures are kept in ``hookFailure`` for the loop to rethrow.
    func rebalance(_ rebalance: KafkaRebalance) {
        self.metrics.rebalances.increment()
        self.replayBackoff.reset()
        self.noteAborts(0)
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

    /// Has the arriving partitions' state restored from the changelog before any of their
    /// records is consumed, as of their committed offsets (read here: the rewind points).
    ///
    /// Under cooperative rebalancing the consumer holds the partitions back and the restore runs
    /// on the restore thread while the loop goes on with the partitions already held;
    /// ``installRestored()`` hands each over when it is done, and the consumer starts it at that
    /// offset. Under an eager protocol, which takes an assignment whole, the hook waits for it.
    private func assign(_ assigned: [KafkaTopicPartition]) throws(KafkaError) {
        guard !assigned.isEmpty else { return }
        let committed = try self.consumer.committed(assigned, timeout: self.configuration.operationTimeout)
        let jobs = self.restoreJobs(for: committed)
        let heldBack = self.consumer.holdBack(assigned)
        self.background.start(jobs)
        self.logger.info(
            "restoring partitions' state",
            metadata: [
                "kafka.partitions": "\(assigned.map(\.partition))",
                "focusgate.restore": "\(heldBack ? "beside the partitions held" : "before consuming")",
            ])
        guard !heldBack else { return }
        // The consumer starts where the state is as of: the offsets read above, not the group's
        // offsets as librdkafka would read them again after this hook (a late commit by the
        // partitions' previous owner could have moved them past records this state lacks).
        self.consumer.startAssigned(at: committed)
        try self.install(self.background.waitFor(generations: Set(jobs.map(\.generation))), assign: false)
    }

    /// A restore job for each partition, as of its committed offset, in partition order: the
    /// partitions are noted as restoring (readiness says so) until ``install(_:assign:)``.
    private func restoreJobs(for committed: [KafkaTopicPartition]) -> [BackgroundRestore.Job] {
        var jobs: [BackgroundRestore.Job] = []
        for partition in committed.sorted(by: { $0.partition < $1.partition }) {
            self.nextRestoreGeneration += 1
            let job = BackgroundRestore.Job(
                partition: partition.partition, committed: partition.offset, generation: self.nextRestoreGeneration)
            self.restoring[partition.partition] = job
            jobs.append(job)
        }
        self.health.restoreStarted()
        self.restoresSince = self.restoresSince ?? .now
        return jobs
    }

    /// Takes the restores that finished: each partition's state goes in use, and the consumer
    /// starts fetching it at the offset the state is as of. A failed restore stops the worker.
    ///
    /// A partition whose group offset moved while it was restored (the previous owner's last
    /// commit landing late) is restored again as of the new offset: started at the old one it
    /// would repeat what was committed, and a state as of the old one lacks what that commit's
    /// changelog records hold (they are skipped as uncommitted).
    func installRestored() throws(KafkaError) {
        var finished = self.background.takeFinished()
        let current = finished.compactMap { result -> KafkaTopicPartition? in
            guard self.restoring[result.job.partition]?.generation == result.job.generation,
                case .success = result.outcome, result.job.attempt < 3
            else { return nil }
            return KafkaTopicPartition(topic: self.configuration.topics.notifications, partition: result.job.partition)
        }
        guard !current.isEmpty else { return try self.install(finished, assign: true) }
        let committed: [KafkaTopicPartition]
        do {
            committed = try self.consumer.committed(current, timeout: self.configuration.operationTimeout)
        } catch {
            self.logger.warning(
                "the group's offsets could not be read again after a restore; starting at those restored at",
                metadata: ["kafka.error": "\(error)"])
            return try self.install(finished, assign: true)
        }
        var again: [BackgroundRestore.Job] = []
        for offset in committed {
            guard let index = finished.firstIndex(where: { $0.job.partition == offset.partition }) else { continue }
            var job = finished[index].job
            guard Self.restoredAt(offset.offset) != Self.restoredAt(job.committed) else { continue }
            self.logger.info(
                "the group's offset moved while the partition was restored; restoring it again",
                metadata: [
                    "kafka.partition": "\(job.partition)", "kafka.offset.restored": "\(job.committed ?? -1)",
                    "kafka.offset.committed": "\(offset.offset ?? -1)",
                ])
            finished.remove(at: index)
            self.nextRestoreGeneration += 1
            job.committed = offset.offset
            job.generation = self.nextRestoreGeneration
            job.attempt += 1
            self.restoring[job.partition] = job
            again.append(job)
        }
        self.background.start(again)
        try self.install(finished, assign: true)
    }

    /// A committed offset as a restore takes it: none and a negative one alike.
    private static func restoredAt(_ offset: Int64?) -> Int64? {
        offset.flatMap { $0 >= 0 ? $0 : nil }
    }

    private func install(_ finished: [BackgroundRestore.Finished], assign: Bool) throws(KafkaError) {
        var started: [KafkaTopicPartition] = []
        for result in finished {
            let job = result.job
            guard self.restoring[job.partition]?.generation == job.generation else { continue }
            self.restoring[job.partition] = nil
            let restored: (state: PartitionState, records: Int, uncommitted: Int)
            switch result.outcome {
            case .success(let value): restored = value
            case .failure(let error):
                // The partition cannot be consumed without its state: the worker stops.
                throw KafkaError(code: error.code, message: "restore: \(error.message)", isFatal: true)
            }
            var sourcePrefix = self.sourcePrefix
            DecimalText.append(Int64(job.partition), to: &sourcePrefix)
            sourcePrefix.append(UInt8(ascii: "/"))
            self.partitions[job.partition] = Partition(
                state: restored.state, committed: Self.restoredAt(job.committed) ?? KafkaOffset.beginning,
                sourcePrefix: sourcePrefix)
            self.progress.assigned.add(1, ordering: .relaxed)
            self.metrics.assignedPartitions.increment()
            started.append(
                KafkaTopicPartition(
                    topic: self.configuration.topics.notifications, partition: job.partition, offset: job.committed))
            self.logger.info(
                "partition restored",
                metadata: [
                    "kafka.partition": "\(job.partition)", "focusgate.state.records": "\(restored.records)",
                    "focusgate.state.uncommitted": "\(restored.uncommitted)",
                    "focusgate.state.users": "\(restored.state.userCount)",
                    "focusgate.duration": "\(result.duration)",
                ])
        }
        if assign, !started.isEmpty {
            try self.consumer.assignHeldBack(started)
        }
        if !started.isEmpty, !self.changesDuringRestore.isEmpty {
            // Invalidations that came while these partitions were restored.
            let now = self.configuration.clock.nowMilliseconds()
            for (userID, context) in self.changesDuringRestore {
                if self.recompute(userID: userID.string, context: context, nowMilliseconds: now) {
                    self.changesDuringRestore[userID] = nil
                }
            }
        }
        self.noteRestoresEnded()
    }

    /// Readiness says no restore runs once none is left.
    private func noteRestoresEnded() {
        guard self.restoring.isEmpty, let since = self.restoresSince else { return }
        self.restoresSince = nil
        self.changesDuringRestore.removeAll()
        self.health.restoreEnded()
        self.logger.info("partitions restored", metadata: ["focusgate.duration": "\(ContinuousClock.now - since)"])
    }

    /// Commits the work of the leaving partitions (or, when the assignment was lost, abandons the
    /// open transaction), then forgets their state.
    private func revoke(_ revoked: [Int32], lost: Bool) throws(KafkaError) {
        guard !revoked.isEmpty else { return }
        let cancelled = revoked.compactMap { self.restoring.removeValue(forKey: $0)?.generation }
        if !cancelled.isEmpty {
            self.background.cancel(generations: cancelled)
            self.noteRestoresEnded()
        }
        if !lost {
            do {
                try self.commit(final: true)
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
            guard let progress = self.removePartition(partition) else { continue }
            pastGroup += progress.committedPastGroup
            if let gauge = self.lagGauges.removeValue(forKey: partition) { self.metrics.removeConsumerLag(gauge) }
        }
        if lost {
            // Another member may own these partitions now; what this worker did since its last
            // commit for the others is undone too, since it shared the transaction.
            try self.abortAndRewind(after: KafkaError(code: .state, message: "assignment lost"))
        }
    }

    /// At-least-once, after a commit already put in use failed (``abortAndRewind(after:)``): its
    /// changes are in the partitions' state and no longer roll back. Every owned partition's
    /// state is restored again, on this thread, from the changelog as of the group's offsets,
    /// where the last commit whose records were all delivered left them (the changelog's records
    /// of the commits past them are not applied), and the partition is consumed again from there.
    /// The records processed past those offsets are counted as replayed.
    ///
    /// The group's offsets are asked of its coordinator; when it cannot answer (a broker outage
    /// is what often fails the commit in the first place), the offsets this worker saw the group
    /// take (``Partition/groupOffset``) stand in: the group holds them or ones past them, since
    /// only this member commits the partitions, so the state restored is the group's or an older
    /// one, and what lies between is consumed again, never skipped.
    func restoreFromGroup() throws(KafkaError) {
        let owned = self.partitions.keys.sorted()
        guard !owned.isEmpty else { return }
        let topic = self.configuration.topics.notifications
        let committed: [KafkaTopicPartition]
        do {
            committed = try self.consumer.committed(
                owned.map { KafkaTopicPartition(topic: topic, partition: $0) },
                timeout: self.configuration.operationTimeout)
        } catch {
            committed = owned.map { partition in
                KafkaTopicPartition(
                    topic: topic, partition: partition,
                    offset: self.partitions[partition]?.groupOffset ?? KafkaOffset.invalid)
            }
            self.logger.warning(
                "the group's offsets could not be read; restoring as of the offsets this worker saw the group take",
                metadata: ["kafka.error": "\(error)", "kafka.partitions": "\(committed)"])
        }
        var seen: [Int32: Int64] = [:]
        var replayed: Int64 = 0
        var removed: [KafkaTopicPartition] = []
        for offset in committed {
            guard let progress = self.removePartition(offset.partition) else { continue }
            removed.append(offset)
            seen[offset.partition] = progress.seen
            let reached = progress.next ?? progress.committed
            if reached >= 0 { replayed += max(0, reached - (Self.restoredAt(offset.offset) ?? 0)) }
        }
        let jobs = self.restoreJobs(for: removed)
        self.logger.warning(
            "records of a commit in use were not delivered; restoring the partitions' state as of the group's offsets",
            metadata: ["kafka.partitions": "\(committed)", "focusgate.records": "\(replayed)"])
        self.metrics.replayed.increment(by: replayed)
        self.background.start(jobs)
        try self.install(self.background.waitFor(generations: Set(jobs.map(\.generation))), assign: false)
        var seeks: [KafkaTopicPartition] = []
        for job in jobs {
            guard let progress = self.partitions[job.partition] else { continue }
            // Records fetched before the seek come first and are not taken (see Partition.staleFrom).
            if let before = seen[job.partition], before != progress.committed { progress.staleFrom = before }
            seeks.append(KafkaTopicPartition(topic: topic, partition: job.partition, offset: progress.committed))
        }
        try self.seek(seeks)
    }

    /// Forgets a partition's state and counts it out of the owned ones.
    private func removePartition(_ partition: Int32) -> Partition? {
        guard let progress = self.partitions.removeValue(forKey: partition) else { return nil }
        self.progress.assigned.subtract(1, ordering: .relaxed)
        self.metrics.assignedPartitions.decrement()
        return progress
    }

    // MARK: - Context changes and expiry

    /// Recomputes the badges of owned users whose context the invalidation listener changed.
    /// A change for a user no held partition has is kept while restores run: the user's
    /// partition may be one of them, and takes it when it is put in use.
    func applyContextChanges() throws(KafkaError) {
        let changes = self.inbox.drain()
        guard !changes.isEmpty else { return }
        let now = self.configuration.clock.nowMilliseconds()
        for change in changes {
            // Also watches the user's next transition under the new context.
            let held = self.recompute(userID: change.userID, context: change.context, nowMilliseconds: now)
            if !held, !self.restoring.isEmpty { self.changesDuringRestore[UserID(change.userID)] = change.context }
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
                guard case .available(let context)? = lookups[UserID(userID)] else {
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
    /// the worker looks at the next `retentionSweepUsers` users of its partitions in all, each
    /// partition from where its last step stopped and the partitions in turn, so that a step costs
    /// the same however many partitions the worker holds (a full pass over 1,000,000 users takes
    /// about two minutes). Those with something decided before the cutoff forget it under their
    /// contexts (one batched store query for the users the cache does not hold). Changed badges
    /// and the tombstones of forgotten users go out with the next commit. A user whose context
    /// cannot be had now is looked at again on the next pass.
    func applyRetention() throws(KafkaError) {
        let retention = self.configuration.stateRetentionMilliseconds
        guard retention > 0, ContinuousClock.now >= self.nextRetentionSweep else { return }
        self.nextRetentionSweep = ContinuousClock.now + self.configuration.retentionSweepInterval
        let now = self.configuration.clock.nowMilliseconds()
        let cutoff = now - retention
        let held = self.partitions.map { (partition: $0.key, users: $0.value.state.userCount) }.sorted {
            $0.partition < $1.partition
        }
        for (partition, looks) in self.retentionSweep.step(budget: self.configuration.retentionSweepUsers, held: held) {
            guard let progress = self.partitions[partition] else { continue }
            let users = progress.state.usersToExpire(before: cutoff, examining: looks)
            guard !users.isEmpty else { continue }
            let lookups = self.cache.resolve(users)
            for userID in users {
                guard case .available(let context)? = lookups[UserID(userID)] else { continue }
                _ = progress.state.expire(userID: userID, context: context, nowMilliseconds: now, before: cutoff)
            }
        }
    }

    /// Whether a held partition has the user.
    private func recompute(userID: String, context: CompiledFocusContext?, nowMilliseconds: Int64) -> Bool {
        guard let owner = self.partitions.values.first(where: { $0.state.contains(userID: userID) }) else {
            return false
        }
        // The changed badges are published with the next commit.
        _ = owner.state.recompute(userID: userID, context: context, nowMilliseconds: nowMilliseconds)
        return true
    }
}
