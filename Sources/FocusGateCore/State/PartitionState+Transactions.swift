// MARK: - Transactions: commit and rollback of a partition state

extension PartitionState {

    /// Whether anything changed since the last ``commit()`` or ``rollback()``.
    public var hasChanges: Bool { !self.changes.isEmpty }

    /// Whether anything changed since the last ``writeChanges(asOf:writtenAt:_:)`` (or commit, or
    /// rollback): what a write now would go through.
    public var hasUnwrittenChanges: Bool { !self.changes.unwritten.isEmpty }

    /// The users whose changelog records changed since the last commit.
    public var changedUsers: [String] {
        var seen = Set<UInt32>(minimumCapacity: self.changes.count)
        var users: [String] = []
        for change in self.changes {
            let user: UInt32
            switch change {
            case .entry(let number, _, _, _), .appName(let number, _, _), .appCounts(let number, _, _),
                .userRecord(_, let number),
                .userGone(let number):
                user = number
            }
            if seen.insert(user).inserted { users.append(self.userIDByNumber[Int(user)]) }
        }
        return users
    }

    /// Makes the changes since the last commit the committed state.
    public mutating func commit() {
        // Written changes had their marks cleared already; clear those the caller did not write.
        self.clearMarks(of: self.changes.written)
        self.clearPendingBadgeUpdates()
        if self.attributes.needsCollection { self.collectAttributes() }
        if self.idBytes.count >= 1 << 16 && self.idBytes.count >= 2 * self.idBytesAfterCompaction { self.compactIDs() }
        if !self.departingUsers.isEmpty { self.freeDepartedUsers() }
        self.commitSlots()
    }

    /// Makes the slots as they are the committed ones, and notes what else a rollback returns to.
    mutating func commitSlots() {
        self.entries.commit()
        self.decisions.commit()
        self.apps.commit()
        self.appIDBySlot.commit()
        self.users.commit()
        self.userIDByNumber.commit()
        self.userRecords.commit()
        self.committed = self.commitPoint
    }

    /// Clears the marks of the changes listed from `start` on, and empties the list: what they
    /// changed is taken as written.
    mutating func clearMarks(of start: Int) {
        for change in self.changes[start...] {
            switch change {
            case .entry(_, _, let entry, _):
                self.entries[Int(entry)].flags &= ~StateEntry.dirty
            case .appName(let user, let ordinal, let at), .appCounts(let user, let ordinal, let at):
                if let app = self.app(user: user, ordinal: ordinal, at: at) {
                    self.apps[Int(app)].flags &= ~(AppSlot.dirtyName | AppSlot.dirtyCounts)
                }
            case .userRecord:
                continue  // a component's commit clears its marks
            case .userGone:
                continue
            }
        }
        self.changes.removeAll()
    }

    /// What breaks the invariants of the state's parts (empty when they hold): each kind of slot
    /// with its undo log, the kinds kept side by side (an entry and its decision, an app and its
    /// id, a user and its id) as many and committed together, the attribute pool, the change set
    /// (every marked slot listed) and the lists threaded through the slots. The entry table's are
    /// ``EntryTable/violations(keys:)``.
    var partViolations: [String] {
        var found: [String] = []
        func check<Element>(_ name: String, _ slots: UndoableArray<Element>) {
            found += slots.violations.map { "\(name): \($0)" }
        }
        func pair<A, B>(_ name: String, _ slots: UndoableArray<A>, _ side: UndoableArray<B>) {
            if slots.count != side.count || slots.committedCount != side.committedCount {
                found.append(
                    "\(name): \(slots.count) slots (\(slots.committedCount) committed) beside \(side.count) (\(side.committedCount))"
                )
            }
        }
        check("entries", self.entries)
        check("decisions", self.decisions)
        check("apps", self.apps)
        check("app ids", self.appIDBySlot)
        check("users", self.users)
        check("user ids", self.userIDByNumber)
        pair("entries and decisions", self.entries, self.decisions)
        pair("apps and their ids", self.apps, self.appIDBySlot)
        pair("users and their ids", self.users, self.userIDByNumber)
        found += self.userRecords.violations
        found += self.attributes.violations.map { "attributes: \($0)" }
        found += self.userIndex.violations { user in
            Int(user) < self.userIDByNumber.count ? self.userIDByNumber[Int(user)] : nil
        }.map { "user index: \($0)" }
        for app in 0..<min(self.apps.count, self.appIDBySlot.count) where self.apps[app].has(AppSlot.alive) {
            if self.apps[app].appTag != Self.appTag(self.appIDBySlot[app]) {
                found.append("apps: app \(app)'s tag is not its id's")
            }
        }
        var named = 0
        for user in 0..<self.userIDByNumber.count where !self.userIDByNumber[user].isEmpty {
            named += 1
            if self.userNumber(self.userIDByNumber[user]) != UInt32(user) {
                found.append("user index: user \(user)'s id does not find it")
            }
        }
        if named != self.userIndex.count {
            found.append("user index: \(self.userIndex.count) numbers for \(named) users with an id")
        }
        found += self.markViolations
        found += self.listViolations
        return found
    }

