import Foundation

/// Occupies every thread of Swift's cooperative pool with blocking work, as blocking code elsewhere
/// in a process (or, in the test process, another test) can. Only for tests marked
/// `.blocksThePool`.
public enum PoolBlocker {
    /// The pool could not be shown fully blocked while `body` ran.
    public struct NotSaturated: Error, CustomStringConvertible {
        /// Blockers running when `body` began (at most one per pool thread).
        public let blockers: Int
        /// Seconds until the first blocker ran: the work queued on the pool before it went first.
        public let firstAfter: Double?
        /// Whether the probe queued after the blockers ran before `body` returned.
        public let probeRan: Bool

        public var description: String {
            let first = self.firstAfter.map { String(format: "%.1f s", $0) } ?? "never"
            return
                "pool not shown blocked: \(self.blockers) blockers (first after \(first)), probe ran: \(self.probeRan)"
        }
    }

    /// Blockers started so far; each start is signalled.
    private final class Started: @unchecked Sendable {
        let condition = NSCondition()
        var count = 0  // guarded by `condition`

        func add() {
            self.condition.lock()
            self.count += 1
            self.condition.signal()
            self.condition.unlock()
        }
    }

    /// One blocker at a time in the test process: a second one's blockers would queue behind the
    /// first's and start only when its body ends.
    private static let exclusive = NSLock()

    /// Runs `body` on the calling thread (never a pool thread) while the pool is fully blocked:
    /// blockers are queued until no more start (the rest wait behind them), and a probe queued
    /// after them must not have run by the time `body` returns.
    ///
    /// The blockers start only after whatever other tests queued on the pool before them, which
    /// at the start of a run (every test starting at once, some blocking the pool in librdkafka)
    /// has taken over 10 s in CI: the first blocker is waited for up to two minutes.
    public static func whileBlocked<Result>(_ body: () throws -> Result) throws -> Result {
        self.exclusive.lock()
        defer { self.exclusive.unlock() }
        let started = Started()
        let gate = DispatchSemaphore(value: 0)
        let limit = 256
        let queued = Date()
        for _ in 0..<limit {
            Task.detached {
                started.add()
                gate.wait()
            }
        }
        defer { for _ in 0..<limit { gate.signal() } }
        // Saturated once blockers run and no further one starts within 200 ms of the last.
        started.condition.lock()
        var firstAfter: Double?
        let deadline = Date(timeIntervalSinceNow: 120)
        while started.count == 0 && started.condition.wait(until: deadline) {}
        if started.count > 0 {
            firstAfter = Date().timeIntervalSince(queued)
            while started.condition.wait(until: Date(timeIntervalSinceNow: 0.2)) {}
        }
        let blockers = started.count
        started.condition.unlock()
        let probe = Started()
        Task.detached { probe.add() }
        let result = try body()
        probe.condition.lock()
        let probeRan = probe.count > 0
        probe.condition.unlock()
        guard blockers > 0 && blockers < limit && !probeRan else {
            throw NotSaturated(blockers: blockers, firstAfter: firstAfter, probeRan: probeRan)
        }
        return result
    }
}
