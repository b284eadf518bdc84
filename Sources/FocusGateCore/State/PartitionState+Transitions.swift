// MARK: - Transitions: the partition's timers

/// When a user's Focus in force changes next, as the partition's timer queue holds it.
struct TransitionTimer {
    var at: Int64
    var user: UInt32
}

/// A binary min-heap of ``TransitionTimer``s by instant. An entry is current only while its
/// user's slot holds the same instant (``UserSlot/transitionAt``): a changed or cleared timer
/// leaves its old entry behind, skipped when it comes up.
struct TransitionQueue {
    private(set) var timers: [TransitionTimer] = []

    var first: TransitionTimer? { self.timers.first }

    mutating func push(_ timer: TransitionTimer) {
        self.timers.append(timer)
        var child = self.timers.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard self.timers[child].at < self.timers[parent].at else { break }
            self.timers.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popFirst() -> TransitionTimer? {
        guard let first = self.timers.first else { return nil }
        let last = self.timers.removeLast()
        guard !self.timers.isEmpty else { return first }
        self.timers[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < self.timers.count else { break }
            let right = left + 1
            let child = right < self.timers.count && self.timers[right].at < self.timers[left].at ? right : left
            guard self.timers[child].at < self.timers[parent].at else { break }
            self.timers.swapAt(child, parent)
            parent = child
        }
        return first
    }

    mutating func removeAll() { self.timers.removeAll(keepingCapacity: true) }
}

extension PartitionState {
    /// Users with a transition watched: the partition's pending timers.
    public var pendingTransitions: Int { self.transitionCount }

    /// The earliest pending transition (Unix ms), if any.
    public mutating func nextTransitionAt() -> Int64? {
        while let first = self.transitionQueue.first {
            if self.transitionSlots[first.user]?.at == first.at { return first.at }
            _ = self.transitionQueue.popFirst()
        }
        return nil
    }

    /// Watches the user's next Focus transition at `instant` (`nil`: none), as part of the state:
    /// committed with the outputs, restored with the partition, rolled back with an abort.
    mutating func watchTransition(user: UInt32, at instant: Int64?) {
        // Nothing to clear while no user has a timer: the record loop's common case, no lookup.
        guard instant != nil || self.transitionCount > 0 else { return }
        let at = instant ?? .max
        let slot = self.transitionSlots[user]
        let current = slot?.at ?? .max
        guard current != at else { return }
        if current == .max { self.transitionCount += 1 } else if at == .max { self.transitionCount -= 1 }
        self.transitionsChanged = true
        if Int(user) < self.committed.users { self.undo.append(.transition(user, slot)) }
        self.transitionSlots[user] = TransitionSlot(at: at, isDirty: true)
        if slot?.isDirty != true { self.changes.append(.transition(user: user)) }
        if at != .max { self.transitionQueue.push(TransitionTimer(at: at, user: user)) }
    }

    /// ``watchTransition(user:at:)`` by user id; does nothing for a user the partition does not hold.
    public mutating func watchTransition(userID: String, at instant: Int64?) {
        guard let user = self.userNumbers[userID] else { return }
        self.watchTransition(user: user, at: instant)
    }

    /// The users whose transition is due at `now`, earliest first, at most `limit`, each with
    /// the instant it was due; their timers are cleared (``recompute(userID:context:nowMilliseconds:)``
    /// watches the next one).
    public mutating func dueTransitions(atMilliseconds now: Int64, limit: Int) -> [(userID: String, at: Int64)] {
        var due: [(userID: String, at: Int64)] = []
        while due.count < limit, let first = self.nextTransitionAt(), first <= now {
            let timer = self.transitionQueue.popFirst()!
            due.append((self.userIDByNumber[Int(timer.user)], timer.at))
            self.watchTransition(user: timer.user, at: nil)
        }
        return due
    }

    /// A written (or committed) timer change: no longer dirty; a cleared one is dropped.
    mutating func settleTransition(user: UInt32) {
        guard let slot = self.transitionSlots[user] else { return }
        if slot.at == .max {
            self.transitionSlots[user] = nil
        } else {
            self.transitionSlots[user]?.isDirty = false
        }
    }

    /// Rebuilds the timer queue from the timers held: after a restore, and after a rollback
    /// (which brings back timers taken since the commit and drops those of users it removes).
    mutating func rebuildTransitionQueue() {
        self.transitionQueue.removeAll()
        self.transitionCount = 0
        for (user, slot) in self.transitionSlots {
            guard Int(user) < self.users.count, slot.at != .max else {
                if Int(user) >= self.users.count || !slot.isDirty { self.transitionSlots[user] = nil }
                continue
            }
            self.transitionQueue.push(TransitionTimer(at: slot.at, user: user))
            self.transitionCount += 1
        }
    }

    // MARK: Changelog

    mutating func restoreTransition(user: UInt32, value: UnsafeRawBufferPointer?) throws(StateFormatError) {
        guard let value else {
            self.transitionSlots[user] = nil
            return
        }
        var reader = Reader(bytes: value)
        self.transitionSlots[user] = TransitionSlot(at: Int64(bitPattern: try reader.varint()), isDirty: false)
    }
}