    /// The before-images the slots of entries, apps and users hold: what a rollback now would
    /// write back (for tests of what one change costs).
    var beforeImageCount: Int {
        self.entries.beforeImages.count + self.decisions.beforeImages.count + self.apps.beforeImages.count
            + self.appIDBySlot.beforeImages.count + self.users.beforeImages.count
            + self.userIDByNumber.beforeImages.count
    }

    /// What the state is now, as a rollback would return to it.
    var commitPoint: CommitPoint {
        CommitPoint(
            freeEntry: self.freeEntry, freeApp: self.freeApp, freeUsers: self.freeUsers.count,
            liveEntries: self.liveEntries, droppedUnread: self.droppedUnread, forgottenEntries: self.forgottenEntries,
            idBytes: self.idBytes.count)
    }

    /// Puts everything back as of the last commit, in time proportional to what changed since.
    public mutating func rollback() {
        self.restoreLastUser = StateIndex.none  // it may be a user the rollback removes
        // The table first forgets the entries as they are now, then learns them as they were:
        // only those whose key (or life) a change since the commit made another, since an entry
        // changed in place (its links, its flags) is where the table has it already, and its
        // table slot, untouched since the commit, is likely out of the cache.
        let changedEntries = self.entries.beforeImages.compactMap { slot, image in
            self.entries[Int(slot)].sameKey(as: image) ? nil : slot
        }
        for index in changedEntries { self.unindex(index) }
        for index in self.entries.committedCount..<self.entries.count { self.unindex(UInt32(index)) }
        self.entries.rollBack()
        self.decisions.rollBack()
        self.apps.rollBack()
        self.appIDBySlot.rollBack()
        for user in self.userIDByNumber.committedCount..<self.userIDByNumber.count {
            self.userIndex.remove(UInt32(user), hash: IdentifierIndex.hash(self.userIDByNumber[user]))
        }
        // A number's id as of the commit goes back into the index, once its id now is out of it
        // (an id freed by the retention is "", in the index under no number).
        self.userIDByNumber.rollBack { user, current, committed in
            if !current.isEmpty { self.userIndex.remove(user, hash: IdentifierIndex.hash(current)) }
            if !committed.isEmpty { self.userIndex.insert(user, hash: IdentifierIndex.hash(committed)) }
        }
        self.users.rollBack()
        self.userRecords.rollBack()
        self.idBytes.removeSubrange(self.committed.idBytes...)
        // By each entry as it is again: an entry freed and reused since the commit has several
        // before-images, of different keys, and only the oldest is what it is now.
        for index in changedEntries {
            let entry = self.entries[Int(index)]
            guard entry.has(StateEntry.alive), self.findEntry(user: entry.user, idHash: entry.idHash) == nil
            else { continue }
            self.indexEntry(index)
        }
        self.freeEntry = self.committed.freeEntry
        self.freeApp = self.committed.freeApp
        self.freeUsers.rollBack(to: self.committed.freeUsers)
        self.departingUsers.removeAll()
        self.liveEntries = self.committed.liveEntries
        self.droppedUnread = self.committed.droppedUnread
        self.forgottenEntries = self.committed.forgottenEntries
        self.changes.removeAll()
        self.clearPendingBadgeUpdates()
    }

    mutating func clearPendingBadgeUpdates() {
        self.summaries.removeAll(keepingCapacity: true)
        for app in self.pendingSlots where Int(app) < self.apps.count { self.apps[Int(app)].pending = StateIndex.none }
        self.pendingSlots.removeAll(keepingCapacity: true)
        self.releasedPending.removeAll()
        self.pendingBadgeUpdates.removeAll(keepingCapacity: true)
    }
}
