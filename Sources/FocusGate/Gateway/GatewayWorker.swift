import FocusGateCore
import FocusGateKafka
import Glibc
import Logging
import Prometheus

/// One consume-decide-produce thread (docs/contract.md, Guarantees): a consumer-group member with its own producer,
/// and the badge and dedupe state of the partitions it owns.
///
/// Everything here runs on the worker's thread: the batch loop, the rebalance hook (inside
/// `consumeBatch`), delivery reports (inside `poll`/`flush`) and commits. Nothing is shared with
/// other threads except through ``ContextCache`` (one lookup per batch), ``ContextChangeInbox``
/// (drained once per loop), its ``StateDirectory/Desk`` (questions about users, answered in the
/// loop) and its ``BackgroundRestore`` (arriving partitions' state, read on a thread of its own
/// and taken by the loop when done).
final class GatewayWorker {
    /// Where one owned input partition stands.
    /// A class, not a struct: a partition (its state included) is never copied by reading it out
    /// of ``partitions`` or by iterating them while changing one, which for a value would copy
    /// the dictionary and then every array of the state it changes.
    final class Partition {
        var state: PartitionState
        /// The offset a rewind returns to: the last committed one (`KafkaOffset.beginning` when none).
        /// At-least-once, a commit whose outputs and state were all delivered moves it on even when
        /// the group did not take the offset (``groupBehind``).
        var committed: Int64
        /// At-least-once: the group's offset is behind ``committed``, because its offset commit
        /// failed after everything up to ``committed`` was delivered; the next commit sends it
        /// again. A restart or the next owner meanwhile starts from the group's offset, with the
        /// state as of it (the changelog's commit markers past it are not applied).
        var groupBehind = false
        /// At-least-once: the offset the group holds for the partition, as far as this worker
        /// knows: the committed offset it was assigned at, then each one the group took. Until
        /// the group holds one, the first record taken since the assignment (where
        /// `auto.offset.reset=earliest` starts the next owner). A partition that leaves while
        /// ``groupBehind`` is consumed again from here by its next owner
        /// (`focusgate_reconsumed_records_total`).
        var groupOffset: Int64?
        /// The offset after the last record processed since assignment or rewind.
        var next: Int64?
        /// The offset after the last record the consumer handed over (processed or not: an abort
        /// can stop a batch midway). A rewind is needed when it is past ``committed``.
        var seen: Int64?
        /// After a rewind in librdkafka 2.0.2, `consume_batch_queue` may still return records
        /// fetched before the seek; they have offsets at or above this one and come first.
        var staleFrom: Int64?
        /// What the retention had forgotten at the last commit, as the metrics were told.
        var reportedForgotten = (notifications: 0, users: 0)

        /// Tells the metrics what the retention forgot since the last commit (called right after one).
        func reportForgotten(to metrics: GatewayMetrics) {
            let forgotten = (notifications: self.state.forgottenEntries, users: self.state.forgottenUsers)
            guard forgotten != self.reportedForgotten else { return }
            metrics.forgottenNotifications.increment(
                by: Int64(forgotten.notifications - self.reportedForgotten.notifications))
            metrics.forgottenUsers.increment(by: Int64(forgotten.users - self.reportedForgotten.users))
            self.reportedForgotten = forgotten
        }
        /// A rewind to ``committed`` that librdkafka refused (a seek can race a rebalance and come
        /// back `_OUTDATED`): no record of the partition is taken until the seek succeeds.
        var rewindPending = false
        /// `<notifications topic>/<partition>/`: the part of the `focusgate-source` header its
        /// records share, written once at assignment.
        let sourcePrefix: [UInt8]

        init(state: PartitionState, committed: Int64, sourcePrefix: [UInt8] = []) {
            self.state = state
            self.committed = committed
            self.sourcePrefix = sourcePrefix
            self.groupOffset = committed >= 0 ? committed : nil
        }

