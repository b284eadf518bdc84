import FocusGateCore
public import Prometheus

/// The pipeline's metrics (names in docs/contract.md, Metrics), created once. Workers count a batch locally and add
/// the totals here once per batch, so the hot loop takes no metric locks.
public struct GatewayMetrics: Sendable {
    let consumed: Counter
    /// By ``Decision/Outcome`` then by index in ``Decision/Reason/all``.
    let decisions: [[Counter]]
    let duplicates: Counter
    let badgeUpdates: Counter
    let committed: Counter
    let aborted: Counter
    let replayed: Counter
    /// At-least-once: records delivered past the group's offsets when their partition left this
    /// worker; its next owner consumes them again.
    let reconsumed: Counter
    /// At-least-once commits whose offsets the group did not take; they go with the next commit.
    let offsetsDeferred: Counter
    /// Seconds workers paused before replaying, after aborts in a row (``ReplayBackoff``).
    let replayBackoff: Counter
    /// At-least-once producers given up for new ones after a fatal error (a record refused for good).
    let producerReplacements: Counter
    let rebalances: Counter
    let assignedPartitions: Gauge
    let stateRecords: Counter
    let stateBytes: Counter
    /// Heap allocations of the worker threads; only when the process runs with the benchmarks'
    /// allocation counter preloaded (``AllocationCounter``).
    let workerAllocations: Counter?
    let decisionLatency: DurationHistogram
    /// Input record timestamp to the commit that covers the record.
    let commitLatency: DurationHistogram
    /// How long a commit held its worker's loop (the records arriving meanwhile wait for it).
    let commitDuration: DurationHistogram
    /// Timers fired: Focus transitions (expiry, schedule boundaries) acted on.
    let timersFired: Counter
    /// How late a timer fired after its instant.
    let timerLateness: DurationHistogram
    /// Summaries of silenced notifications published.
    let summaries: Counter
    /// What the retention (`state.retentionMs`) forgot, counted at the commits that wrote it.
    let forgottenNotifications: Counter
    let forgottenUsers: Counter
    private let deadLetters: [EventDecodingError.Code: Counter]
    private let registry: PrometheusCollectorRegistry

    /// Decision-latency observations taken per batch (evenly spaced records), so that the
    /// histogram's lock is taken a bounded number of times per batch.
    static let latencySamplesPerBatch = 16
    /// At most this many of those observations are kept for ``commitLatency`` per commit.
    static let commitLatencySamplesPerCommit = 1024

