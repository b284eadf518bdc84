// MARK: - Transitions: the partition's timers

/// When a user's Focus in force changes next, as the partition's timer queue holds it.
struct TransitionTimer {
    var at: Int64
    var user: UInt32
}

/// The partition's timers: a four-way min-heap of ``TransitionTimer``s by instant (then user
/// number, so that timers due at once come out in one order), holding at most one per user (each
/// user's place in it kept by user number), so that setting, moving or clearing a user's timer
/// is O(log n) and the heap never holds more timers than users that have one. Four children a
/// node halve a binary heap's depth (10 levels for 1,000,000 users), and a timer moving through
/// it is written once where it stops, the timers it passes moved up or down one place each.
///
/// The queue keeps its own undo log: every place of the heap as of the last ``commit()`` keeps
/// its before-image when it is written or removed, and ``rollBack()`` writes the images back. A
/// rollback so touches only the places the changes wrote (lately in the cache), instead of
/// moving each changed timer back through the heap, a walk of cold lines with a million users.
struct TransitionQueue {
    private static let arity = 4

    private(set) var timers: [TransitionTimer] = []
    /// Each user's place in ``timers`` by user number (`-1`: none), as far as the highest user
    /// number that had a timer: 4 bytes a user.
    private var positions: [Int32] = []
    /// How many timers the heap held at the commit.
    private var committedCount = 0
    /// Before-images of places below ``committedCount``, in the order they were taken.
    private var beforeImages: [(position: Int32, timer: TransitionTimer)] = []

    var first: TransitionTimer? { self.timers.first }
    var count: Int { self.timers.count }

    private func position(of user: UInt32) -> Int? {
        guard Int(user) < self.positions.count, self.positions[Int(user)] >= 0 else { return nil }
        return Int(self.positions[Int(user)])
    }

    /// The user's timer, if one is set.
    func instant(of user: UInt32) -> Int64? {
        self.position(of: user).map { self.timers[$0].at }
    }

    /// Sets the user's timer to `instant`, or clears it (`nil`).
    mutating func set(_ user: UInt32, at instant: Int64?) {
        if let position = self.position(of: user) {
            guard let instant else { return self.remove(at: position) }
            let earlier = instant < self.timers[position].at
            self.keepImage(of: position)
            self.timers[position].at = instant
            if earlier { self.siftUp(position) } else { self.siftDown(position) }
        } else if let instant {
            if Int(user) >= self.positions.count {
                self.positions.append(contentsOf: repeatElement(-1, count: Int(user) + 1 - self.positions.count))
            }
            self.timers.append(TransitionTimer(at: instant, user: user))
            self.positions[Int(user)] = Int32(self.timers.count - 1)
            self.siftUp(self.timers.count - 1)
        }
    }

    mutating func popFirst() -> TransitionTimer? {
        guard let first = self.timers.first else { return nil }
        self.remove(at: 0)
        return first
    }

    /// Empties the queue, as committed.
    mutating func removeAll() {
        self.timers.removeAll(keepingCapacity: true)
        self.positions.removeAll(keepingCapacity: true)
        self.commit()
    }

    /// Makes the timers as they are the committed ones.
    mutating func commit() {
        self.beforeImages.removeAll(keepingCapacity: true)
        self.committedCount = self.timers.count
    }

    /// Puts the heap back as of the commit: the places written since get their images back
    /// (newest first, so the oldest, the committed one, stays), timers added since are dropped,
    /// and only the users at those places have theirs set again.
    mutating func rollBack() {
        for (position, _) in self.beforeImages where Int(position) < self.timers.count {
            self.positions[Int(self.timers[Int(position)].user)] = -1
        }
        for timer in self.timers[min(self.committedCount, self.timers.count)...] {
            self.positions[Int(timer.user)] = -1
        }
        if self.timers.count > self.committedCount {
            self.timers.removeSubrange(self.committedCount...)
        } else if self.timers.count < self.committedCount {
            // Each place removed since the commit kept its image when it was: overwritten below.
            self.timers.append(
                contentsOf: repeatElement(
                    TransitionTimer(at: 0, user: 0), count: self.committedCount - self.timers.count))
        }
        for (position, timer) in self.beforeImages.reversed() { self.timers[Int(position)] = timer }
        for (position, _) in self.beforeImages {
            self.positions[Int(self.timers[Int(position)].user)] = position
        }
        self.beforeImages.removeAll(keepingCapacity: true)
    }

    /// Keeps the before-image of a place that held a timer at the commit.
    @inline(__always)
    private mutating func keepImage(of position: Int) {
        if position < self.committedCount { self.beforeImages.append((Int32(position), self.timers[position])) }
    }

