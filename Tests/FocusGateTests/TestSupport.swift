import FocusGateHarness
import FocusGate
import FocusGateCore
import FocusGateKafka
import FocusGateStore
import Foundation
import Logging
import Prometheus
import Synchronization

let testLogger: Logger = {
    var logger = Logger(label: "focusgate.tests") { StreamLogHandler.standardError(label: $0) }
    logger.logLevel =
        ProcessInfo.processInfo.environment["FOCUSGATE_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
    return logger
}()

/// A fresh SQLite store in a temporary file.
func temporarySQLiteStore() async throws -> SQLiteContextStore {
    try await SQLiteContextStore.open(
        path: NSTemporaryDirectory() + "focusgate-\(UUID().uuidString).sqlite", logger: testLogger)
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
    func resolveOffPool(_ userIDs: [String]) async throws -> [String: ContextLookup] {
        try await DedicatedThread.run(name: "test-worker") { self.resolve(userIDs) }
    }

    /// `apply` from a thread of its own, as the invalidation listener calls it.
    func applyOffPool(_ invalidation: ContextInvalidation) async throws -> (InvalidationOutcome, CompiledFocusContext?)
    {
        try await DedicatedThread.run(name: "test-listener") { self.apply(invalidation) }
    }
}

/// Occupies every thread of Swift's cooperative pool with blocking work, as blocking code elsewhere
/// in a process (or, in the test process, another test) can.
enum PoolBlocker {
    struct NotSaturated: Error {}

    private final class Flags: Sendable {
        let started = Atomic(0)
        let released = Atomic(false)
    }

    /// Runs `body` on the calling thread (never a pool thread) while the pool is fully blocked.
    static func whileBlocked<Result>(_ body: () throws -> Result) throws -> Result {
        let flags = Flags()
        let limit = 256
        for _ in 0..<limit {
            Task.detached {
                flags.started.add(1, ordering: .relaxed)
                while !flags.released.load(ordering: .relaxed) { usleep(5_000) }
            }
        }
        defer { flags.released.store(true, ordering: .relaxed) }
        // Saturated: some blockers started and no more start, the rest queued behind them.
        var seen = 0
        var stableSince = ContinuousClock.now
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let now = flags.started.load(ordering: .relaxed)
            if now != seen {
                seen = now
                stableSince = ContinuousClock.now
            } else if seen > 0 && ContinuousClock.now - stableSince > .milliseconds(200) {
                break
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        guard seen > 0 && seen < limit else { throw NotSaturated() }
        return try body()
    }
}
