@testable import FocusGate
import FocusGateHarness
import Synchronization
import Testing

@Suite("A value or a fallback after a deadline")
struct FirstAnswerTests {
    /// An operation that ignores cancellation: it answers only when released.
    final class Gate: Sendable {
        private let waiting = Mutex<CheckedContinuation<Int, Never>?>(nil)
        let started = Atomic(false)

        func wait() async -> Int {
            await withCheckedContinuation { continuation in
                self.waiting.withLock { $0 = continuation }
                self.started.store(true, ordering: .sequentiallyConsistent)
            }
        }

        func release(_ value: Int) {
            self.waiting.withLock { $0.take() }?.resume(returning: value)
        }
    }

    @Test("an answer within the limit is the operation's")
    func answerInTime() async {
        let value = await firstAnswer(within: .seconds(30), orElse: -1) { 7 }
        #expect(value == 7)
    }

    @Test(
        "past the limit the fallback comes, without waiting for an operation that ignores cancellation",
        .timeLimit(.minutes(1)))
    func fallbackWithoutWaiting() async throws {
        let gate = Gate()
        // The operation answers only once released, below: returning at all is not waiting for it.
        let value = await firstAnswer(within: .milliseconds(100), orElse: -1) { await gate.wait() }
        #expect(value == -1)
        try await Wait.until("the operation started") { gate.started.load(ordering: .sequentiallyConsistent) }
        gate.release(7)  // its late answer goes nowhere
    }

    @Test("a cancelled caller gets the fallback at once")
    func cancelledCaller() async throws {
        let gate = Gate()
        let caller = Task { await firstAnswer(within: .seconds(60), orElse: -1) { await gate.wait() } }
        try await Wait.until("the operation started") { gate.started.load(ordering: .sequentiallyConsistent) }
        caller.cancel()
        #expect(await caller.value == -1)
        gate.release(7)
    }
}
