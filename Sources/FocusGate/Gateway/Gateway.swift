public import FocusGateCore
import FocusGateKafka
import FocusGateThreads
import Foundation
public import Logging
public import ServiceLifecycle
import Synchronization

/// The notification pipeline (docs/contract.md: Topics, Outputs, Badges, Guarantees): `workers` threads, each a consumer-group member
/// running consume-batch → decide → produce, committing outputs, state and offsets together.
///
/// On graceful shutdown each worker finishes its batch, commits, leaves the group and flushes. A
/// fatal Kafka error (e.g. a fenced producer) stops every worker and is rethrown, so the instance
/// exits with a clear log line and a non-zero status.
public final class Gateway: Service, Sendable {
    /// What the worker threads' names start with (`fg-worker-0`, …), as `top -H`, `perf` and
    /// `/proc/<pid>/task/*/comm` show them.
    public static let workerThreadPrefix = "fg-worker-"

    private let configuration: GatewayConfiguration
    private let cache: ContextCache
    private let metrics: GatewayMetrics
    private let logger: Logger
    private let inboxes: [ContextChangeInbox]
    private let stopRequested = Atomic(false)
    private let readyWorkers = Atomic(0)
    let progress: GatewayProgress
    private let instanceTag: String
    private let startsAfter: (@Sendable () async throws -> Void)?

    /// What this instance holds of its users (badges, recent decisions), and which partitions it holds.
    public let directory: StateDirectory

    /// Creates the pipeline.
    ///
    /// - Parameters:
    ///   - configuration: Kafka, topics, delivery mode, workers and limits.
    ///   - cache: The context cache shared by the workers and the invalidation listener.
    ///   - metrics: Where the pipeline counts.
    ///   - startsAfter: Awaited before the workers claim their transactional ids and join the
    ///     group: `serve` passes "the admin API is listening", so that a second instance started
    ///     by mistake with the same name and port fails at its bind before it could fence the
    ///     running one.
    public init(
        configuration: GatewayConfiguration, cache: ContextCache, metrics: GatewayMetrics, logger: Logger,
        startsAfter: (@Sendable () async throws -> Void)? = nil
    ) {
        precondition(configuration.workers > 0, "workers must be positive")
        self.configuration = configuration
        self.cache = cache
        self.metrics = metrics
        self.instanceTag = String(UUID().uuidString.prefix(8)).lowercased()
        var logger = logger
        // Also in the workers' transactional ids: tells instances apart in logs collected together.
        logger[metadataKey: "focusgate.instance"] = "\(self.instanceTag)"
        self.logger = logger
        self.inboxes = (0..<configuration.workers).map { _ in ContextChangeInbox() }
        let progress = GatewayProgress(workers: configuration.workers)
        self.progress = progress
        self.startsAfter = startsAfter
        self.directory = StateDirectory(workers: configuration.workers) {
            progress.inputPartitions.load(ordering: .relaxed)
        }
    }

    /// The pipeline's readiness checks (docs/contract.md, Admin API): `pipeline`, every worker
    /// a member of the group; `kafka`, every worker's consumer saw a broker of the cluster and
    /// its group coordinator up within ``GatewayConfiguration/readinessKafkaTimeout``; `loop`,
    /// every worker's loop turned within ``GatewayConfiguration/readinessLoopTimeout``;
    /// `restore`, no worker restoring partitions' state; `progress`, no worker that has aborted
    /// ``GatewayConfiguration/maxAttemptsPerInput`` times in a row without a commit.
    public var readinessChecks: [String: Bool] {
        let now = ContinuousClock.now
        let workers = self.progress.workers
        return [
            "pipeline": self.isConsuming,
            "kafka": workers.allSatisfy { $0.sinceKafka(at: now) <= self.configuration.readinessKafkaTimeout },
            "loop": workers.allSatisfy { $0.sinceTurn(at: now) <= self.configuration.readinessLoopTimeout },
            "restore": !workers.contains { $0.isRestoring },
            "progress": workers.allSatisfy { $0.abortsInARow < self.configuration.maxAttemptsPerInput },
        ]
    }

