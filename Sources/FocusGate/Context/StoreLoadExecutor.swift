import Dispatch
import Foundation
import Synchronization

/// The threads that the context cache's store loads run on, as their tasks' executor preference
/// (SE-0417): a load never waits for a thread of Swift's cooperative pool, which blocking code
/// elsewhere in the process can occupy, so a worker's miss is answered from the store within
/// ``ContextCache/Configuration/loadTimeout`` whatever the pool is doing.
///
/// One thread per core serves the process, as the pool would: what a load does between its
/// awaits (decoding the contexts a query returned) runs here, for every worker's misses at once.
final class StoreLoadExecutor: TaskExecutor {
    /// The process's load threads, started on first use.
    static let shared = StoreLoadExecutor(
        threads: ProcessInfo.processInfo.activeProcessorCount, name: "focusgate-context-loads")

    /// Jobs not yet taken, from `head` on.
    private let queued = Mutex<(jobs: [UnownedJob], head: Int)>(([], 0))
    /// One signal per job queued.
    private let available = DispatchSemaphore(value: 0)

    private init(threads: Int, name: String) {
        for index in 0..<max(threads, 1) {
            let thread = Thread { [self] in self.run() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        self.queued.withLock { $0.jobs.append(job) }
        self.available.signal()
    }

    private func run() -> Never {
        while true {
            self.available.wait()
            let job = self.queued.withLock { queued in
                let job = queued.jobs[queued.head]
                queued.head += 1
                // Taken jobs go once they are half the array: amortised O(1), bounded by what waits.
                if queued.head == queued.jobs.count {
                    queued.jobs.removeAll(keepingCapacity: true)
                    queued.head = 0
                } else if queued.head >= 64 && 2 * queued.head >= queued.jobs.count {
                    queued.jobs.removeFirst(queued.head)
                    queued.head = 0
                }
                return job
            }
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
