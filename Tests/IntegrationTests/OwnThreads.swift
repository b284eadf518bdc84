import Foundation
import Testing

/// Runs each test of a suite (and of the suites inside it) on threads of its own instead of
/// Swift's cooperative pool.
///
/// The tests that talk to the embedded broker call librdkafka, which blocks: creating a client,
/// a flush, a committed-offsets lookup, a consume with a timeout. On the cooperative pool (one
/// thread per core: two in CI) two such tests running side by side held both of its threads,
/// and every other test's timers and tasks waited behind them: a 200 ms store probe answered
/// after 11 s. Here a test's own work runs on ``TestThreads`` with a task executor preference,
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
        let threads = TestThreads(count: 4, name: "test")
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

/// A task executor of a few threads: jobs run in the order they come, on whichever thread is free.
final class TestThreads: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var stopping = false

    init(count: Int, name: String) {
        for index in 0..<count {
            let thread = Thread { [self] in self.work() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        self.condition.lock()
        let stopped = self.stopping
        if !stopped {
            self.jobs.append(job)
            self.condition.signal()
        }
        self.condition.unlock()
        // After the test: a job that still comes (none should) runs on a thread of its own.
        if stopped {
            let executor = self.asUnownedTaskExecutor()
            Thread { job.runSynchronously(on: executor) }.start()
        }
    }

    /// The threads finish the jobs queued, then end.
    func shutdown() {
        self.condition.lock()
        self.stopping = true
        self.condition.broadcast()
        self.condition.unlock()
    }

    /// Whether the caller runs on threads of a ``TestThreads``.
    static var isCurrent: Bool { Thread.current.threadDictionary[Self.marker] != nil }
    private static let marker = "focusgate.test-threads"

    private func work() {
        Thread.current.threadDictionary[Self.marker] = true
        let executor = self.asUnownedTaskExecutor()
        while true {
            self.condition.lock()
            while self.head == self.jobs.count && !self.stopping { self.condition.wait() }
            guard self.head < self.jobs.count else {
                self.condition.unlock()
                return
            }
            let job = self.jobs[self.head]
            self.head += 1
            if self.head == self.jobs.count {
                self.jobs.removeAll(keepingCapacity: true)
                self.head = 0
            }
            self.condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}

extension EmbeddedBrokerTests {
    @Suite("Broker tests on threads of their own")
    struct OwnThreadsTests {
        /// Whether the caller runs on a test's own threads (a synchronous call: async code cannot ask).
        static func onOwnThreads() -> Bool { TestThreads.isCurrent }

        @Test("a broker test and its child tasks run on its own threads, not on the cooperative pool")
        func ownThreads() async {
            await Task.yield()  // a suspension: the task resumes on its executor
            #expect(Self.onOwnThreads(), "after a suspension")
            async let child = Self.onOwnThreads()
            #expect(await child, "a child task")
        }
    }
}
