import Foundation

/// A task executor of threads of its own (SE-0417 executor preference): the tasks that prefer
/// it, and their child tasks, run here in the order they come, on whichever thread is free,
/// never waiting for Swift's cooperative pool, which blocking code elsewhere in the process can
/// hold.
public final class ThreadsExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    /// Guarded by `condition`: the jobs not yet taken are `jobs[head...]`.
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var stopping = false
    private let marker: String

    /// Starts `threads` threads (at least one) named `name-0`, `name-1`…
    public init(threads: Int, name: String) {
        self.marker = Self.marker(name)
        for index in 0..<max(threads, 1) {
            let thread = Thread { [self] in self.work() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        self.condition.lock()
        let stopped = self.stopping
        if !stopped {
            self.jobs.append(job)
            self.condition.signal()
        }
        self.condition.unlock()
        // After the shutdown: a job that still comes runs on a thread of its own.
        if stopped {
            let executor = self.asUnownedTaskExecutor()
            Thread { job.runSynchronously(on: executor) }.start()
        }
    }

    /// The threads finish the jobs queued, then end.
    public func shutdown() {
        self.condition.lock()
        self.stopping = true
        self.condition.broadcast()
        self.condition.unlock()
    }

    /// Whether the caller runs on a thread of an executor made with `name` (a synchronous call:
    /// async code cannot ask which thread it is on).
    public static func isCurrent(name: String) -> Bool {
        Thread.current.threadDictionary[Self.marker(name)] != nil
    }

    private static func marker(_ name: String) -> String { "focusgate.threads-executor.\(name)" }

    private func work() {
        Thread.current.threadDictionary[self.marker] = true
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
            // Taken jobs go once they are half the array: amortised O(1), bounded by what waits.
            if self.head == self.jobs.count {
                self.jobs.removeAll(keepingCapacity: true)
                self.head = 0
            } else if self.head >= 64 && 2 * self.head >= self.jobs.count {
                self.jobs.removeFirst(self.head)
                self.head = 0
            }
            self.condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
