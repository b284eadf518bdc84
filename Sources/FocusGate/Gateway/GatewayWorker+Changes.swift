import FocusGateCore
import FocusGateKafka

// MARK: - Taking the state's changes into the backlog

extension GatewayWorker {
    /// How many parts an exactly-once interval's changelog records are written in
    /// (``stageChanges()``): three stages while the transaction is open, and the commit.
    static let exactlyOnceStages = 4

    /// The worker's commit schedule: exactly-once, with its stages.
    static func commitSchedule(
        _ configuration: GatewayConfiguration, now: ContinuousClock.Instant
    ) -> CommitSchedule {
        CommitSchedule(
            interval: configuration.commitInterval,
            stages: configuration.deliveryMode == .exactlyOnce ? Self.exactlyOnceStages : 1, now: now)
    }

    /// Exactly-once, writes the changelog records of the state's changes so far into the open
    /// transaction, so that its commit, which holds the loop, has only what changed since: each
    /// changed partition's records, closed by a commit marker as of its input so far, go to the
    /// ``backlog`` and out a slice per loop turn over the next eighth of the interval. Badge
    /// updates, status and summaries wait for the commit (coalesced per interval, as the contract
    /// says). The state still rolls back to the last commit, and an abort drops the stages with
    /// the transaction; on the embedded broker, whose aborted records stay readable, a restore
    /// takes or skips a stage's records by its marker as it does an aborted commit's
    /// (docs/state.md).
    func stageChanges() {
        let now = ContinuousClock.now
        self.commitSchedule.staged(at: now)
        // Only exactly-once opens transactions; a transaction opens with its first record.
        guard self.transactionOpen, self.backlog.isEmpty else { return }
        let writtenAt = self.configuration.clock.nowMilliseconds()
        for (partition, progress) in self.partitions.sorted(by: { $0.key < $1.key })
        where progress.state.hasUnwrittenChanges {
            let written = self.takeStateChanges(of: partition, progress, writtenAt: writtenAt)
            self.staged.records += written.records
            self.staged.bytes += written.bytes
        }
        guard !self.backlog.isEmpty else { return }
        self.backlog.deliveryID = self.outputs.ledger.current
        self.backlog.schedule(from: now, until: now + self.configuration.commitInterval / 8)
    }

    /// Puts what the changed partitions' state holds for the commit into the ``backlog``, per
    /// partition: badge updates (the latest of each (user, app) since the last commit), status
    /// changes (the latest of each user), summaries, the changelog records of the keys that
    /// changed (since the last stage, ``stageChanges()``) and the commit marker that closes them.
    func takeChanges(
        of changed: [(key: Int32, value: Partition)]
    ) -> (stateRecords: Int, stateBytes: Int, badgeUpdates: Int) {
        var stateRecords = 0
        var stateBytes = 0
        var badgeUpdates = 0
        // Each state record's timestamp is the commit's time, by the gateway's clock: an entry's
        // decided-at is written as its distance below it.
        let writtenAt = self.configuration.clock.nowMilliseconds()
        for (partition, progress) in changed {
            let updates = progress.state.pendingBadgeUpdates
            self.backlog.appendBadges(updates)
            badgeUpdates += updates.count
            for update in progress.state.pendingStatusUpdates {
                self.recordKey.removeAll(keepingCapacity: true)
                self.recordKey.append(contentsOf: update.userID.utf8)
                update.writeJSON(into: &self.recordValue)
                self.backlog.append(.status, partition: nil, key: self.recordKey, value: self.recordValue)
            }
            // Summaries of what ended Foci silenced, and those of summary times.
            let summaries = progress.state.pendingSummaries
            if !summaries.isEmpty {
                let prefix = "\(self.configuration.topics.notifications)/\(partition)/"
                let createdAt = self.configuration.clock.nowMilliseconds()
                for summary in summaries {
                    self.recordKey.removeAll(keepingCapacity: true)
                    self.recordKey.append(contentsOf: summary.userID.utf8)
                    summary.writeJSON(into: &self.recordValue, sourcePrefix: prefix, createdAtMilliseconds: createdAt)
                    self.backlog.append(.summaries, partition: nil, key: self.recordKey, value: self.recordValue)
                }
                self.metrics.summaries.increment(by: Int64(summaries.count))
            }
            let state = self.takeStateChanges(of: partition, progress, writtenAt: writtenAt)
            stateRecords += state.records
            stateBytes += state.bytes
        }
        return (stateRecords, stateBytes, badgeUpdates)
    }

    /// The changelog records of the keys of `partition` changed since the state's last write,
    /// closed by a commit marker as of the partition's input so far, into the ``backlog``.
    private func takeStateChanges(
        of partition: Int32, _ progress: Partition, writtenAt: Int64
    ) -> (records: Int, bytes: Int) {
        var records = 0
        var bytes = 0
        let through = progress.next ?? progress.committed
        let marker = PartitionState.commitMarkerValue(through: through)
        // Each record says which commit it belongs to: another writer's records (a member
        // that lost the partition, an aborted transaction the embedded broker shows) can lie
        // between it and its marker.
        let asOf = self.backlog.addAsOf(marker)
        let headerBytes = PartitionState.asOfHeader.utf8.count + marker.count
        progress.state.writeChanges(asOf: through, writtenAt: writtenAt) { key, value in
            self.backlog.append(
                .state, partition: partition, key: key, value: value, asOf: asOf, timestamp: writtenAt)
            records += 1
            bytes += key.count + (value?.count ?? 0) + headerBytes
        }
        // Closes the partition's changes: a restore applies them only when the input offsets
        // of this transaction committed (see StateRestorer).
        self.backlog.append(
            .state, partition: partition, key: PartitionState.commitMarkerKey, value: marker, timestamp: writtenAt)
        records += 1
        bytes += PartitionState.commitMarkerKey.count + marker.count
        return (records, bytes)
    }
}
