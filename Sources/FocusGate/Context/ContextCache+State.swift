public import FocusGateCore

// MARK: - Slots and CLOCK eviction

extension ContextCache {
    struct Slot {
        var userID: String
        /// `userID`'s ``IdentifierIndex/hash(_:)``, for moving the slot in ``State/index``.
        var hash: UInt64
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
        /// The slots by user id.
        var index = IdentifierIndex()
        var slots: [Slot] = []
        var hand = 0
        let capacity: Int
        /// Users being loaded, with the newest version announced while in flight (`-1`: none).
        var loading: [UserID: Int64] = [:]
        /// Uncached users whose announced version the store did not have at their last load.
        var pendingAnnouncements: [UserID: Int64] = [:]
        var compiler = FocusContextCompiler()

        init(capacity: Int) {
            self.capacity = capacity
        }

        /// The user's slot; `hash` is the id's ``IdentifierIndex/hash(_:)`` when the caller has it.
        func slot(of userID: String, hash: UInt64? = nil) -> Int? {
            self.index.find(userID, hash: hash ?? IdentifierIndex.hash(userID)) { self.slots[Int($0)].userID }
                .map(Int.init)
        }

        mutating func insert(
            userID: String, context: CompiledFocusContext?, version: Int64, metrics: ContextCacheMetrics
        ) {
            let hash = IdentifierIndex.hash(userID)
            if let existing = self.slot(of: userID, hash: hash) {
                guard version >= self.slots[existing].version else { return }
                self.slots[existing].context = context
                self.slots[existing].version = version
                self.slots[existing].announced = max(self.slots[existing].announced, version)
                self.slots[existing].mustReload = false
                self.slots[existing].referenced = true
                return
            }
            let slot = Slot(
                userID: userID, hash: hash, context: context, version: version, announced: version,
                mustReload: false, referenced: false)
            if self.slots.count < self.capacity {
                self.index.insert(UInt32(self.slots.count), hash: hash)
                self.slots.append(slot)
                return
            }
            // Second chance: clear reference bits until an entry not used since the last pass is found.
            while self.slots[self.hand].referenced {
                self.slots[self.hand].referenced = false
                self.hand = (self.hand + 1) % self.capacity
            }
            self.index.remove(UInt32(self.hand), hash: self.slots[self.hand].hash)
            self.slots[self.hand] = slot
            self.index.insert(UInt32(self.hand), hash: hash)
            self.hand = (self.hand + 1) % self.capacity
            metrics.evictions.increment()
        }

        /// Removes a user; the last slot moves into the hole so that slots stay dense.
        mutating func remove(userID: String) -> Bool {
            guard let slot = self.slot(of: userID) else { return false }
            self.index.remove(UInt32(slot), hash: self.slots[slot].hash)
            let last = self.slots.count - 1
            if slot != last {
                self.index.remove(UInt32(last), hash: self.slots[last].hash)
                self.slots[slot] = self.slots[last]
                self.index.insert(UInt32(slot), hash: self.slots[slot].hash)
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
