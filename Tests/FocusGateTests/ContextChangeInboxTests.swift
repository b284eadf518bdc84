@testable import FocusGate
import FocusGateCore
import FocusGateKafka
import FocusGateThreads
import Logging
import Synchronization
import Testing

/// The hand-off from the invalidation listener's thread to a worker's thread, and from workers to
/// the HTTP handlers. (ThreadSanitizer cannot judge these here: it does not see the futex-based
/// `Synchronization.Mutex` of Swift 6.3 on Linux and flags every `withLock`; the types are checked
/// `Sendable` by the Swift 6 language mode instead.)
@Suite("Context changes and badge questions reach the workers")
struct ContextChangeInboxTests {
    @Test("changes posted from one thread are drained on another, each once, in order")
    func handOff() async throws {
        let inbox = ContextChangeInbox()
        let count = 20_000
        async let posted: Void = DedicatedThread.run(name: "test-listener") {
            for index in 0..<count { inbox.post(userID: "u-\(index)", context: nil) }
        }
        let received = try await DedicatedThread.run(name: "test-worker") {
            var received: [String] = []
            while received.count < count { received += inbox.drain().map(\.userID) }
            return received
        }
        try await posted
        #expect(received == (0..<count).map { "u-\($0)" })
        #expect(inbox.drain().isEmpty)
    }

    private static let badge = Badge(appID: "chat", badge: 2, unread: 3, sequence: 7)
    private static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// A consumer of no broker: its waker is all a desk needs.
    private static func idleConsumer() throws -> KafkaConsumer {
        try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(bootstrapServers: "127.0.0.1:1", groupID: nil),
            logger: Self.logger)
    }

    /// Waits (on a condition, 10 s at most) until `count` questions wait at `desk`.
    private static func waitForQuestions(_ count: Int, at desk: StateDirectory.Desk) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while desk.waitingQuestions < count {
            try #require(ContinuousClock.now < deadline, "\(count) questions did not arrive within 10 s")
            await Task.yield()
        }
    }

    @Test("a badge question waits for the worker's answer; one asked again after the commit keeps waiting")
    func questionWaitsForTheWorker() async throws {
        let consumer = try Self.idleConsumer()
        let directory = StateDirectory(workers: 1) { 4 }
        let desk = directory.desks[0]
        desk.open(waker: consumer.waker)
        async let asked = directory.badges(userID: "u-1")
        try await Self.waitForQuestions(1, at: desk)
        #expect(desk.hasQuestions)
        desk.answer { _ in .afterCommit }
        #expect(desk.waitingQuestions == 1 && desk.hasQuestions)
        let answered = try await DedicatedThread.run(name: "test-worker") { () -> [String] in
            var users: [String] = []
            desk.answer { question in
                users.append(question.userID)
                return question.userID == "u-1" ? .owned(.badges([Self.badge])) : .notOwned(held: [])
            }
            return users
        }
        #expect(answered == ["u-1"])
        #expect(await asked == .held([Self.badge]))
        #expect(desk.waitingQuestions == 0 && !desk.hasQuestions)
        desk.close()
    }

    @Test("a worker that does not run answers at once: before it opens, and after it closes")
    func stoppedWorkerAnswersAtOnce() async throws {
        let consumer = try Self.idleConsumer()
        let directory = StateDirectory(workers: 1) { 4 }
        let desk = directory.desks[0]
        let nothing = LocalAnswer<[Badge]>.notHeld(partitions: [], partitionCount: 4)
        #expect(await directory.badges(userID: "u-1") == nothing)
        desk.open(waker: consumer.waker)
        async let waiting = directory.badges(userID: "u-1")
        try await Self.waitForQuestions(1, at: desk)
        desk.close()
        #expect(await waiting == nothing)
        #expect(await directory.badges(userID: "u-1") == nothing)
    }

    @Test("with several workers the question goes to each; the owner's answer is taken, else the partitions they hold")
    func ownerAnswers() async throws {
        let consumer = try Self.idleConsumer()
        let directory = StateDirectory(workers: 3) { 4 }
        for desk in directory.desks { desk.open(waker: consumer.waker) }
        async let owned = directory.badges(userID: "u-1")
        for desk in directory.desks { try await Self.waitForQuestions(1, at: desk) }
        for (index, desk) in directory.desks.enumerated() {
            desk.answer { _ in index == 1 ? .owned(.badges([Self.badge])) : .notOwned(held: [Int32(index)]) }
        }
        #expect(await owned == .held([Self.badge]))
        // No worker holds the user: the answer is the partitions they hold between them.
        async let unowned = directory.badges(userID: "u-2")
        for desk in directory.desks { try await Self.waitForQuestions(1, at: desk) }
        for (index, desk) in directory.desks.enumerated() {
            desk.answer { _ in .notOwned(held: index == 0 ? [0, 3] : [Int32(index)]) }
        }
        #expect(await unowned == .notHeld(partitions: [0, 1, 2, 3], partitionCount: 4))
        for desk in directory.desks { desk.close() }
    }

    @Test("a question wakes a worker that waits for records")
    func questionWakesTheWorker() async throws {
        let directory = StateDirectory(workers: 1) { 4 }
        let desk = directory.desks[0]
        let opened = Atomic(false)
        let worker = Task {
            try await DedicatedThread.run(name: "test-worker") { () -> Duration in
                let consumer = try Self.idleConsumer()
                desk.open(waker: consumer.waker)
                opened.store(true, ordering: .releasing)
                // Without a wake-up this waits 30 s for records that never come.
                let started = ContinuousClock.now
                while !desk.hasQuestions && ContinuousClock.now - started < .seconds(30) {
                    consumer.consumeBatch(timeout: .seconds(30)) { _ in }
                }
                let waited = ContinuousClock.now - started
                desk.answer { _ in .owned(.badges([Self.badge])) }
                desk.close()
                return waited
            }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !opened.load(ordering: .acquiring) {
            try #require(ContinuousClock.now < deadline, "the worker did not open its desk within 10 s")
            await Task.yield()
        }
        #expect(await directory.badges(userID: "u-1") == .held([Self.badge]))
        let waited = try await worker.value
        #expect(waited < .seconds(10), "the worker woke after \(waited)")
    }
}
