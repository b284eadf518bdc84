// MARK: - Focus timers: when each user's Focus in force changes next (docs/focus-schedules.md)

/// When a user's Focus in force changes next (Unix ms), watched by the partition's timers: kept
/// only for users who have one, beside the user slots.
struct TransitionSlot {
    /// `Int64.max`: cleared since the commit (written as a tombstone, then dropped).
    var at: Int64
    /// Changed since the last write and listed in the changes once.
    var isDirty: Bool
}

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

/// The partition's Focus timers: a user's next transition or summary time, kept only for users
/// who have one, and the queue that fires them in order. Its changelog record is the user's `T`
/// (the instant; a tombstone once cleared). The queue is built again on restore.
struct FocusTimers: UserRecordComponent {
    static let recordKind = UInt8(ascii: "T")
    static let name = "timers"

    /// By user number; `at == Int64.max`: cleared since the commit (its tombstone not yet written).
    private(set) var slots: [UInt32: TransitionSlot] = [:]
    private(set) var queue = TransitionQueue()
    /// Each change's before-image since the commit, in order.
    private var undo: [(user: UInt32, slot: TransitionSlot?)] = []
    /// Users whose record was marked since the commit.
    private var marked: [UInt32] = []

    /// Sets the user's timer to `instant` or clears it (`nil`). Returns whether the user's record
    /// was marked by it (the caller lists the change).
    mutating func watch(user: UInt32, at instant: Int64?) -> Bool {
        // Nothing to clear while no user has a timer: the record loop's common case, no lookup.
        guard instant != nil || self.queue.count > 0 else { return false }
        let at = instant ?? .max
        let slot = self.slots[user]
        guard (slot?.at ?? .max) != at else { return false }
        self.undo.append((user, slot))
        self.slots[user] = TransitionSlot(at: at, isDirty: true)
        self.queue.set(user, at: instant)
        guard slot?.isDirty != true else { return false }
        self.marked.append(user)
        return true
    }

    /// A written (or committed) change: no longer marked; a cleared timer is dropped.
    private mutating func settle(user: UInt32) {
        guard let slot = self.slots[user] else { return }
        if slot.at == .max {
            self.slots[user] = nil
        } else {
            self.slots[user]?.isDirty = false
        }
    }

    // MARK: The component

    mutating func writeRecord<E: Error>(
        user: UInt32, userID: String, key: inout [UInt8], value: inout [UInt8],
        _ write: (_ key: [UInt8], _ value: [UInt8]?) throws(E) -> Void
    ) throws(E) {
        guard let slot = self.slots[user], slot.isDirty else { return }
        self.settle(user: user)
        Self.appendKey(kind: Self.recordKind, userID: userID, to: &key)
        guard slot.at != .max else { return try write(key, nil) }
        PartitionState.writeVarint(UInt64(bitPattern: slot.at), to: &value)
        try write(key, value)
    }

    mutating func restore(user: UInt32, kind: UInt8, value: UnsafeRawBufferPointer?) throws(StateFormatError) {
        guard let value else {
            self.slots[user] = nil
            return
        }
        var reader = PartitionState.Reader(bytes: value)
        self.slots[user] = TransitionSlot(at: Int64(bitPattern: try reader.varint()), isDirty: false)
    }

    /// Builds the queue from the timers restored.
    mutating func finishRestore() {
        self.queue.removeAll()
        for (user, slot) in self.slots {
            guard slot.at != .max else {
                self.slots[user] = nil
                continue
            }
            self.queue.set(user, at: slot.at)
        }
        self.commit()
    }

    mutating func commit() {
        for user in self.marked { self.settle(user: user) }
        self.marked.removeAll(keepingCapacity: true)
        self.undo.removeAll(keepingCapacity: true)
        self.queue.commit()
    }

    mutating func rollBack() {
        for (user, slot) in self.undo.reversed() { self.slots[user] = slot }
        self.queue.rollBack()
        self.undo.removeAll(keepingCapacity: true)
        self.marked.removeAll(keepingCapacity: true)
    }

    mutating func forget(user: UInt32) {
        self.slots[user] = nil
        self.queue.set(user, at: nil)
    }

    /// A pending transition keeps the user.
    func keeps(user: UInt32) -> Bool {
        (self.slots[user]?.at ?? .max) != .max
    }

    var markedUsers: [UInt32] {
        self.slots.filter(\.value.isDirty).map(\.key)
    }

    var violations: [String] {
        var found = self.queue.violations()
        for timer in self.queue.timers where self.slots[timer.user]?.at != timer.at {
            found.append("user \(timer.user)'s timer at \(timer.at) is not its slot's")
        }
        for (user, slot) in self.slots where slot.at != .max && self.queue.instant(of: user) != slot.at {
            found.append("user \(user)'s timer at \(slot.at) is not in the queue")
        }
        return found
    }
}

extension PartitionState {
    /// Users with a transition watched: the partition's pending timers.
    public var pendingTransitions: Int { self.userRecords.timers.queue.count }

    /// The earliest pending transition (Unix ms), if any.
    public func nextTransitionAt() -> Int64? {
        self.userRecords.timers.queue.first?.at
    }

    /// Watches the user's next Focus transition at `instant` (`nil`: none), as part of the state:
    /// committed with the outputs, restored with the partition, rolled back with an abort.
    mutating func watchTransition(user: UInt32, at instant: Int64?) {
        if self.userRecords.timers.watch(user: user, at: instant) {
            self.changes.append(.userRecord(kind: FocusTimers.recordKind, user: user))
        }
    }

    /// ``watchTransition(user:at:)`` by user id; does nothing for a user the partition does not hold.
    public mutating func watchTransition(userID: String, at instant: Int64?) {
        guard let user = self.userNumber(userID) else { return }
        self.watchTransition(user: user, at: instant)
    }

    /// The users whose transition is due at `now`, earliest first, at most `limit`, each with
    /// the instant it was due; their timers are cleared (``recompute(userID:context:nowMilliseconds:timerAt:)``
    /// watches the next one).
    public mutating func dueTransitions(atMilliseconds now: Int64, limit: Int) -> [(userID: String, at: Int64)] {
        var due: [(userID: String, at: Int64)] = []
        while due.count < limit, let timer = self.userRecords.timers.queue.first, timer.at <= now {
            due.append((self.userIDByNumber[Int(timer.user)], timer.at))
            self.watchTransition(user: timer.user, at: nil)
        }
        return due
    }
}
