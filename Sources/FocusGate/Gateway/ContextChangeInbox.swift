import FocusGateCore
import Synchronization

/// Context changes announced by the invalidation listener, waiting for one worker.
///
/// The listener posts from its thread; the worker drains on its own thread once per batch and
/// recomputes the badges of the users it owns. A worker checks an atomic count first, so a batch
/// with nothing announced takes no lock.
final class ContextChangeInbox: Sendable {
    private let changes = Mutex<[(userID: String, context: CompiledFocusContext?)]>([])
    private let pending = Atomic(0)

    func post(userID: String, context: CompiledFocusContext?) {
        self.changes.withLock { $0.append((userID, context)) }
        self.pending.add(1, ordering: .releasing)
    }

    func drain() -> [(userID: String, context: CompiledFocusContext?)] {
        guard self.pending.load(ordering: .acquiring) > 0 else { return [] }
        let drained = self.changes.withLock { changes in
            let drained = changes
            changes.removeAll(keepingCapacity: true)
            return drained
        }
        self.pending.subtract(drained.count, ordering: .relaxed)
        return drained
    }
}
