import FocusGateCore
import FocusGateKafka
import Synchronization

/// The committed badges of the users whose partitions this instance owns, for
/// `GET /v1/users/{id}/badges`.
///
/// A question is put to every worker's ``Desk`` and wakes the worker. The worker answers on its
/// own thread: at once when the user's partition has nothing uncommitted, else after its next
/// commit (within one commit interval and the commit). Nothing is copied for the directory while
/// no one asks: keeping a shared copy of every changed user's badges cost each commit about as
/// much as writing the state changelog (docs/performance.md).
public final class BadgeDirectory: BadgeReading, Sendable {
    let desks: [Desk]
    private let partitionCount: @Sendable () -> Int

    /// Creates a directory for `workers` workers; desk `i` is worker `i`'s. `partitionCount`
    /// says how many partitions the input topic has (`0` while unknown).
    init(workers: Int, partitionCount: @escaping @Sendable () -> Int) {
        self.desks = (0..<workers).map { _ in Desk() }
        self.partitionCount = partitionCount
    }

    public func badges(userID: String) async -> LocalBadges {
        await withTaskGroup(of: Reply?.self) { group in
            for desk in self.desks { group.addTask { await desk.ask(userID) } }
            var partitions: Set<Int32> = []
            for await reply in group {
                switch reply {
                case .owned(let badges):
                    group.cancelAll()
                    return .held(badges)
                case .notOwned(let held):
                    partitions.formUnion(held)
                case .afterCommit, nil:
                    continue
                }
            }
            return .notHeld(partitions: partitions, partitionCount: self.partitionCount())
        }
    }

    /// A worker's answer to a question about a user.
    enum Reply: Sendable {
        /// The user's badges: the worker holds the user, and its state is as committed.
        case owned([Badge])
        /// No partition of the worker holds the user; these are the input partitions it holds.
        case notOwned(held: [Int32])
        /// The user's partition has uncommitted changes: asked again after the commit.
        case afterCommit
    }

    /// The questions waiting for one worker.
    final class Desk: Sendable {
        private struct State {
            var waker: KafkaConsumer.Waker?
            var questions: [(userID: String, answer: CheckedContinuation<Reply?, Never>)] = []
        }

        private let state = Mutex(State())
        private let count = Atomic(0)

        /// The answer of this desk's worker, never ``Reply/afterCommit``; `nil` when the worker
        /// does not run.
        func ask(_ userID: String) async -> Reply? {
            await withCheckedContinuation { continuation in
                let waiting = self.state.withLock { state in
                    guard let waker = state.waker else { return false }
                    state.questions.append((userID, continuation))
                    self.count.add(1, ordering: .releasing)
                    waker.wake()
                    return true
                }
                if !waiting { continuation.resume(returning: nil) }
            }
        }

        /// Whether questions wait: one atomic load, for the worker's loop.
        var hasQuestions: Bool { self.count.load(ordering: .acquiring) > 0 }

        /// Questions waiting for the worker's answer.
        var waitingQuestions: Int { self.state.withLock { $0.questions.count } }

        /// The worker takes questions from now on; `waker` interrupts its wait for records.
        func open(waker: KafkaConsumer.Waker) {
            self.state.withLock { $0.waker = waker }
        }

        /// Answers the waiting questions with `reply` (on the worker's thread); those it answers
        /// ``Reply/afterCommit`` keep waiting.
        func answer(_ reply: (String) -> Reply) {
            let questions = self.state.withLock { state in
                defer { state.questions.removeAll() }
                return state.questions
            }
            var later: [(userID: String, answer: CheckedContinuation<Reply?, Never>)] = []
            for question in questions {
                let answer = reply(question.userID)
                if case .afterCommit = answer {
                    later.append(question)
                } else {
                    question.answer.resume(returning: answer)
                }
            }
            self.state.withLock { state in
                state.questions.insert(contentsOf: later, at: 0)
                self.count.store(state.questions.count, ordering: .releasing)
            }
        }

        /// The worker stops: waiting and later questions are answered `nil`. After this returns the
        /// worker's waker is no longer used.
        func close() {
            let questions = self.state.withLock { state in
                state.waker = nil
                self.count.store(0, ordering: .releasing)
                defer { state.questions.removeAll() }
                return state.questions
            }
            for question in questions { question.answer.resume(returning: nil) }
        }
    }
}