    /// Whether every worker has joined the group (part of readiness).
    public var isConsuming: Bool {
        self.readyWorkers.load(ordering: .relaxed) == self.configuration.workers
            && !self.stopRequested.load(ordering: .relaxed)
    }

    /// Records consumed by all workers since start (added once per batch).
    public var consumedRecords: Int { self.progress.consumed.load(ordering: .relaxed) }

    /// Input partitions currently owned by the workers.
    public var assignedPartitions: Int { self.progress.assigned.load(ordering: .relaxed) }

    /// Hands a changed context to every worker; the one owning the user recomputes their badges
    /// on its own thread. Called by the invalidation listener.
    public func contextChanged(userID: String, context: CompiledFocusContext?) {
        for inbox in self.inboxes {
            inbox.post(userID: userID, context: context)
        }
    }

    /// Runs the workers until graceful shutdown, cancellation or a fatal error.
    public func run() async throws {
        try await withTaskCancellationOrGracefulShutdownHandler {
            let configuration = try await self.resolvedConfiguration()
            try await self.startsAfter?()
            guard !self.stopRequested.load(ordering: .relaxed) else { return }
            try await self.checkTopics(configuration)
            guard !self.stopRequested.load(ordering: .relaxed) else { return }
            var metadata: Logger.Metadata = [
                "focusgate.workers": "\(configuration.workers)",
                "focusgate.delivery": "\(configuration.deliveryMode)",
                "kafka.group": "\(configuration.groupID)",
            ]
            if configuration.deliveryMode == .exactlyOnce {
                metadata["kafka.transactionalIds"] = .array(
                    (0..<configuration.workers).map {
                        .string(configuration.transactionalID(worker: $0, instanceTag: self.instanceTag))
                    })
            }
            self.logger.info("gateway starting", metadata: metadata)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<configuration.workers {
                    group.addTask {
                        try await DedicatedThread.run(name: "\(Self.workerThreadPrefix)\(index)") {
                            try self.runWorker(index, configuration: configuration)
                        }
                    }
                }
                try await group.waitForAll()
            }
        } onCancelOrGracefulShutdown: {
            self.stopRequested.store(true, ordering: .relaxed)
        }
    }

    /// The settings to run with: ``GatewayConfiguration/embeddedBrokerSettings`` applied when
    /// the cluster's id says it is the embedded broker. Asks for up to 10 s, a second at a time,
    /// so that a shutdown meanwhile is not held up; a cluster that does not answer counts as a
    /// real one.
    private func resolvedConfiguration() async throws -> GatewayConfiguration {
        var configuration = self.configuration
        guard let embeddedSettings = configuration.embeddedBrokerSettings else { return configuration }
        configuration.embeddedBrokerSettings = nil
        var probeConfiguration = KafkaProducerConfiguration(bootstrapServers: configuration.bootstrapServers)
        probeConfiguration.properties = configuration.kafkaProperties
        let probe = probeConfiguration
        let logger = self.logger
        let clusterID = try await DedicatedThread.run(name: "fg-cluster-id") { () throws -> String? in
            let producer = try KafkaProducer(configuration: probe, logger: logger, onDeliveryReport: { _ in })
            for _ in 0..<10 where !self.stopRequested.load(ordering: .relaxed) {
                if let id = producer.clusterID(timeout: .seconds(1)) { return id }
            }
            return nil
        }
        guard let clusterID else {
            self.logger.notice("the cluster did not say its id within 10 s: taken for a real cluster")
            return configuration
        }
        let embedded = GatewayConfiguration.isEmbeddedBroker(clusterID: clusterID)
        if embedded { embeddedSettings(&configuration) }
        self.logger.info(
            embedded
                ? "the cluster is an embedded broker (focusgate broker): running with its group settings"
                : "cluster identified",
            metadata: ["kafka.clusterId": "\(clusterID)"])
        return configuration
    }

    /// The contract's topics, checked before any worker starts (``TopicCheck``): asks up to 10
    /// times, a second each, so that a shutdown meanwhile is not held up.
    private func checkTopics(_ configuration: GatewayConfiguration) async throws {
        let logger = self.logger
        try await DedicatedThread.run(name: "fg-topic-check") {
            try TopicCheck.verify(
                configuration.topics, bootstrapServers: configuration.bootstrapServers,
                properties: configuration.kafkaProperties,
                largestRecord: Int(configuration.kafkaProperties["message.max.bytes"] ?? "") ?? 1_000_000,
                attempts: 10, timeout: .seconds(1),
                shouldStop: { self.stopRequested.load(ordering: .relaxed) }, logger: logger)
        }
    }

    private func runWorker(_ index: Int, configuration: GatewayConfiguration) throws {
        do {
            let worker = try GatewayWorker(
                index: index, configuration: configuration, instanceTag: self.instanceTag, cache: self.cache,
                inbox: self.inboxes[index], desk: self.directory.desks[index], metrics: self.metrics,
                progress: self.progress, logger: self.logger,
                shouldStop: { self.stopRequested.load(ordering: .relaxed) },
                onReady: { self.readyWorkers.add(1, ordering: .relaxed) }
            )
            try worker.run()
        } catch {
            self.stopRequested.store(true, ordering: .relaxed)
            self.logger.critical(
                "worker stopped by a fatal Kafka error; shutting down",
                metadata: ["kafka.error": "\(error)", "focusgate.worker": "\(index)"])
            throw error
        }
    }
}

