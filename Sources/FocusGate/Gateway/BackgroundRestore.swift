import FocusGateCore
import FocusGateKafka
import Foundation
import Synchronization

/// Restores arriving partitions' state on a thread of its own, one partition at a time, while
/// the worker's loop goes on serving the partitions it holds (docs/state.md, "Restore").
///
/// The worker hands a partition over (``start(_:)``) with the consumer holding it back from
/// fetching; the restored state comes back through ``takeFinished()``, with the worker's consumer
/// woken so that its loop takes it at once. A partition revoked meanwhile is cancelled: its
/// restore stops at the next batch of records and nothing comes back for it. The thread owns the
/// ``StateRestorer`` and its consumer from ``init`` on, and closes it when it ends (``stop()``).
final class BackgroundRestore: @unchecked Sendable {
    /// A partition to restore: its input partition's committed offset, and the worker's number
    /// for this assignment of it (a partition revoked and assigned again is a new job).
    struct Job: Sendable {
        var partition: Int32
        var committed: Int64?
        var generation: Int
        /// How many times the partition was restored again because its offset moved meanwhile.
        var attempt = 0
    }

    /// A job's outcome: the state and what was read, or the error that stops the worker.
    struct Finished {
        var job: Job
        var outcome: Result<(state: PartitionState, records: Int, uncommitted: Int), KafkaError>
        var duration: Duration
    }

    /// Guarded by ``signal``'s lock.
    private var queue: [Job] = []
    private var finished: [Finished] = []
    /// Generations cancelled while running or finished and not taken yet.
    private var cancelled: Set<Int> = []
    private var stopping = false
    private let signal = NSCondition()
    private let pendingResults = Atomic(0)
    private let ended = DispatchSemaphore(value: 0)
    private let makeState: @Sendable () -> PartitionState
    /// Used on the restore thread alone.
    private let restorer: StateRestorer

    /// Starts the thread; `restorer` is used on it alone from now on. `wake` interrupts the
    /// worker's wait for records when a result is ready.
    init(
        restorer: StateRestorer, name: String, makeState: @escaping @Sendable () -> PartitionState,
        wake: @escaping @Sendable () -> Void
    ) {
        self.makeState = makeState
        self.restorer = restorer
        let thread = Thread { [self] in
            self.serve(wake: wake)
            self.restorer.close()
            self.ended.signal()
        }
        thread.name = name
        thread.start()
    }

    private func locked<T>(_ body: () -> T) -> T {
        self.signal.lock()
        defer { self.signal.unlock() }
        return body()
    }

    /// Queues `jobs`, restored in order after the ones already queued.
    func start(_ jobs: [Job]) {
        guard !jobs.isEmpty else { return }
        self.locked {
            self.queue.append(contentsOf: jobs)
            self.signal.broadcast()
        }
    }

    /// Stops the restore of these jobs (by generation): a queued one is dropped, a running one
    /// stops at its next batch, a finished one is never handed out.
    func cancel(generations: [Int]) {
        guard !generations.isEmpty else { return }
        self.locked {
            let queued = Set(self.queue.map(\.generation))
            self.queue.removeAll { generations.contains($0.generation) }
            self.cancelled.formUnion(generations.filter { !queued.contains($0) })
        }
    }

    /// Whether a restore has finished since the last ``takeFinished()``: one atomic load.
    var hasFinished: Bool { self.pendingResults.load(ordering: .acquiring) > 0 }

    /// The restores finished and not cancelled, oldest first.
    func takeFinished() -> [Finished] {
        self.locked { self.takeFinishedLocked() }
    }

    private func takeFinishedLocked() -> [Finished] {
        let taken = self.finished.filter { !self.cancelled.contains($0.job.generation) }
        for result in self.finished { self.cancelled.remove(result.job.generation) }
        self.finished.removeAll()
        self.pendingResults.store(0, ordering: .releasing)
        return taken
    }

    /// Waits until the jobs of these generations have finished (a restore the caller cannot go
    /// on without: an eager assignment, which cannot be held back, or an at-least-once worker
    /// restoring its partitions again) and takes their results; others finished meanwhile are
    /// left for ``takeFinished()``.
    func waitFor(generations: Set<Int>) -> [Finished] {
        self.locked {
            var results: [Finished] = []
            var waiting = generations
            while !waiting.isEmpty {
                let taken = self.finished.filter { waiting.contains($0.job.generation) }
                self.finished.removeAll { waiting.contains($0.job.generation) }
                self.pendingResults.store(self.finished.count, ordering: .releasing)
                results.append(contentsOf: taken)
                waiting.subtract(taken.map(\.job.generation))
                if !waiting.isEmpty { self.signal.wait() }
            }
            return results
        }
    }

    /// Cancels everything and waits for the thread to end (its restorer closed). Idempotent.
    func stop() {
        let first: Bool = self.locked {
            defer { self.stopping = true }
            self.queue.removeAll()
            self.signal.broadcast()
            return !self.stopping
        }
        if first { self.ended.wait() }
    }

    private func serve(wake: @Sendable () -> Void) {
        while let job = self.nextJob() {
            let started = ContinuousClock.now
            var state = self.makeState()
            let outcome: Result<(state: PartitionState, records: Int, uncommitted: Int), KafkaError>?
            do {
                let restored = try self.restorer.restore(
                    partition: job.partition, committed: job.committed, into: &state,
                    cancelled: { self.isCancelled(job.generation) })
                outcome = restored.map { .success((state, $0.records, $0.uncommitted)) }
            } catch {
                outcome = .failure(error)
            }
            let handedOut: Bool = self.locked {
                guard let outcome, !self.cancelled.contains(job.generation), !self.stopping else {
                    self.cancelled.remove(job.generation)
                    return false
                }
                self.finished.append(Finished(job: job, outcome: outcome, duration: ContinuousClock.now - started))
                self.pendingResults.store(self.finished.count, ordering: .releasing)
                self.signal.broadcast()
                return true
            }
            if handedOut { wake() }
        }
    }

    private func nextJob() -> Job? {
        self.locked {
            while !self.stopping {
                if !self.queue.isEmpty { return self.queue.removeFirst() }
                self.signal.wait()
            }
            return nil
        }
    }

    private func isCancelled(_ generation: Int) -> Bool {
        self.locked { self.stopping || self.cancelled.contains(generation) }
    }
}