    private mutating func remove(at position: Int) {
        let removed = self.timers[position]
        self.positions[Int(removed.user)] = -1
        self.keepImage(of: self.timers.count - 1)
        let last = self.timers.removeLast()
        guard position < self.timers.count else { return }
        self.keepImage(of: position)
        self.timers[position] = last
        self.positions[Int(last.user)] = Int32(position)
        if last.precedes(removed) { self.siftUp(position) } else { self.siftDown(position) }
    }

    private mutating func siftUp(_ start: Int) {
        let moving = self.timers[start]
        var hole = start
        while hole > 0 {
            let parent = (hole - 1) / Self.arity
            let above = self.timers[parent]
            guard moving.precedes(above) else { break }
            self.place(above, at: hole)
            hole = parent
        }
        self.place(moving, at: hole)
    }

    private mutating func siftDown(_ start: Int) {
        let moving = self.timers[start]
        let count = self.timers.count
        var hole = start
        while true {
            let first = Self.arity * hole + 1
            guard first < count else { break }
            var child = first
            for next in (first + 1)..<min(first + Self.arity, count)
            where self.timers[next].precedes(self.timers[child]) {
                child = next
            }
            let below = self.timers[child]
            guard below.precedes(moving) else { break }
            self.place(below, at: hole)
            hole = child
        }
        self.place(moving, at: hole)
    }

    private mutating func place(_ timer: TransitionTimer, at position: Int) {
        self.keepImage(of: position)
        self.timers[position] = timer
        self.positions[Int(timer.user)] = Int32(position)
    }

    /// What breaks the queue's invariants (empty when it holds): each timer due no earlier than
    /// its parent, each user's place where its timer is, no place for a user without one.
    func violations() -> [String] {
        var found: [String] = []
        for (position, timer) in self.timers.enumerated() {
            if position > 0 && timer.precedes(self.timers[(position - 1) / Self.arity]) {
                found.append("timer at \(position) precedes its parent")
            }
            if self.position(of: timer.user) != position {
                found.append("user \(timer.user)'s place is not \(position)")
            }
        }
        let placed = self.positions.filter { $0 >= 0 }.count
        if placed != self.timers.count { found.append("\(placed) places for \(self.timers.count) timers") }
        for (position, _) in self.beforeImages where Int(position) >= self.committedCount {
            found.append("an image of place \(position), not one at the commit (\(self.committedCount))")
        }
        return found
    }
}

extension TransitionTimer {
    /// Whether this timer comes out of the queue before `other`: earlier, or as early and of a
    /// lower user number.
    func precedes(_ other: TransitionTimer) -> Bool {
        self.at < other.at || (self.at == other.at && self.user < other.user)
    }
}

extension PartitionState {
    /// Users with a transition watched: the partition's pending timers.
    public var pendingTransitions: Int { self.transitionQueue.count }

    /// The earliest pending transition (Unix ms), if any.
    public mutating func nextTransitionAt() -> Int64? {
        self.transitionQueue.first?.at
    }

    /// Watches the user's next Focus transition at `instant` (`nil`: none), as part of the state:
    /// committed with the outputs, restored with the partition, rolled back with an abort.
    mutating func watchTransition(user: UInt32, at instant: Int64?) {
        // Nothing to clear while no user has a timer: the record loop's common case, no lookup.
        guard instant != nil || self.transitionQueue.count > 0 else { return }
        let at = instant ?? .max
        let slot = self.transitionSlots[user]
        let current = slot?.at ?? .max
        guard current != at else { return }
        if Int(user) < self.users.committedCount { self.undo.append(.transition(user, slot)) }
        self.transitionSlots[user] = TransitionSlot(at: at, isDirty: true)
        if slot?.isDirty != true { self.changes.append(.transition(user: user)) }
        self.transitionQueue.set(user, at: instant)
    }

    /// ``watchTransition(user:at:)`` by user id; does nothing for a user the partition does not hold.
    public mutating func watchTransition(userID: String, at instant: Int64?) {
        guard let user = self.userNumber(userID) else { return }
        self.watchTransition(user: user, at: instant)
    }

    /// The users whose transition is due at `now`, earliest first, at most `limit`, each with
    /// the instant it was due; their timers are cleared (``recompute(userID:context:nowMilliseconds:)``
    /// watches the next one).
    public mutating func dueTransitions(atMilliseconds now: Int64, limit: Int) -> [(userID: String, at: Int64)] {
        var due: [(userID: String, at: Int64)] = []
        while due.count < limit, let first = self.nextTransitionAt(), first <= now {
            let timer = self.transitionQueue.first!
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

    /// Builds the timer queue from the timers restored.
    mutating func rebuildTransitionQueue() {
        self.transitionQueue.removeAll()
        for (user, slot) in self.transitionSlots {
            guard Int(user) < self.users.count, slot.at != .max else {
                if Int(user) >= self.users.count || !slot.isDirty { self.transitionSlots[user] = nil }
                continue
            }
            self.transitionQueue.set(user, at: slot.at)
        }
        self.transitionQueue.commit()
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
