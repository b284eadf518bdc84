import FocusGateKafka
import Foundation
import Testing

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
struct OwnThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // Each test case runs in a scope of its own; a suite needs none.
        testCase == nil ? nil : self
    }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let threads = ThreadsExecutor(threads: 4, name: "test")
        defer { threads.shutdown() }
        try await withTaskExecutorPreference(threads) {
            try await function()
        }
    }
}

extension Trait where Self == OwnThreadsTrait {
    /// Each test on threads of its own (``OwnThreadsTrait``).
    static var ownThreads: Self { OwnThreadsTrait() }
}

extension EmbeddedBrokerTests {
    @Suite("Broker tests on threads of their own")
    struct OwnThreadsTests {
        /// Whether the caller runs on a test's own threads (a synchronous call: async code cannot ask).
        static func onOwnThreads() -> Bool { ThreadsExecutor.isCurrent(name: "test") }

        @Test("a broker test and its child tasks run on its own threads, not on the cooperative pool")
        func ownThreads() async {
            await Task.yield()  // a suspension: the task resumes on its executor
            #expect(Self.onOwnThreads(), "after a suspension")
            async let child = Self.onOwnThreads()
            #expect(await child, "a child task")
        }
    }
}