/// Counts the workers publish for whoever watches the instance (benchmarks, tests, readiness).
final class GatewayProgress: Sendable {
    let consumed = Atomic(0)
    let assigned = Atomic(0)
    /// The input topic's partition count as the last rebalance's metadata said (`0`: not yet known).
    let inputPartitions = Atomic(0)
    /// What readiness reads of each worker.
    let workers: [WorkerHealth]

    init(workers: Int) {
        let origin = ContinuousClock.now
        self.workers = (0..<workers).map { _ in WorkerHealth(origin: origin) }
    }
}

/// What readiness reads of one worker, written by its thread: when its loop last turned, when
/// its consumer last saw the cluster (a broker and the group coordinator up), whether a restore
/// runs. Both instants start at the instance's start.
final class WorkerHealth: Sendable {
    private let origin: ContinuousClock.Instant
    /// Nanoseconds since ``origin``.
    private let lastTurn = Atomic<Int64>(0)
    private let lastSawKafka = Atomic<Int64>(0)
    private let restoring = Atomic(false)
    private let aborts = Atomic(0)

    init(origin: ContinuousClock.Instant) {
        self.origin = origin
    }

    private func nanoseconds(at instant: ContinuousClock.Instant) -> Int64 {
        let (seconds, attoseconds) = (instant - self.origin).components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The loop began a turn.
    func turned() {
        self.lastTurn.store(self.nanoseconds(at: .now), ordering: .relaxed)
    }

    /// The consumer's statistics showed a broker of the cluster and the group coordinator up.
    func sawKafka() {
        self.lastSawKafka.store(self.nanoseconds(at: .now), ordering: .relaxed)
    }

    func restoreStarted() { self.restoring.store(true, ordering: .relaxed) }
    func restoreEnded() { self.restoring.store(false, ordering: .relaxed) }

    var isRestoring: Bool { self.restoring.load(ordering: .relaxed) }

    /// The worker aborted `count` times in a row (0: a commit took effect).
    ///
    /// - Returns: Whether the count changed.
    func noteAborts(_ count: Int) -> Bool {
        self.aborts.exchange(count, ordering: .relaxed) != count
    }

    /// Aborts since the worker's last commit.
    var abortsInARow: Int { self.aborts.load(ordering: .relaxed) }

    /// How long ago the loop last turned.
    func sinceTurn(at instant: ContinuousClock.Instant) -> Duration {
        .nanoseconds(self.nanoseconds(at: instant) - self.lastTurn.load(ordering: .relaxed))
    }

    /// How long ago the consumer last saw the cluster up.
    func sinceKafka(at instant: ContinuousClock.Instant) -> Duration {
        .nanoseconds(self.nanoseconds(at: instant) - self.lastSawKafka.load(ordering: .relaxed))
    }
}
