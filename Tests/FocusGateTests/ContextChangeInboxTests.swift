@testable import FocusGate
import FocusGateCore
import FocusGateKafka
import Synchronization
import Testing

/// The hand-off from the invalidation listener's thread to a worker's thread, and from workers to
/// the HTTP handlers. (ThreadSanitizer cannot judge these here: it does not see the futex-based
/// `Synchronization.Mutex` of Swift 6.3 on Linux and flags every `withLock`; the types are checked
/// `Sendable` by the Swift 6 language mode instead.)
@Suite("Context changes reach the worker that owns the user")
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

    @Test("the badge directory is written by workers and read by HTTP handlers concurrently")
    func directory() async throws {
        let directory = BadgeDirectory()
        let done = Atomic(false)
        async let writer: Void = DedicatedThread.run(name: "test-worker") {
            for sequence in 1...5000 {
                directory.publish([
                    (
                        "u-1",
                        [
                            Badge(
                                appID: "chat", badge: sequence % 7, unread: sequence % 7, sequence: UInt64(sequence))
                        ]
                    )
                ])
            }
            done.store(true, ordering: .releasing)
        }
        var last: UInt64 = 0
        while !done.load(ordering: .acquiring) {
            let sequence = await directory.badges(userID: "u-1").first?.sequence ?? 0
            #expect(sequence >= last, "a reader never sees badges go back")
            last = sequence
        }
        try await writer
        #expect(await directory.badges(userID: "u-1").first?.sequence == 5000)
        directory.remove(["u-1"])
        #expect(await directory.badges(userID: "u-1").isEmpty)
    }
}
