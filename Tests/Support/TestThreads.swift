import FocusGateKafka
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
    /// Where the test cases run: threads made for each case, or the one thread the process's
    /// compute-bound tests share.
    let executor: @Sendable () -> (executor: ThreadsExecutor, shared: Bool)

    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // Each test case runs in a scope of its own; a suite needs none.
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let (threads, shared) = self.executor()
        defer { if !shared { threads.shutdown() } }
        try await withTaskExecutorPreference(threads) {
            try await function()
        }
    }

    /// The one thread of the test process's compute-bound tests.
    static let computeThread = ThreadsExecutor(threads: 1, name: "test-compute")

    /// Whether the caller runs on the compute-bound tests' thread.
    public static var onComputeThread: Bool { ThreadsExecutor.isCurrent(name: "test-compute") }
}

extension Trait where Self == OwnThreadsTrait {
    /// Each test case on threads of its own (``OwnThreadsTrait``).
    public static var ownThreads: Self {
        OwnThreadsTrait { (ThreadsExecutor(threads: 4, name: "test"), false) }
    }

    /// Each test case on the one thread that the process's compute-bound tests share, one case at
    /// a time: long runs of synchronous work (model tests checking invariants after every step)
    /// that on the cooperative pool held both of its threads for the first 20 s of a run, while
    /// every other test's `await` waited behind them.
    public static var computeThread: Self {
        OwnThreadsTrait { (OwnThreadsTrait.computeThread, true) }
    }
}
