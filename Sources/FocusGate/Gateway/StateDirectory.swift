public import FocusGateCore
import FocusGateKafka
import Synchronization

/// What the workers of this instance hold of the users whose partitions they own, as committed:
/// badges (`GET /v1/users/{id}/badges`) and recent decisions (`GET /v1/users/{id}/notifications`).
///
/// A question is put to every worker's ``Desk`` and wakes the worker. The worker answers on its
/// own thread: at once when the user's partition has nothing uncommitted, else after its next
/// commit (within one commit interval and the commit). Nothing is copied for the directory while
/// no one asks: keeping a shared copy of every changed user's badges cost each commit about as
/// much as writing the state changelog.
public final class StateDirectory: UserStateReading, Sendable {
    let desks: [Desk]
    private let partitionCount: @Sendable () -> Int

    /// Creates a directory for `workers` workers; desk `i` is worker `i`'s. `partitionCount`
    /// says how many partitions the input topic has (`0` while unknown).
    init(workers: Int, partitionCount: @escaping @Sendable () -> Int) {
        self.desks = (0..<workers).map { _ in Desk() }
        self.partitionCount = partitionCount
    }

    public func badges(userID: String) async -> LocalAnswer<[Badge]> {
        await self.ask(Question(userID: userID, kind: .badges)) {
            if case .badges(let badges) = $0 { badges } else { nil }
        }
    }

    public func history(userID: String, query: HistoryQuery) async -> LocalAnswer<HistoryPage> {
        await self.ask(Question(userID: userID, kind: .history(query))) {
            if case .history(let page) = $0 { page } else { nil }
        }
    }

    public func notification(userID: String, id: String) async -> LocalAnswer<HistoryLookup> {
        await self.ask(Question(userID: userID, kind: .notification(id))) {
            if case .notification(let lookup) = $0 { lookup } else { nil }
        }
    }

    /// Asks every worker; the first that holds the user answers.
    private func ask<Value: Sendable>(_ question: Question, _ unwrap: @Sendable (Answer) -> Value?) async
        -> LocalAnswer<Value>
    {
        await withTaskGroup(of: Reply?.self) { group in
            for desk in self.desks { group.addTask { await desk.ask(question) } }
            var partitions: Set<Int32> = []
            for await reply in group {
                switch reply {
                case .owned(let answer):
                    guard let value = unwrap(answer) else { continue }
                    group.cancelAll()
                    return .held(value)
                case .notOwned(let held):
                    partitions.formUnion(held)
                case .afterCommit, nil:
                    continue
                }
            }
            return .notHeld(partitions: partitions, partitionCount: self.partitionCount())
        }
    }

    /// A question about a user.
    struct Question: Sendable {
        var userID: String
        var kind: Kind

        enum Kind: Sendable {
            case badges
            case history(HistoryQuery)
            case notification(String)
        }
    }

    /// What a worker that holds the user answers.
    enum Answer: Sendable {
        case badges([Badge])
        case history(HistoryPage)
        case notification(HistoryLookup)
    }

    /// A worker's answer to a question about a user.
    enum Reply: Sendable {
        /// The worker holds the user, and its state is as committed.
        case owned(Answer)
        /// No partition of the worker holds the user; these are the input partitions it holds.
        case notOwned(held: [Int32])
        /// The user's partition has uncommitted changes: asked again after the commit.
        case afterCommit
    }

    /// The questions waiting for one worker.
    final class Desk: Sendable {
        private struct State {
            var waker: KafkaConsumer.Waker?
            var questions: [(question: Question, answer: CheckedContinuation<Reply?, Never>)] = []
        }

        private let state = Mutex(State())
        private let count = Atomic(0)

        /// The answer of this desk's worker, never ``Reply/afterCommit``; `nil` when the worker
        /// does not run.
        func ask(_ question: Question) async -> Reply? {
            await withCheckedContinuation { continuation in
                let waiting = self.state.withLock { state in
                    guard let waker = state.waker else { return false }
                    state.questions.append((question, continuation))
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
        func answer(_ reply: (Question) -> Reply) {
            let questions = self.state.withLock { state in
                defer { state.questions.removeAll() }
                return state.questions
            }
            var later: [(question: Question, answer: CheckedContinuation<Reply?, Never>)] = []
            for question in questions {
                let answer = reply(question.question)
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