        /// The records committed in memory past the group's offset (their offsets refused by the
        /// group, or waiting for their acknowledgements): what the partition's next owner consumes
        /// again, repeating what of it was delivered, if it leaves now.
        var committedPastGroup: Int64 {
            guard let groupOffset = self.groupOffset else { return 0 }
            return max(0, self.committed - groupOffset)
        }

        var hasUncommittedOffsets: Bool { self.next.map { $0 != self.committed } ?? false }

        /// Whether the record at `offset` is to be processed: not one fetched before a rewind,
        /// not behind what was processed. Notes it as seen.
        func accepts(offset: Int64) -> Bool {
            if self.rewindPending { return false }
            if let staleFrom = self.staleFrom {
                if offset >= staleFrom { return false }
                self.staleFrom = nil  // the replay has begun
            }
            if let next = self.next, offset < next { return false }
            if self.groupOffset == nil { self.groupOffset = offset }
            self.seen = max(self.seen ?? offset + 1, offset + 1)
            return true
        }
    }

    let index: Int
    let configuration: GatewayConfiguration
    let cache: ContextCache
    let inbox: ContextChangeInbox
    let desk: StateDirectory.Desk
    let metrics: GatewayMetrics
    let progress: GatewayProgress
    /// The worker's share of readiness (one of ``progress``'s).
    let health: WorkerHealth
    let logger: Logger
    private let shouldStop: @Sendable () -> Bool
    private let onReady: @Sendable () -> Void

    let decoder: EventDecoder
    let consumer: KafkaConsumer
    /// The producer and its topic handles, replaced whole when an at-least-once producer stops
    /// with a fatal error (``replaceProducer(stoppedBy:)``).
    var outputs: GatewayOutputs
    /// Part of the transactional id (exactly-once), kept for a replacement producer.
    let instanceTag: String
    /// Restores arriving partitions' state on a thread of its own (``BackgroundRestore``).
    let background: BackgroundRestore
    /// Partitions assigned to this worker whose state is being restored: the consumer holds them
    /// back, and nothing else in the worker sees them until ``installRestored()``.
    var restoring: [Int32: BackgroundRestore.Job] = [:]
    /// The number of the last restore job.
    var nextRestoreGeneration = 0
    /// Context changes for users of no held partition that came while restores run, by user:
    /// applied to the partitions restored (``applyContextChanges()``).
    var changesDuringRestore: [UserID: CompiledFocusContext?] = [:]
    /// When the restores running began (`nil` when none runs).
    var restoresSince: ContinuousClock.Instant?
    let deliveries: DeliveryLog
    var partitions: [Int32: Partition] = [:]
    var transactionOpen = false
    /// Records processed since the last commit: what an abort sends back to be processed again.
    var processedSinceCommit = 0
    /// At-least-once: commits put in use whose offsets wait for their records to be acknowledged,
    /// oldest first (``settle()``).
    var unsettled: [UnsettledCommit] = []
    /// The last commit's records not produced yet (at-least-once), or a stage's (exactly-once),
    /// a slice per loop turn.
    var backlog = CommitBacklog()
    /// Exactly-once, the changelog records and bytes the stages of the open transaction wrote,
    /// counted when it commits (``stageChanges()``).
    var staged = (records: 0, bytes: 0)
    /// At-least-once offset commits the group refused since it last took one (the first of them logs a warning).
    var offsetCommitsRefusedInARow = 0
    /// Partitions whose group offsets (`delivery.commitGroupOffsets`) were committed for a
    /// transaction that has not committed yet: an abort puts them back.
    var groupOffsetsAhead: [Int32] = []
    /// An error raised inside the rebalance hook, rethrown by the loop.
    var hookFailure: KafkaError?
    var lagGauges: [Int32: Gauge] = [:]
    /// The pending timers last set on this worker's gauge.
    var reportedTimersPending = -1
    /// When the retention's sweep takes its next step (``applyRetention()``).
    var nextRetentionSweep = ContinuousClock.now
    /// Where the retention's next step starts (``applyRetention()``).
    var retentionSweep = RetentionSweepTurns()
    /// Where the loop's time went: waiting for records, processing batches, committing.
    var timing = (waiting: Duration.zero, processing: Duration.zero, committing: Duration.zero)
    /// When the loop commits next.
    var commitSchedule: CommitSchedule
    /// How long to pause before a replay, by the aborts since the last commit.
    var replayBackoff: ReplayBackoff
    /// Inputs whose outputs were refused, and those to dead-letter on their replay.
    var undeliverable: UndeliverableInputs
    /// The input whose output the producer refused as it was produced (the abort's cause).
    var refusedInput: UndeliverableInputs.Position?
    /// `focusgate_worker_aborts_in_a_row` of this worker.
    let abortsGauge: Gauge

