public import FocusGateCore

// MARK: - Slots and CLOCK eviction

extension ContextCache {
    struct Slot {
        var userID: String
        /// `nil`: the user has no context (a cached negative answer).
        var context: CompiledFocusContext?
        /// The applied version; `-1` for "no context".
        var version: Int64
        /// The newest version an invalidation announced; `-1` for none.
        var announced: Int64
        /// An invalidation announced a newer version: treat as a miss until reloaded.
        var mustReload: Bool
        /// Used since the eviction hand last passed.
        var referenced: Bool
    }

    struct State {
        var index: [String: Int] = [:]
        var slots: [Slot] = []
        var hand = 0
        let capacity: Int
        /// Users being loaded, with the newest version announced while in flight (`-1`: none).
        var loading: [String: Int64] = [:]
        /// Uncached users whose announced version the store did not have at their last load.
        var pendingAnnouncements: [String: Int64] = [:]
        var compiler = FocusContextCompiler()

        init(capacity: Int) {
            self.capacity = capacity
        }

        mutating func insert(
            userID: String, context: CompiledFocusContext?, version: Int64, metrics: ContextCacheMetrics
        ) {
            if let existing = self.index[userID] {
                guard version >= self.slots[existing].version else { return }
                self.slots[existing].context = context
                self.slots[existing].version = version
                self.slots[existing].announced = max(self.slots[existing].announced, version)
                self.slots[existing].mustReload = false
                self.slots[existing].referenced = true
                return
            }
            let slot = Slot(
                userID: userID, context: context, version: version, announced: version, mustReload: false,
                referenced: false)
            if self.slots.count < self.capacity {
                self.index[userID] = self.slots.count
                self.slots.append(slot)
                return
            }
            // Second chance: clear reference bits until an entry not used since the last pass is found.
            while self.slots[self.hand].referenced {
                self.slots[self.hand].referenced = false
                self.hand = (self.hand + 1) % self.capacity
            }
            self.index[self.slots[self.hand].userID] = nil
            self.slots[self.hand] = slot
            self.index[userID] = self.hand
            self.hand = (self.hand + 1) % self.capacity
            metrics.evictions.increment()
        }

        /// Removes a user; the last slot moves into the hole so that slots stay dense.
        mutating func remove(userID: String) -> Bool {
            guard let slot = self.index.removeValue(forKey: userID) else { return false }
            let last = self.slots.count - 1
            if slot != last {
                self.slots[slot] = self.slots[last]
                self.index[self.slots[slot].userID] = slot
            }
            self.slots.removeLast()
            if self.hand >= self.slots.count { self.hand = 0 }
            return true
        }
    }
}

/// An invalidation message from `focus.invalidations` (docs/contract.md, Invalidations).
public enum ContextInvalidation: Sendable, Hashable {
    /// `{"userId","version"}`: reload the user from the store.
    case reload(userID: String, version: Int64)
    /// `{"userId","version","context":{…}}`: apply this context.
    case inline(FocusContext)
    /// An empty value: drop the user from the cache.
    case drop(userID: String)
}
