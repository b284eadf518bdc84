import FocusGateHarness
import FocusGate
import FocusGateCore
import FocusGateKafka
import FocusGateStore
import FocusGateThreads
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