    /// What each batch reuses of the one before (``BatchBuffers``).
    var buffers = BatchBuffers()
    /// The `focusgate-*` headers' names, and the decisions' outcome and reason headers, encoded once.
    let outputHeaders = OutputHeaders()
    /// The key and value of a commit's status or summary record, rebuilt in place.
    var recordKey: [UInt8] = []
    var recordValue: [UInt8] = []
    /// `<notifications topic>/`, the start of every `focusgate-source` header.
    let sourcePrefix: [UInt8]
    /// `people.repeatedWindowSeconds`, in milliseconds.
    let repeatedWindowMilliseconds: Int64
    /// Input timestamps (Unix ms) of the records sampled for latency since the last commit.
    var commitLatencySamples: [Int64] = []

    /// At-least-once: a commit whose outputs, state changelog and commit markers were produced
    /// and whose state is in use, its input offsets waiting for the cluster to acknowledge them.
    struct UnsettledCommit {
        /// The delivery id its records were produced with (``IntervalLedger``); 0 if not counted.
        let interval: UInt64
        /// How many records were produced with it.
        let produced: Int
        /// The input offsets it commits.
        let offsets: [KafkaTopicPartition]
        /// Input timestamps of the records sampled for commit latency.
        let latencySamples: [Int64]
    }

    /// Creates the worker and its clients (producer, consumer, state restorer) on the thread that
    /// then runs it; the consumer joins the group in ``run()``.
    ///
    /// - Throws: ``KafkaError`` when a client cannot be made.
    init(
        index: Int, configuration: GatewayConfiguration, instanceTag: String, cache: ContextCache,
        inbox: ContextChangeInbox, desk: StateDirectory.Desk, metrics: GatewayMetrics,
        progress: GatewayProgress, logger: Logger, shouldStop: @escaping @Sendable () -> Bool,
        onReady: @escaping @Sendable () -> Void
    ) throws(KafkaError) {
        var logger = logger
        logger[metadataKey: "focusgate.worker"] = "\(index)"
        let deliveries = DeliveryLog(inputTopic: configuration.topics.notifications)
        self.deliveries = deliveries
        self.instanceTag = instanceTag
        self.outputs = try GatewayOutputs(
            configuration: configuration, worker: index, instanceTag: instanceTag, deliveries: deliveries,
            logger: logger)
        let restorer = try StateRestorer(configuration: configuration, logger: logger)
        // The consumer's hooks run inside its calls on this thread, which begin after this init:
        // they reach the worker through `events`, set once the worker exists.
        let events = ConsumerEvents()
        var consumerConfiguration = configuration.consumerConfiguration(worker: index, instanceTag: instanceTag)
        consumerConfiguration.statisticsInterval = .seconds(5)
        let consumer = try KafkaConsumer(
            configuration: consumerConfiguration, logger: logger,
            onRebalance: { rebalance in events.worker?.rebalance(rebalance) },
            onStatistics: { statistics in events.worker?.recordStatistics(statistics) }
        )
        self.consumer = consumer
        let waker = consumer.waker
        self.background = BackgroundRestore(
            restorer: restorer, name: "focusgate-restore-\(index)",
            makeState: {
                PartitionState(
                    maxUnreadPerApp: configuration.maxUnreadPerApp, dedupeWindow: configuration.dedupeWindowPerUser,
                    summaryItemsPerApp: configuration.summaryItemsPerApp)
            },
            wake: { waker.wake() })
        self.index = index
        self.configuration = configuration
        self.cache = cache
        self.inbox = inbox
        self.desk = desk
        self.metrics = metrics
        self.progress = progress
        self.health = progress.workers[index]
        self.logger = logger
        self.shouldStop = shouldStop
        self.onReady = onReady
        self.decoder = EventDecoder(maxEventBytes: configuration.maxEventBytes)
        self.commitSchedule = Self.commitSchedule(configuration, now: .now)
        self.replayBackoff = ReplayBackoff(
            initial: configuration.replayBackoff, maximum: configuration.maxReplayBackoff)
        self.undeliverable = UndeliverableInputs(maxAttempts: configuration.maxAttemptsPerInput)
        self.abortsGauge = metrics.abortsInARow(worker: index)
        self.abortsGauge.set(Int64(0))
        self.sourcePrefix = Array((configuration.topics.notifications + "/").utf8)
        let window = configuration.repeatedSenderWindow.components
        self.repeatedWindowMilliseconds = window.seconds * 1000 + window.attoseconds / 1_000_000_000_000_000
        events.worker = self
    }

