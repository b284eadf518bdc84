@testable import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateStore
import Synchronization
import Testing

/// A store whose pings wait until released, counting them.
final class HangingStore: ContextStore {
    let pings = Atomic(0)
    private let release = Mutex<[CheckedContinuation<Void, Never>]>([])
    private let released = Atomic(false)

    func contexts(for userIDs: [String]) async throws(ContextStoreError) -> [UserID: FocusContext] { [:] }
    func put(_ context: FocusContext) async throws(ContextStoreError) -> ContextWriteOutcome { .stored }
    func delete(userID: String) async throws(ContextStoreError) -> Int64? { nil }
    func close() async {}

    func ping() async throws(ContextStoreError) {
        self.pings.add(1, ordering: .relaxed)
        await withCheckedContinuation { continuation in
            let waiting = self.release.withLock { waiting in
                guard !self.released.load(ordering: .relaxed) else { return false }
                waiting.append(continuation)
                return true
            }
            if !waiting { continuation.resume() }
        }
    }

    /// Lets every ping, waiting and to come, answer.
    func answer() {
        self.released.store(true, ordering: .relaxed)
        for continuation in self.release.withLock({ waiting in
            defer { waiting.removeAll() }; return waiting
        }) {
            continuation.resume()
        }
    }
}

@Suite("Store probe for readiness")
struct StoreProbeTests {
    @Test(
        "a store that does not answer is unreachable after the timeout; probes meanwhile share one ping; it answers again",
        .timeLimit(.minutes(1)))
    func hangingStore() async throws {
        let store = HangingStore()
        let probe = StoreProbe(store: store, timeout: .milliseconds(200))
        async let first = probe.isReachable()
        async let second = probe.isReachable()
        // The store answers nothing until told to below: answers now come from the timeout, not
        // from waiting for the store (no wall-clock bound: a busy machine delays the timer).
        let answers = await [first, second]
        #expect(answers == [false, false])
        #expect(store.pings.load(ordering: .relaxed) == 1, "one ping in flight at a time")
        store.answer()
        try await Wait.until("the store answers again") { await probe.isReachable() }
    }
}