    /// Registers the metrics in `registry`.
    public init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        self.consumed = registry.makeCounter(
            descriptor: .focusgate("events_consumed", unit: "total", "Records consumed from the notifications topic."))
        self.decisions = Decision.Outcome.allCases.map { outcome in
            Decision.Reason.all.map { reason in
                registry.makeCounter(
                    descriptor: .focusgate(
                        "decisions", unit: "total", "Notifications decided, by decision and reason."),
                    labels: [("decision", outcome.rawValue), ("reason", reason.rawValue)]
                )
            }
        }
        var deadLetters: [EventDecodingError.Code: Counter] = [:]
        for code in EventDecodingError.Code.all {
            deadLetters[code] = registry.makeCounter(
                descriptor: .focusgate("dlq", unit: "total", "Records sent to the dead-letter topic, by error code."),
                labels: [("error", code.rawValue)]
            )
        }
        self.deadLetters = deadLetters
        self.duplicates = registry.makeCounter(
            descriptor: .focusgate(
                "duplicates", unit: "total",
                "Duplicate notifications dropped (same user and id within the dedupe window)."))
        self.badgeUpdates = registry.makeCounter(
            descriptor: .focusgate("badge_updates", unit: "total", "Badge updates published."))
        let transactions = MetricNameDescriptor.focusgate(
            "transactions", unit: "total", "Commits of outputs, state and offsets, by result.")
        self.committed = registry.makeCounter(descriptor: transactions, labels: [("result", "committed")])
        self.aborted = registry.makeCounter(descriptor: transactions, labels: [("result", "aborted")])
        self.replayed = registry.makeCounter(
            descriptor: .focusgate(
                "replayed_records", unit: "total",
                "Records processed again because an abort rewound them to the last commit (exactly-once: their first outputs were aborted; at-least-once: they may be repeated)."
            ))
        self.reconsumed = registry.makeCounter(
            descriptor: .focusgate(
                "reconsumed_records", unit: "total",
                "At-least-once: records committed past the group's offsets (offset commits the group refused, or still waiting for their outputs' acknowledgements) when their partition left this worker; its next owner consumes them again and may repeat them."
            ))
        self.offsetsDeferred = registry.makeCounter(
            descriptor: .focusgate(
                "offset_commits_deferred", unit: "total",
                "At-least-once: commits whose outputs and state were delivered but whose input offsets the group did not take; the offsets go with the next commit (a partition that leaves first is consumed again from the group's offset: focusgate_reconsumed_records_total)."
            ))
        self.replayBackoff = registry.makeCounter(
            descriptor: .focusgate(
                "replay_backoff_seconds", unit: "total",
                "Seconds workers paused before replaying after the second and later aborts in a row (commit.replayBackoffMs); growing steadily: a cause that fails every commit."
            ))
        self.producerReplacements = registry.makeCounter(
            descriptor: .focusgate(
                "producer_replacements", unit: "total",
                "At-least-once: producers given up for new ones after a fatal error (the broker refused records for good; the records since the last commit were replayed)."
            ))
        self.stateRecords = registry.makeCounter(
            descriptor: .focusgate(
                "state_records", unit: "total",
                "Records written to the state changelog (one per key changed in a commit or, exactly-once, in a stage of it, and a commit marker per partition for each)."
            ))
        self.stateBytes = registry.makeCounter(
            descriptor: .focusgate(
                "state_bytes", unit: "total", "Key, value and header bytes written to the state changelog."))
        self.workerAllocations =
            AllocationCounter.isLoaded
            ? registry.makeCounter(
                descriptor: .focusgate(
                    "worker_allocations", unit: "total",
                    "Heap allocations made by worker threads (present only with the benchmarks' allocation counter preloaded)."
                )) : nil
        self.rebalances = registry.makeCounter(
            descriptor: .focusgate(
                "rebalances", unit: "total", "Partition assignments and revocations seen by the workers."))
        self.assignedPartitions = registry.makeGauge(
            descriptor: .focusgate(
                "assigned_partitions", unit: "",
                "Input partitions owned by this instance's workers, restored and in use."))
        self.decisionLatency = registry.makeDurationHistogram(
            descriptor: .focusgate(
                "decision_latency", unit: "seconds",
                "Input record timestamp to output produced; sampled, up to \(Self.latencySamplesPerBatch) records per batch."
            ),
            buckets: [
                .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(20),
                .milliseconds(50),
                .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5), .seconds(30),
            ]
        )
        self.commitLatency = registry.makeDurationHistogram(
            descriptor: .focusgate(
                "commit_latency", unit: "seconds",
                "Input record timestamp to the commit that covers it: exactly-once, its outputs become readable to read_committed consumers then; at-least-once, its offset is committed. Sampled like decision latency, up to \(Self.commitLatencySamplesPerCommit) records per commit."
            ),
            buckets: [
                .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
                .milliseconds(150), .milliseconds(200), .milliseconds(250), .milliseconds(275), .milliseconds(300),
                .milliseconds(350), .milliseconds(400), .milliseconds(500), .milliseconds(750), .seconds(1),
                .milliseconds(2500), .seconds(5), .seconds(30),
            ]
        )
        self.commitDuration = registry.makeDurationHistogram(
            descriptor: .focusgate(
                "commit_duration", unit: "seconds",
                "How long a worker's loop spent in one commit, while its records waited: exactly-once, producing the interval's badge updates, status, summaries and the state changes since its last stage (those before are written into the transaction a quarter interval apart) with their markers, and ending the transaction; at-least-once, taking those records (produced a slice per loop turn over the next quarter interval) and producing what was left of the last commit's."
            ),
            buckets: [
                .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(20),
                .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
                .seconds(5), .seconds(30),
            ]
        )
        self.timersFired = registry.makeCounter(
            descriptor: .focusgate(
                "timers_fired", unit: "total",
                "Timers fired: users whose Focus in force changed with no message (expiry, schedule boundary), or whose summary time came."
            ))
        self.forgottenNotifications = registry.makeCounter(
            descriptor: .focusgate(
                "state_notifications_forgotten", unit: "total",
                "Remembered or unread notifications the retention forgot (decided longer ago than state.retentionMs)."))
        self.forgottenUsers = registry.makeCounter(
            descriptor: .focusgate(
                "state_users_forgotten", unit: "total",
                "Users the retention forgot: left with nothing, their state keys written as tombstones."))
        self.summaries = registry.makeCounter(
            descriptor: .focusgate(
                "summaries", unit: "total",
                "Summaries of silenced, unread notifications published (a Focus period ended, or a summary time)."))
        self.timerLateness = registry.makeDurationHistogram(
            descriptor: .focusgate(
                "timer_lateness", unit: "seconds", "How long after its instant a timer fired (goal: under 1 s)."),
            buckets: [
                .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
                .seconds(1), .seconds(2), .seconds(5), .seconds(30),
            ]
        )
    }

    /// The gauge of one worker's pending timers (users whose next Focus transition it watches).
    func timersPending(worker: Int) -> Gauge {
        self.registry.makeGauge(
            descriptor: .focusgate(
                "timers_pending", unit: "",
                "Users whose next Focus transition (expiry, schedule boundary) a worker's partitions watch."),
            labels: [("worker", String(worker))])
    }

    func abortsInARow(worker: Int) -> Gauge {
        self.registry.makeGauge(
            descriptor: .focusgate(
                "worker_aborts_in_a_row", unit: "",
                "Aborts since a worker's last commit; at commit.maxAttemptsPerInput and above the worker makes no progress and readiness fails (progress)."
            ),
            labels: [("worker", String(worker))])
    }

    func deadLetter(_ code: EventDecodingError.Code) -> Counter {
        self.deadLetters[code] ?? self.deadLetters[.invalidValue]!
    }

    /// The gauge of one input partition's consumer lag.
    func consumerLag(topic: String, partition: Int32) -> Gauge {
        self.registry.makeGauge(
            descriptor: .focusgate(
                "consumer_lag", unit: "", "Records behind the partition's high watermark, from librdkafka's statistics."
            ),
            labels: [("topic", topic), ("partition", String(partition))]
        )
    }

    /// Stops exposing a partition's lag once it left this instance: its new owner reports it, and
    /// a frozen last value would be counted twice.
    func removeConsumerLag(_ gauge: Gauge) {
        self.registry.unregisterGauge(gauge)
    }
}

/// What one batch counted, added to ``GatewayMetrics`` once.
struct BatchCounts {
    var consumed = 0
    var decisions = [[Int]](
        repeating: [Int](repeating: 0, count: Decision.Reason.all.count), count: Decision.Outcome.allCases.count)
    var deadLetters: [EventDecodingError.Code: Int] = [:]
    var duplicates = 0

    /// Counts a decision given as indexes into ``Decision/Outcome/allCases`` and ``Decision/Reason/all``.
    mutating func count(outcome: Int, reason: Int) {
        self.decisions[outcome][reason] += 1
    }

    func add(to metrics: GatewayMetrics) {
        if self.consumed > 0 { metrics.consumed.increment(by: Int64(self.consumed)) }
        for (outcome, reasons) in self.decisions.enumerated() {
            for (reason, count) in reasons.enumerated() where count > 0 {
                metrics.decisions[outcome][reason].increment(by: Int64(count))
            }
        }
        for (code, count) in self.deadLetters {
            metrics.deadLetter(code).increment(by: Int64(count))
        }
        if self.duplicates > 0 { metrics.duplicates.increment(by: Int64(self.duplicates)) }
    }
}
