// MARK: - Focus status: what focus.status last said of each user (docs/contract.md, Focus status)

/// What `focus.status` last said of a user: kept only for users who have been focused, so that a
/// change is published once, and a restart or partition move neither repeats nor loses one.
struct StatusSlot {
    var focused: Bool
    /// `Int64.max`: not known.
    var until: Int64
    var sequence: UInt64
    /// Changed since the last write and listed in the changes once.
    var isDirty: Bool
}

/// What `focus.status` last said of each user who has been focused, and the status changes of
/// the current commit interval. Its changelog record is the user's `F`: flags (1: focused,
/// 2: until known), until (varint, Unix ms, when known), sequence (varint).
struct FocusStatuses: UserRecordComponent {
    static let recordKind = UInt8(ascii: "F")
    static let name = "status"

    private(set) var slots: [UInt32: StatusSlot] = [:]
    /// Status changes since the last commit, the latest per user, to publish with it.
    private(set) var pendingUpdates: [FocusStatusUpdate] = []
    private var pendingIndex: [UInt32: Int] = [:]
    /// Each change's before-image since the commit, in order.
    private var undo: [(user: UInt32, slot: StatusSlot?)] = []
    /// Users whose record was marked since the commit.
    private var marked: [UInt32] = []

    /// Records the user's status under `context` at `nowMilliseconds` when it differs from what
    /// was last published (focused, or until when), and queues the update. Returns whether the
    /// user's record was marked by it (the caller lists the change).
    mutating func note(
        user: UInt32, userID: String, context: CompiledFocusContext?, nowMilliseconds: Int64
    ) -> Bool {
        let status =
            context?.status(at: nowMilliseconds) ?? FocusStatus(focused: false, until: nil, contextVersion: nil)
        // A user never focused has nothing to say, and needs no lookup while no one was.
        guard status.focused || !self.slots.isEmpty else { return false }
        let slot = self.slots[user]
        let until = status.until ?? .max
        if let slot {
            guard slot.focused != status.focused || slot.until != until else { return false }
        } else if !status.focused {
            return false
        }
        self.undo.append((user, slot))
        let sequence = (slot?.sequence ?? 0) + 1
        self.slots[user] = StatusSlot(focused: status.focused, until: until, sequence: sequence, isDirty: true)
        let update = FocusStatusUpdate(
            userID: userID, status: status, sequence: sequence, updatedAtMilliseconds: nowMilliseconds)
        if let pending = self.pendingIndex[user] {
            self.pendingUpdates[pending] = update
        } else {
            self.pendingIndex[user] = self.pendingUpdates.count
            self.pendingUpdates.append(update)
        }
        guard slot?.isDirty != true else { return false }
        self.marked.append(user)
        return true
    }

    // MARK: The component

    mutating func writeRecord<E: Error>(
        user: UInt32, userID: String, key: inout [UInt8], value: inout [UInt8],
        _ write: (_ key: [UInt8], _ value: [UInt8]?) throws(E) -> Void
    ) throws(E) {
        guard let slot = self.slots[user], slot.isDirty else { return }
        self.slots[user]?.isDirty = false
        Self.appendKey(kind: Self.recordKind, userID: userID, to: &key)
        value.append((slot.focused ? 1 : 0) | (slot.until == .max ? 0 : 2))
        if slot.until != .max { PartitionState.writeVarint(UInt64(bitPattern: slot.until), to: &value) }
        PartitionState.writeVarint(slot.sequence, to: &value)
        try write(key, value)
    }

    mutating func restore(user: UInt32, kind: UInt8, value: UnsafeRawBufferPointer?) throws(StateFormatError) {
        guard let value else {
            self.slots[user] = nil
            return
        }
        var reader = PartitionState.Reader(bytes: value)
        let flags = try reader.byte()
        let until = flags & 2 != 0 ? Int64(bitPattern: try reader.varint()) : .max
        self.slots[user] = StatusSlot(
            focused: flags & 1 != 0, until: until, sequence: try reader.varint(), isDirty: false)
    }

    /// Also ends the interval's updates: a commit published them.
    mutating func commit() {
        for user in self.marked { self.slots[user]?.isDirty = false }
        self.marked.removeAll(keepingCapacity: true)
        self.undo.removeAll(keepingCapacity: true)
        self.clearPending()
    }

    mutating func rollBack() {
        for (user, slot) in self.undo.reversed() { self.slots[user] = slot }
        self.undo.removeAll(keepingCapacity: true)
        self.marked.removeAll(keepingCapacity: true)
        self.clearPending()
    }

    private mutating func clearPending() {
        self.pendingUpdates.removeAll(keepingCapacity: true)
        self.pendingIndex.removeAll(keepingCapacity: true)
    }

    mutating func forget(user: UInt32) {
        self.slots[user] = nil
    }

    /// A user shown as focused is kept: its status must still be published as it changes.
    func keeps(user: UInt32) -> Bool {
        self.slots[user]?.focused == true
    }

    var markedUsers: [UInt32] {
        self.slots.filter(\.value.isDirty).map(\.key)
    }

    var violations: [String] {
        self.pendingIndex.compactMap { user, index in
            index < self.pendingUpdates.count ? nil : "user \(user)'s pending update \(index) is past the updates"
        }
    }
}

extension PartitionState {
    /// Status changes since the last commit, the latest per user, to publish with it.
    public var pendingStatusUpdates: [FocusStatusUpdate] { self.userRecords.statuses.pendingUpdates }

    /// The status last published for `userID`, if the user was ever focused.
    public func publishedStatus(userID: String) -> (focused: Bool, until: Int64?, sequence: UInt64)? {
        guard let user = self.userNumber(userID), let slot = self.userRecords.statuses.slots[user] else { return nil }
        return (slot.focused, slot.until == .max ? nil : slot.until, slot.sequence)
    }

    /// Notes the user's status under `context` (``FocusStatuses/note(user:userID:context:nowMilliseconds:)``).
    mutating func noteStatus(user: UInt32, context: CompiledFocusContext?, nowMilliseconds: Int64) {
        if self.userRecords.statuses.note(
            user: user, userID: self.userIDByNumber[Int(user)], context: context, nowMilliseconds: nowMilliseconds)
        {
            self.changes.append(.userRecord(kind: FocusStatuses.recordKind, user: user))
        }
    }
}