    deinit {
        self.background.stop()
    }

    /// Where the consumer's rebalance and statistics hooks go: the worker, once it exists.
    private final class ConsumerEvents {
        weak var worker: GatewayWorker?
    }

    // MARK: - Life cycle

    /// Runs until asked to stop, then commits, leaves the group and flushes.
    ///
    /// - Throws: A fatal ``KafkaError`` (e.g. the producer was fenced); the caller shuts the
    ///   instance down.
    func run() throws(KafkaError) {
        defer { self.background.stop() }
        guard try self.start() else { return }
        self.desk.open(waker: self.consumer.waker)
        defer {
            self.desk.close()
            self.consumer.close()
        }
        self.commitSchedule = Self.commitSchedule(self.configuration, now: .now)
        while !self.shouldStop() {
            self.health.turned()
            let wait = self.recordWait(until: self.commitSchedule.due)
            let allocations = AllocationCounter.threadAllocations()
            defer {
                self.metrics.workerAllocations?.increment(
                    by: Int64(AllocationCounter.threadAllocations() &- allocations))
            }
            do {
                try self.retryPendingRewinds()
                let polled = ContinuousClock.now
                try self.consumer.consumeBatch(maxRecords: self.configuration.maxBatchRecords, timeout: wait) {
                    (batch) throws(KafkaError) in  // called once, the batch empty when none came in time
                    let started = ContinuousClock.now
                    let waited = started - polled
                    self.timing.waiting += waited
                    self.commitSchedule.waited(waited)
                    try self.process(batch)
                    self.timing.processing += ContinuousClock.now - started
                }
                try self.checkFatal()
                if self.background.hasFinished { try self.installRestored() }
                try self.applyContextChanges()
                try self.applyExpirations()
                try self.applyRetention()
                self.outputs.producer.poll()
                if !self.backlog.isEmpty { try self.produceBacklogSlice() }
                if self.commitSchedule.isStageDue(at: .now) { self.stageChanges() }
                if !self.unsettled.isEmpty { try self.settle() }
                if self.desk.hasQuestions { self.desk.answer { self.reply(to: $0) } }
                if ContinuousClock.now >= self.commitSchedule.due {
                    let started = ContinuousClock.now
                    try self.commit()
                    let ended = ContinuousClock.now
                    self.timing.committing += ended - started
                    self.commitSchedule.committed(started: started, ended: ended)
                    self.desk.answer { self.reply(to: $0, committed: true) }
                }
            } catch  where !error.isFatal || self.canReplaceProducer {
                try self.abortAndRewind(after: error)
                self.desk.answer { self.reply(to: $0, committed: true) }
                if error.isGroupMembershipChange {
                    self.replayBackoff.reset()  // the rebalance resolves it: serve it at once
                } else {
                    let pause = self.replayBackoff.aborted()
                    self.noteAborts(self.replayBackoff.abortsInARow)
                    self.pauseBeforeReplay(pause)
                }
            }
        }
        self.logger.info("stopping: committing and leaving the group")
        do {
            try self.commit(final: true)
        } catch  where !error.isFatal || self.canReplaceProducer {
            try self.abortAndRewind(after: error)
        }
        self.consumer.close()  // the revoke hook finds nothing left to commit
        try self.checkFatal()
        try self.outputs.producer.flush(timeout: self.configuration.operationTimeout)
        self.logger.debug(
            "worker stopped",
            metadata: [
                "focusgate.waiting": "\(self.timing.waiting)", "focusgate.processing": "\(self.timing.processing)",
                "focusgate.committing": "\(self.timing.committing)",
            ]
        )
    }

