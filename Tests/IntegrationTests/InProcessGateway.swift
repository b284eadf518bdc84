import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateKafka
import FocusGateStore
import Foundation
import Logging
import Prometheus
import Synchronization

/// A FocusGate instance inside the test process: cache, invalidation listener and gateway, run
/// until ``stop()`` (a graceful shutdown).
final class InProcessGateway: Sendable {
    let registry = PrometheusCollectorRegistry()
    let gateway: Gateway
    let listener: InvalidationListener
    /// What this instance last logged at debug level and above (librdkafka's own lines
    /// included), for a failing wait to show (``diagnosis``).
    let recentLog: RecentLog
    private let task: Task<Void, any Error>
    /// How the run ended, once it has: `nil` while it runs.
    private let outcome = Locked<String?>(nil)

    init(
        _ bench: GatewayBench, configuration: GatewayConfiguration, store: (any ContextStore)? = nil,
        logger: Logger? = nil, recentLines: Int = 1000
    ) async throws {
        let recentLog = RecentLog(capacity: recentLines)
        self.recentLog = recentLog
        let logger = logger ?? recentLog.logger(alongside: KafkaTestSupport.logger)
        let cache = ContextCache(
            store: store ?? bench.store, metrics: ContextCacheMetrics(registry: self.registry), logger: logger)
        let gateway = Gateway(
            configuration: configuration, cache: cache, metrics: GatewayMetrics(registry: self.registry), logger: logger
        )
        var listenerConfiguration = KafkaConsumerConfiguration(
            bootstrapServers: bench.bootstrapServers, groupID: nil)
        listenerConfiguration.properties = bench.clientProperties
        let listener = InvalidationListener(
            configuration: listenerConfiguration, topic: bench.topics.invalidations, cache: cache, logger: logger
        ) {
            gateway.contextChanged(userID: $0, context: $1)
        }
        self.gateway = gateway
        self.listener = listener
        let outcome = self.outcome
        self.task = Task {
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await listener.run() }
                    group.addTask { try await gateway.run() }
                    try await group.next()
                    group.cancelAll()
                    try await group.waitForAll()
                }
                outcome.value = "stopped"
            } catch {
                outcome.value = "stopped by \(error)"
                throw error
            }
        }
        try await Wait.until("the gateway consuming and the invalidation listener positioned") {
            gateway.isConsuming && listener.isPositioned
        }
    }

    /// Waits until `condition` holds; throws ``WaitTimeout`` when it does not within `timeout`.
    func waitUntil(
        _ condition: @Sendable () -> Bool, timeout: Duration = .seconds(30), what: String = "the condition"
    ) async throws {
        try await Wait.until(what, timeout: timeout) { condition() }
    }

    /// Stops gracefully (finish the batch, commit, leave the group, flush) and rethrows a failure.
    func stop() async throws {
        self.task.cancel()
        try await self.task.value
    }

    /// The run's outcome without stopping it (for fatal errors).
    func finished() async -> (any Error)? {
        do {
            try await self.task.value
            return nil
        } catch {
            return error
        }
    }

    /// Whether the instance still runs, what it did, and what it logged last: for a test whose
    /// wait on it timed out.
    var diagnosis: String {
        let state = self.outcome.value ?? "running"
        let counters = [
            "focusgate_events_consumed_total", "focusgate_transactions_total{result=\"committed\"}",
            "focusgate_transactions_total{result=\"aborted\"}", "focusgate_replayed_records_total",
            "focusgate_reconsumed_records_total", "focusgate_offset_commits_deferred_total",
            "focusgate_producer_replacements_total",
        ].map { "\($0) \(Int(self.registry.samples[$0] ?? 0))" }
        return """
            the instance: \(state), \(self.gateway.assignedPartitions) partitions assigned; \(counters.joined(separator: ", "))
            its last log lines:
            \(self.recentLog.text)
            """
    }

    /// Invalidation messages the listener has handled, whatever they did.
    var invalidationsHandled: Double {
        self.registry.samples.filter { $0.key.hasPrefix("focusgate_invalidations_total{") }.values.reduce(0, +)
    }

    func metric(_ name: String, labels: String = "") -> Double {
        self.registry.samples[labels.isEmpty ? name : "\(name){\(labels)}"] ?? 0
    }

    /// The records this instance made the group consume a second time, and so the repeated
    /// outputs it may account for: those an abort replayed, and (at-least-once) those delivered
    /// past the group's offsets when their partition left it.
    var consumedAgain: Double {
        self.metric("focusgate_replayed_records_total") + self.metric("focusgate_reconsumed_records_total")
    }
}

/// A value that tasks share, behind a lock.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        self.mutex = Mutex(value)
    }

    var value: Value {
        get { self.mutex.withLock { $0 } }
        set { self.mutex.withLock { $0 = newValue } }
    }
}

/// The last lines a logger wrote, kept in a ring of `capacity` lines.
final class RecentLog: Sendable {
    let capacity: Int
    private let ring: Mutex<(lines: [String], next: Int)>

    init(capacity: Int) {
        self.capacity = capacity
        self.ring = Mutex(([], 0))
    }

    func append(_ line: String) {
        self.ring.withLock { ring in
            if ring.lines.count < self.capacity {
                ring.lines.append(line)
            } else {
                ring.lines[ring.next] = line
                ring.next = (ring.next + 1) % self.capacity
            }
        }
    }

    /// The lines kept, oldest first.
    var text: String {
        self.ring.withLock { ring in
            (ring.lines[ring.next...] + ring.lines[..<ring.next]).joined(separator: "\n")
        }
    }

    /// A logger that writes to `other` at its level and to this ring at debug level.
    func logger(alongside other: Logger) -> Logger {
        var ring = JSONLogHandler(label: other.label) { self.append($0) }
        ring.logLevel = .debug
        return Logger(label: other.label) { _ in MultiplexLogHandler([other.handler, ring]) }
    }
}

/// A wall clock the test moves by hand (``GatewayConfiguration/clock``).
final class ManualWallClock: WallClock {
    private let now: Atomic<Int64>

    init(startingAt start: Int64 = SystemWallClock().nowMilliseconds()) {
        self.now = Atomic(start)
    }

    func nowMilliseconds() -> Int64 { self.now.load(ordering: .relaxed) }

    func advance(by duration: Duration) {
        self.now.add(Int64(duration / .milliseconds(1)), ordering: .relaxed)
    }
}
