import Dispatch
import Foundation
import Synchronization

/// The thread that the context cache's store loads run on, as their tasks' executor preference
/// (SE-0417): a load never waits for a thread of Swift's cooperative pool, which blocking code
/// elsewhere in the process can occupy, so a worker's miss is answered from the store within
/// ``ContextCache/Configuration/loadTimeout`` whatever the pool is doing.
///
/// One thread serves the process: a load's own work between its awaits is small (the store's
/// drivers do their I/O on their event loops), and loads of different workers interleave.
final class StoreLoadExecutor: TaskExecutor {
    /// The process's one load thread, started on first use.
    static let shared = StoreLoadExecutor(name: "focusgate-context-loads")

    private let queued = Mutex<[UnownedJob]>([])
    private let wakeup = DispatchSemaphore(value: 0)

    private init(name: String) {
        let thread = Thread { [self] in self.run() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        self.queued.withLock { $0.append(job) }
        self.wakeup.signal()
    }

    private func run() -> Never {
        var running: [UnownedJob] = []
        while true {
            self.wakeup.wait()
            self.queued.withLock { swap(&$0, &running) }
            for job in running {
                job.runSynchronously(on: self.asUnownedTaskExecutor())
            }
            running.removeAll(keepingCapacity: true)
        }
    }
}
