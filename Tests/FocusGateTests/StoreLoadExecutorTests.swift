@testable import FocusGate
import FocusGateKafka
import Foundation
import Synchronization
import Testing

@Suite("The context loads' executor")
struct StoreLoadExecutorTests {
    private final class Finished: Sendable {
        let count = Atomic(0)
    }

    @Test(
        "every task that prefers it runs to its end, many at once and suspending midway, while every pool thread is blocked"
    )
    func runsEveryTask() async throws {
        let total = 5_000
        let finished = Finished()
        let all = try await DedicatedThread.run(name: "test-loads") {
            try PoolBlocker.whileBlocked { () -> Bool in
                for index in 0..<total {
                    Task(executorPreference: StoreLoadExecutor.shared) {
                        // Half suspend in the middle and come back through the queue.
                        if index % 2 == 0 { await Task.yield() }
                        finished.count.add(1, ordering: .relaxed)
                    }
                }
                let deadline = ContinuousClock.now + .seconds(10)
                while finished.count.load(ordering: .relaxed) < total && ContinuousClock.now < deadline {
                    Thread.sleep(forTimeInterval: 0.005)
                }
                return finished.count.load(ordering: .relaxed) == total
            }
        }
        #expect(all, "\(finished.count.load(ordering: .relaxed)) of \(total) finished")
    }
}