    /// How long a loop turn may wait for records: until the next commit or the next Focus
    /// transition a partition watches, at most 100 ms and at least 1 ms (the consumer counts whole
    /// milliseconds: a shorter wait would not wait, and the loop would spin). Not at all when a
    /// commit or a transition is due, so that transitions beyond one turn's
    /// ``GatewayConfiguration/maxTimersPerBatch`` fire turn after turn also when no input arrives,
    /// nor while a commit's records wait to be produced (``backlog``).
    private func recordWait(until nextCommit: ContinuousClock.Instant) -> Duration {
        let untilCommit = nextCommit - ContinuousClock.now
        guard untilCommit > .zero, self.backlog.isEmpty else { return .zero }
        var wait = min(.milliseconds(100), untilCommit)
        let now = self.configuration.clock.nowMilliseconds()
        for progress in self.partitions.values {
            guard let next = progress.state.nextTransitionAt() else { continue }
            guard next > now else { return .zero }
            wait = min(wait, .milliseconds(next - now))
        }
        return max(wait, .milliseconds(1))
    }

    /// Aborts since the last commit, for readiness (`progress`) and its gauge.
    func noteAborts(_ count: Int) {
        if self.health.noteAborts(count) { self.abortsGauge.set(Int64(count)) }
    }

    /// In an abort, once the failed records' delivery reports are served: the input whose
    /// output was refused, if the refusal names one (the record being produced, or a failed
    /// delivery's `focusgate-source`), counts a refusal; one refused for its size, or
    /// `commit.maxAttemptsPerInput` times, is dead-lettered on the replay.
    func noteRefusedInput(_ error: KafkaError) {
        self.outputs.producer.poll()
        var refused = self.deliveries.firstRefusedInput
        if let input = self.refusedInput, UndeliverableInputs.isAboutRecord(error) { refused = (input, error) }
        self.refusedInput = nil
        guard let (position, cause) = refused else { return }
        let attempts = self.undeliverable.attempts(of: position) + 1
        if self.undeliverable.refused(position, error: cause) {
            self.logger.error(
                "an input's outputs were refused: it goes to the DLQ as undeliverable when replayed",
                metadata: [
                    "kafka.partition": "\(position.partition)", "kafka.offset": "\(position.offset)",
                    "kafka.error": "\(cause)", "focusgate.attempts": "\(attempts)",
                ])
        }
    }

