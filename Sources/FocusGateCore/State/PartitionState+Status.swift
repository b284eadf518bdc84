// MARK: - Focus status: what focus.status last said of each user

/// What `focus.status` last said of a user: kept only for users who have been focused, so that a
/// change is published once, and a restart or partition move neither repeats nor loses one.
struct StatusSlot {
    var focused: Bool
    /// `Int64.max`: not known.
    var until: Int64
    var sequence: UInt64
    /// Changed since the commit and listed in the changes once.
    var isDirty: Bool
}

extension PartitionState {
    /// Status changes since the last commit, the latest per user, to publish with it.
    public var pendingStatusUpdates: [FocusStatusUpdate] { self.statusUpdates }

    /// Follows the Focus of `context` for the user: watches its next transition or summary time
    /// (a timer), notes a changed status and sums up what a Focus that has ended silenced. Called wherever a context meets the user: decisions, context
    /// changes, fired timers.
    ///
    /// `timerAt` is the instant of the user's timer when one fired (a transition or a summary
    /// time): the instant summaries are made at, so that a replay makes the same ones.
    mutating func followFocus(
        user: UInt32, context: CompiledFocusContext?, nowMilliseconds: Int64, timerAt: Int64? = nil
    ) {
        self.watchTransition(user: user, at: context?.nextTimer(after: nowMilliseconds))
        self.noteStatus(user: user, context: context, nowMilliseconds: nowMilliseconds)
        self.summarizeSilenced(user: user, context: context, nowMilliseconds: nowMilliseconds, timerAt: timerAt)
        let version = context?.version ?? Self.noContextVersion
        if self.users[Int(user)].followedVersion != version {
            self.modifyUser(user) { $0.followedVersion = version }
        }
    }

    /// ``followFocus(user:context:nowMilliseconds:)`` for a decision: only when the context's
    /// version differs from the one last followed (the record loop's common case is none).
    mutating func followFocusIfChanged(user: UInt32, context: CompiledFocusContext?, nowMilliseconds: Int64) {
        guard self.users[Int(user)].followedVersion != (context?.version ?? Self.noContextVersion) else { return }
        self.followFocus(user: user, context: context, nowMilliseconds: nowMilliseconds)
    }

    /// ``UserSlot/followedVersion`` of a user without a context.
    static let noContextVersion = Int64.min + 1

    /// Records the user's status under `context` at `nowMilliseconds` when it differs from what
    /// was last published (focused, or until when), and queues the update.
    mutating func noteStatus(user: UInt32, context: CompiledFocusContext?, nowMilliseconds: Int64) {
        let status =
            context?.status(at: nowMilliseconds) ?? FocusStatus(focused: false, until: nil, contextVersion: nil)
        // A user never focused has nothing to say, and needs no lookup while no one was.
        guard status.focused || !self.statusSlots.isEmpty else { return }
        let slot = self.statusSlots[user]
        let until = status.until ?? .max
        if let slot {
            guard slot.focused != status.focused || slot.until != until else { return }
        } else if !status.focused {
            return
        }
        if Int(user) < self.users.committedCount { self.undo.append(.status(user, slot)) }
        let sequence = (slot?.sequence ?? 0) + 1
        self.statusSlots[user] = StatusSlot(focused: status.focused, until: until, sequence: sequence, isDirty: true)
        if slot?.isDirty != true { self.changes.append(.status(user: user)) }
        let update = FocusStatusUpdate(
            userID: self.userIDByNumber[Int(user)], status: status, sequence: sequence,
            updatedAtMilliseconds: nowMilliseconds)
        if let pending = self.statusUpdateIndex[user] {
            self.statusUpdates[pending] = update
        } else {
            self.statusUpdateIndex[user] = self.statusUpdates.count
            self.statusUpdates.append(update)
        }
    }

    /// The status last published for `userID`, if the user was ever focused.
    public func publishedStatus(userID: String) -> (focused: Bool, until: Int64?, sequence: UInt64)? {
        guard let user = self.userNumber(userID), let slot = self.statusSlots[user] else { return nil }
        return (slot.focused, slot.until == .max ? nil : slot.until, slot.sequence)
    }

    mutating func clearPendingStatusUpdates() {
        self.statusUpdates.removeAll(keepingCapacity: true)
        self.statusUpdateIndex.removeAll(keepingCapacity: true)
    }

    // MARK: Changelog

    /// The value of a user's `F` record: flags (1: focused, 2: until known), until (varint, Unix
    /// ms, when known), sequence (varint).
    func encodeStatus(_ slot: StatusSlot, to value: inout [UInt8]) {
        value.append((slot.focused ? 1 : 0) | (slot.until == .max ? 0 : 2))
        if slot.until != .max { Self.writeVarint(UInt64(bitPattern: slot.until), to: &value) }
        Self.writeVarint(slot.sequence, to: &value)
    }

    mutating func restoreStatus(user: UInt32, value: UnsafeRawBufferPointer?) throws(StateFormatError) {
        guard let value else {
            self.statusSlots[user] = nil
            return
        }
        var reader = Reader(bytes: value)
        let flags = try reader.byte()
        let until = flags & 2 != 0 ? Int64(bitPattern: try reader.varint()) : .max
        self.statusSlots[user] = StatusSlot(
            focused: flags & 1 != 0, until: until, sequence: try reader.varint(), isDirty: false)
    }
}
