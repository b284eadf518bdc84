import FocusGateStore
import Synchronization

/// The context store's answer for readiness (`/readyz`, and `focusgate_ready` at each scrape):
/// one ping at a time, each waited for at most ``timeout``. A store that does not answer counts
/// as unreachable after the timeout instead of holding the probe, and the probes that come while
/// its ping still runs wait for that one rather than piling more onto the store.
final class StoreProbe: Sendable {
    private let store: any ContextStore
    let timeout: Duration
    private let inFlight = Mutex<Task<Bool, Never>?>(nil)

    init(store: any ContextStore, timeout: Duration = .seconds(2)) {
        self.store = store
        self.timeout = timeout
    }

    /// Whether the store answered a ping within ``timeout``.
    func isReachable() async -> Bool {
        let ping = self.inFlight.withLock { current in
            if let current { return current }
            let task = Task { [self] in
                let answered = (try? await self.store.ping()) != nil
                self.inFlight.withLock { $0 = nil }
                return answered
            }
            current = task
            return task
        }
        return await firstAnswer(within: self.timeout, orElse: false) { await ping.value }
    }
}
