import FocusGateThreads
import Foundation
public import Testing

/// Runs each test of a suite (and of the suites inside it) on threads of its own instead of
/// Swift's cooperative pool.
///
/// The tests that talk to the embedded broker call librdkafka, which blocks: creating a client,
/// a flush, a committed-offsets lookup, a consume with a timeout. On the cooperative pool (one
/// thread per core: two in CI) two such tests running side by side held both of its threads,
/// and every other test's timers and tasks waited behind them: a 200 ms store probe answered
/// after 11 s. Here a test's own work runs on a ``ThreadsExecutor`` with a task executor preference,
/// which its child tasks inherit; unstructured tasks and what the code under test starts itself
/// still use the pool, as in production.
public struct OwnThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    /// Where the test cases run.
    enum Threads {
        /// Four threads made for each test case.
        case own
        /// The one thread the process's compute-bound tests share.
        case compute
    }

    let threads: Threads

    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // Each test case runs in a scope of its own; a suite needs none.
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        switch self.threads {
        case .own:
            let threads = ThreadsExecutor(threads: 4, name: "test")
            defer { threads.shutdown() }
            try await withTaskExecutorPreference(threads) { try await function() }
        case .compute:
            try await withTaskExecutorPreference(Self.computeThread) { try await function() }
        }
    }

    /// The one thread of the test process's compute-bound tests.
    static let computeThread = ThreadsExecutor(threads: 1, name: "test-compute")

    /// Whether the caller runs on the compute-bound tests' thread.
    public static var onComputeThread: Bool { ThreadsExecutor.isCurrent(name: "test-compute") }
}

extension Trait where Self == OwnThreadsTrait {
    /// Each test case on threads of its own (``OwnThreadsTrait``).
    public static var ownThreads: Self { OwnThreadsTrait(threads: .own) }

    /// Each test case on the one thread that the process's compute-bound tests share, one case at
    /// a time: long runs of synchronous work (model tests checking invariants after every step)
    /// that on the cooperative pool held both of its threads for the first 20 s of a run, while
    /// every other test's `await` waited behind them.
    public static var computeThread: Self { OwnThreadsTrait(threads: .compute) }
}

extension Trait where Self == ConditionTrait {
    /// A test that blocks every thread of Swift's cooperative pool: it runs only in a test
    /// process of its own (`scripts/test.sh` runs the tests named `…WhilePoolBlocked` again with
    /// `FOCUSGATE_TEST_POOL_BLOCKING=1`), never beside the other tests, whose every `await` it
    /// would hold up for as long as it blocks (36 s once, at the start of a run on 2 cores, which
    /// failed a 30 s wait of another test).
    public static var blocksThePool: Self {
        .enabled(
            if: ProcessInfo.processInfo.environment["FOCUSGATE_TEST_POOL_BLOCKING"] == "1",
            "blocks the whole cooperative pool: scripts/test.sh runs it in a process of its own")
    }
}
