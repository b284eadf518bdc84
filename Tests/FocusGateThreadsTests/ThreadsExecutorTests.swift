import FocusGateThreads
import Foundation
import FocusGateTestSupport
import Testing

@Suite("A task executor of threads of its own")
struct ThreadsExecutorTests {
    @Test(
        "every task that prefers it runs to its end, many at once and suspending midway, while every pool thread is blocked",
        .blocksThePool
    )
    func runsEveryTaskWhilePoolBlocked() async throws {
        let total = 5_000
        let executor = ThreadsExecutor(threads: 2, name: "test-executor")
        defer { executor.shutdown() }
        let finished = DispatchGroup()
        let all = try await DedicatedThread.run(name: "test-loads") {
            try PoolBlocker.whileBlocked { () -> Bool in
                for index in 0..<total {
                    finished.enter()
                    Task(executorPreference: executor) {
                        // Half suspend in the middle and come back through the queue.
                        if index % 2 == 0 { await Task.yield() }
                        finished.leave()
                    }
                }
                return finished.wait(timeout: .now() + 60) == .success
            }
        }
        #expect(all, "every task finished within 60 s")
    }
}