    /// Pauses `pause` before the replay of an abort in a row (``ReplayBackoff``), in slices that
    /// answer badge questions (the state is as committed) and end early when asked to stop.
    /// librdkafka's own threads keep the group membership meanwhile.
    private func pauseBeforeReplay(_ pause: Duration) {
        guard pause > .zero else { return }
        self.logger.warning(
            "aborts in a row: pausing before the replay",
            metadata: [
                "focusgate.aborts": "\(self.replayBackoff.abortsInARow)", "focusgate.pause": "\(pause)",
            ])
        let started = ContinuousClock.now
        let end = started + pause
        while !self.shouldStop(), ContinuousClock.now < end {
            if self.desk.hasQuestions { self.desk.answer { self.reply(to: $0, committed: true) } }
            usleep(useconds_t(max(1, min(20_000, (end - ContinuousClock.now) / .microseconds(1)))))
        }
        self.metrics.replayBackoff.increment(by: (ContinuousClock.now - started) / .seconds(1))
    }

    /// Registers the transactional id (exactly-once) and joins the group; `false` when asked to
    /// stop before that was done.
    private func start() throws(KafkaError) -> Bool {
        if self.configuration.deliveryMode == .exactlyOnce {
            guard try self.initTransactions() else { return false }
        }
        try self.consumer.subscribe([self.configuration.topics.notifications])
        self.onReady()
        return true
    }

    /// Registers the transactional id, retrying while the brokers cannot be reached (not ready
    /// meanwhile) and giving up only when asked to stop; `false` then.
    private func initTransactions() throws(KafkaError) -> Bool {
        while true {
            do {
                try self.outputs.producer.initTransactions(
                    timeout: min(.seconds(5), self.configuration.operationTimeout))
                return true
            } catch  where error.isRetriable && !error.isFatal {
                if self.shouldStop() { return false }
                self.logger.warning(
                    "cannot register the transactional producer yet; retrying", metadata: ["kafka.error": "\(error)"])
            }
        }
    }

    /// The user's committed badges, when a partition of this worker holds the user: at once when
    /// the partition has no uncommitted changes or `committed` says the state is as committed
    /// (right after a commit or an abort), else after the next commit.
    private func reply(to question: StateDirectory.Question, committed: Bool = false) -> StateDirectory.Reply {
        for (partition, progress) in self.partitions where progress.state.contains(userID: question.userID) {
            guard committed || !progress.state.hasChanges else { return .afterCommit }
            switch question.kind {
            case .badges:
                return .owned(.badges(progress.state.badges(userID: question.userID)))
            case .history(let query):
                var page = progress.state.history(userID: question.userID, query: query)
                for index in page.items.indices { page.items[index].source = self.source(page.items[index], partition) }
                return .owned(.history(page))
            case .notification(let id):
                var lookup = progress.state.historyItem(userID: question.userID, notificationID: id)
                if case .found(var item) = lookup {
                    item.source = self.source(item, partition)
                    lookup = .found(item)
                }
                return .owned(.notification(lookup))
            }
        }
        return .notOwned(held: Array(self.partitions.keys))
    }

    /// The `focusgate-source` of a remembered notification's input record.
    private func source(_ item: HistoryItem, _ partition: Int32) -> String? {
        item.sourceOffset.map { "\(self.configuration.topics.notifications)/\(partition)/\($0)" }
    }

    func checkFatal() throws(KafkaError) {
        if let failure = self.hookFailure {
            self.hookFailure = nil
            throw failure
        }
        if let fatal = self.outputs.producer.fatalError ?? self.consumer.fatalError {
            throw fatal
        }
    }

    /// Consumer lag per owned partition, and whether the cluster was seen up (readiness).
    fileprivate func recordStatistics(_ statistics: KafkaStatistics) {
        if statistics.hasBrokerUp == true && statistics.groupState == "up" {
            self.health.sawKafka()
        }
        self.recordLag(statistics)
    }

    private func recordLag(_ statistics: KafkaStatistics) {
        for partition in statistics.partitions where partition.topic == self.configuration.topics.notifications {
            guard self.partitions[partition.partition] != nil, let lag = partition.consumerLag else { continue }
            let gauge =
                self.lagGauges[partition.partition]
                ?? self.metrics.consumerLag(topic: partition.topic, partition: partition.partition)
            self.lagGauges[partition.partition] = gauge
            gauge.set(Double(lag))
        }
    }
}
