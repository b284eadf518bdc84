import FocusGateHarness
import FocusGate
import FocusGateCore
import FocusGateKafka
import FocusGateStore
import Foundation
import Logging
import Prometheus

let testLogger: Logger = {
    var logger = Logger(label: "focusgate.tests") { StreamLogHandler.standardError(label: $0) }
    logger.logLevel =
        ProcessInfo.processInfo.environment["FOCUSGATE_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
    return logger
}()

/// A fresh SQLite store in a file of the test process's scratch directory (removed at exit).
func temporarySQLiteStore() async throws -> SQLiteContextStore {
    try await SQLiteContextStore.open(
        path: ScratchDirectory.process.file("store", extension: "sqlite"), logger: testLogger)
}

func workContext(_ userID: String, version: Int64, accepts criteria: String = "work", focus: String? = "Work")
    -> FocusContext
{
    FocusContext.fixture(userID, version: version, focus: focus, predicate: "SELF IN {'\(criteria)'}")
}

/// The value of one sample in the registry's Prometheus text (0 when absent).
func metric(_ registry: PrometheusCollectorRegistry, _ name: String, labels: String = "") -> Double {
    registry.samples[labels.isEmpty ? name : "\(name){\(labels)}"] ?? 0
}

extension ContextLookup {
    var version: Int64? {
        if case .available(let context) = self { return context?.version }
        return nil
    }

    var isUnavailable: Bool {
        if case .unavailable = self { return true }
        return false
    }

    var hasNoContext: Bool {
        if case .available(nil) = self { return true }
        return false
    }
}

extension ContextCache {
    /// `resolve` from a thread of its own, as workers call it (never from the cooperative pool).
    func resolveOffPool(_ userIDs: [String]) async throws -> [UserID: ContextLookup] {
        try await DedicatedThread.run(name: "test-worker") { self.resolve(userIDs) }
    }

    /// `apply` from a thread of its own, as the invalidation listener calls it.
    func applyOffPool(_ invalidation: ContextInvalidation) async throws -> (InvalidationOutcome, CompiledFocusContext?)
    {
        try await DedicatedThread.run(name: "test-listener") { self.apply(invalidation) }
    }
}

/// Occupies every thread of Swift's cooperative pool with blocking work, as blocking code elsewhere
/// in a process (or, in the test process, another test) can. Only for tests marked
/// `.blocksThePool` (FocusGateTestSupport).
enum PoolBlocker {
    /// The pool could not be shown fully blocked while `body` ran.
    struct NotSaturated: Error, CustomStringConvertible {
        /// Blockers running when `body` began (at most one per pool thread).
        let blockers: Int
        /// Seconds until the first blocker ran: the work queued on the pool before it went first.
        let firstAfter: Double?
        /// Whether the probe queued after the blockers ran before `body` returned.
        let probeRan: Bool

        var description: String {
            let first = self.firstAfter.map { String(format: "%.1f s", $0) } ?? "never"
            return
                "pool not shown blocked: \(self.blockers) blockers (first after \(first)), probe ran: \(self.probeRan)"
        }
    }

    /// Blockers started so far; each start is signalled.
    private final class Started: @unchecked Sendable {
        let condition = NSCondition()
        var count = 0  // guarded by `condition`

        func add() {
            self.condition.lock()
            self.count += 1
            self.condition.signal()
            self.condition.unlock()
        }
    }

    /// One blocker at a time in the test process: a second one's blockers would queue behind the
    /// first's and start only when its body ends.
    private static let exclusive = NSLock()

    /// Runs `body` on the calling thread (never a pool thread) while the pool is fully blocked:
    /// blockers are queued until no more start (the rest wait behind them), and a probe queued
    /// after them must not have run by the time `body` returns.
    ///
    /// The blockers start only after whatever other tests queued on the pool before them, which
    /// at the start of a run (every test starting at once, some blocking the pool in librdkafka)
    /// has taken over 10 s in CI: the first blocker is waited for up to two minutes.
    static func whileBlocked<Result>(_ body: () throws -> Result) throws -> Result {
        self.exclusive.lock()
        defer { self.exclusive.unlock() }
        let started = Started()
        let gate = DispatchSemaphore(value: 0)
        let limit = 256
        let queued = Date()
        for _ in 0..<limit {
            Task.detached {
                started.add()
                gate.wait()
            }
        }
        defer { for _ in 0..<limit { gate.signal() } }
        // Saturated once blockers run and no further one starts within 200 ms of the last.
        started.condition.lock()
        var firstAfter: Double?
        let deadline = Date(timeIntervalSinceNow: 120)
        while started.count == 0 && started.condition.wait(until: deadline) {}
        if started.count > 0 {
            firstAfter = Date().timeIntervalSince(queued)
            while started.condition.wait(until: Date(timeIntervalSinceNow: 0.2)) {}
        }
        let blockers = started.count
        started.condition.unlock()
        let probe = Started()
        Task.detached { probe.add() }
        let result = try body()
        probe.condition.lock()
        let probeRan = probe.count > 0
        probe.condition.unlock()
        guard blockers > 0 && blockers < limit && !probeRan else {
            throw NotSaturated(blockers: blockers, firstAfter: firstAfter, probeRan: probeRan)
        }
        return result
    }
}
