// MARK: - Users, apps, entries and their lists

extension PartitionState {
    /// The user's number, interning the user when new (in a number the retention freed, if any).
    /// `hash` is the id's ``IdentifierIndex/hash(_:)`` when the caller has it.
    mutating func internUser(_ userID: String, hash: UInt64? = nil) -> UInt32 {
        let hash = hash ?? IdentifierIndex.hash(userID)
        if let user = self.userNumber(userID, hash: hash) { return user }
        if let user = self.freeUsers.take() {
            self.modifyUser(user) { $0 = UserSlot() }
            self.userIDByNumber.replace(user, with: userID)
            self.userIndex.insert(user, hash: hash)
            return user
        }
        let user = UInt32(self.users.count)
        self.users.append(UserSlot())
        self.userIDByNumber.append(userID)
        self.userIndex.insert(user, hash: hash)
        return user
    }

    /// The user's number when the user has state here; `hash` as for ``internUser(_:hash:)``.
    func userNumber(_ userID: String, hash: UInt64? = nil) -> UInt32? {
        self.userIndex.find(userID, hash: hash ?? IdentifierIndex.hash(userID)) { self.userIDByNumber[Int($0)] }
    }

    func findApp(user: UInt32, appID: String) -> UInt32? {
        let tag = Self.appTag(appID)
        var apps = AppList.walk(self.users[Int(user)])
        while let app = apps.next(in: self.apps) {
            if self.apps[Int(app)].appTag == tag && UserID.sameBytes(self.appIDBySlot[Int(app)], appID) { return app }
        }
        return nil
    }

    /// The stable hash of an app id: 64-bit FNV-1a of its UTF-8 bytes, never `0` (a user's own
    /// rate window, ``RateWindow/appHash``).
    static func appHash(_ appID: String) -> UInt64 {
        let hash = StableHash.fnv1a(appID, basis: 0x9ae1_6a3b_2f90_404f)
        return hash == 0 ? 1 : hash
    }

    /// 16 bits of the app id's hash (``appHash(_:)``), kept in its slot (``AppSlot/appTag``).
    static func appTag(_ appID: String) -> UInt16 {
        UInt16(truncatingIfNeeded: Self.appHash(appID) >> 48)
    }

    func findApp(user: UInt32, ordinal: UInt32) -> UInt32? {
        var apps = AppList.walk(self.users[Int(user)])
        while let app = apps.next(in: self.apps) {
            if self.apps[Int(app)].ordinal == ordinal { return app }
        }
        return nil
    }

    /// The slot of the user's app `ordinal`: `at` when that slot still holds it (a change's
    /// record of where the app was), else found along the user's apps; `nil` when it is gone.
    /// Spares the commit a walk of the user's apps (a cache miss per app) for each app it writes.
    func app(user: UInt32, ordinal: UInt32, at slot: UInt32) -> UInt32? {
        if Int(slot) < self.apps.count {
            let app = self.apps[Int(slot)]
            if app.has(AppSlot.alive) && app.user == user && app.ordinal == ordinal { return slot }
        }
        return self.findApp(user: user, ordinal: ordinal)
    }

    /// A new (user, app) slot at the front of the user's apps.
    mutating func makeApp(user: UInt32, appID: String, ordinal: UInt32? = nil) -> UInt32 {
        let ordinal = ordinal ?? self.users[Int(user)].nextOrdinal
        let appID = self.sharedAppID(appID)
        var slot = AppSlot(user: user, ordinal: ordinal, appTag: Self.appTag(appID))
        AppList.prepare(&slot, toPrecede: self.users[Int(user)])
        let released =
            self.releasedPending.isEmpty
            ? nil : self.releasedPending.removeValue(forKey: ReleasedApp(user: user, appID: appID))
        let app: UInt32
        if self.freeApp != StateIndex.none {
            app = self.freeApp
            self.freeApp = self.apps[Int(app)].nextApp
            self.modifyApp(app) { $0 = slot }
            self.appIDBySlot.replace(app, with: appID)
        } else {
            app = UInt32(self.apps.count)
            self.apps.append(slot)
            self.appIDBySlot.append(appID)
        }
        AppList.push(app, to: user, owners: &self.users) { $0.nextOrdinal = max($0.nextOrdinal, ordinal + 1) }
        if let released {
            // Freed since the commit with an update pending: this one replaces it.
            self.apps[Int(app)].pending = released
            self.pendingSlots.append(app)
        }
        self.markName(app)
        return app
    }

    /// The shared copy of an app id (the first 10,000 distinct ones are shared; app ids are bundle
    /// ids, a handful per deployment).
    mutating func sharedAppID(_ appID: String) -> String {
        if let shared = self.appIDCopies[appID] { return shared }
        if self.appIDCopies.count < 10_000 { self.appIDCopies[appID] = appID }
        return appID
    }

    /// Unlinks an empty app slot from its user and frees it.
    mutating func releaseApp(_ app: UInt32) {
        let slot = self.apps[Int(app)]
        AppList.unlink(app, removed: slot, from: slot.user, nodes: &self.apps, owners: &self.users)
        if !slot.has(AppSlot.dirtyName) {
            self.changes.append(.appName(user: slot.user, ordinal: slot.ordinal, at: app))
        }
        if !slot.has(AppSlot.dirtyCounts) {
            self.changes.append(.appCounts(user: slot.user, ordinal: slot.ordinal, at: app))
        }
        if slot.pending != StateIndex.none {
            self.releasedPending[ReleasedApp(user: slot.user, appID: self.appIDBySlot[Int(app)])] = slot.pending
        }
        let freeApp = self.freeApp
        self.modifyApp(app) { freed in
            freed.flags = 0
            freed.nextApp = freeApp
            freed.pending = StateIndex.none
        }
        self.freeApp = app
    }

    /// Adds a new notification: indexed, newest in the user's window and its app's unread list.
    /// Then the window and the unread list are trimmed to their bounds (`context`: the one the
    /// app was just counted under).
    mutating func addEntry(
        _ new: StateEntry, decision: DecisionRecord, context: CompiledFocusContext?, nowMilliseconds: Int64
    ) {
        var new = new
        let user = new.user
        let app = new.app
        new.arrival = self.users[Int(user)].nextArrival
        new.flags |= StateEntry.dirty
        new.windowNext = StateIndex.none
        UnreadList.prepare(&new, toFollow: self.apps[Int(app)])
        let entry = self.allocateEntry(new, decision: decision)
        self.changes.append(.entry(user: user, idHash: new.idHash, at: entry, id: decision.keyID))

        WindowList.append(entry, to: user, nodes: &self.entries, owners: &self.users) { $0.nextArrival &+= 1 }
        let counted = new.has(StateEntry.counted)
        UnreadList.append(entry, to: app, nodes: &self.entries, owners: &self.apps) { if counted { $0.counted += 1 } }

        if self.users[Int(user)].windowCount > self.dedupeWindow {
            self.leaveWindow(of: user)
        }
        if self.apps[Int(app)].unread > self.maxUnreadPerApp {
            self.removeUnread(self.apps[Int(app)].unreadHead, context: context, nowMilliseconds: nowMilliseconds)
            self.droppedUnread += 1
        }
    }

    /// The oldest entry of the user's window leaves it; it goes when it is not unread either.
    mutating func leaveWindow(of user: UInt32) {
        let entry = WindowList.removeFirst(of: user, nodes: self.entries, owners: &self.users)
        if self.entries[Int(entry)].has(StateEntry.unread) {
            // Still unread: its changelog record does not change (the window is derived from arrival order).
            self.modifyEntry(entry) {
                $0.flags &= ~StateEntry.inWindow; $0.windowNext = StateIndex.none
            }
        } else {
            self.releaseEntry(entry)
        }
    }

    /// Marks an unread entry read: out of its app's list and badge count; it goes when it is not
    /// in the window either. `context` is the one the app was just counted under
    /// (``recount(_:context:nowMilliseconds:)``): a restored entry is counted or not under it.
    mutating func removeUnread(_ entry: UInt32, context: CompiledFocusContext?, nowMilliseconds: Int64) {
        var removed = self.entries[Int(entry)]
        let app = removed.app
        if removed.has(StateEntry.countUnknown) {
            // Under an app that will be recounted (a restore dropping unread), it counts nowhere yet.
            removed.setCounted(
                self.apps[Int(app)].countedFocus != 0
                    && self.counts(removed, app: app, context: context, nowMilliseconds: nowMilliseconds))
        }
        let wasNewest = self.apps[Int(app)].unreadTail == entry
        let counted = removed.has(StateEntry.counted)
        UnreadList.unlink(entry, removed: removed, from: app, nodes: &self.entries, owners: &self.apps) {
            if counted { $0.counted -= 1 }
        }
        // Its record carried the app's counts (see `writeChanges`): they are written anew.
        if wasNewest && self.apps[Int(app)].sequence > 0 { self.markCounts(app) }
        if removed.has(StateEntry.inWindow) {
            self.modifyEntry(entry) { entry in
                entry.flags &= ~(StateEntry.unread | StateEntry.counted | StateEntry.countUnknown)
                entry.app = StateIndex.none
                entry.unreadPrev = StateIndex.none
                entry.unreadNext = StateIndex.none
            }
            self.markEntry(entry)
        } else {
            self.releaseEntry(entry)
        }
    }

    // MARK: - Badges

    /// Recounts the app's badge when the context (version, Focus on or off, which Focus a
    /// schedule turned on) differs from the one it was counted with; otherwise the kept count stands.
    ///
    /// What it was counted with is written with the app's counts (marked changed here when the
    /// app published), so that a restored app under an unchanged context is not recounted; its
    /// restored entries' flags are then worked out one at a time, when one leaves the unread list
    /// (``removeUnread(_:context:nowMilliseconds:)``).
    mutating func recount(_ app: UInt32, context: CompiledFocusContext?, nowMilliseconds: Int64) {
        let version = context?.version ?? .min
        let focus: UInt8 =
            context?.isFocusOn(atMilliseconds: nowMilliseconds) == true ? 2 + context!.focusOrdinal : 1
        let slot = self.apps[Int(app)]
        guard slot.countedVersion != version || slot.countedFocus != focus else { return }
        var counted: UInt32 = 0
        var entry = slot.unreadHead
        while entry != StateIndex.none {
            let current = self.entries[Int(entry)]
            let counts = self.counts(current, app: app, context: context, nowMilliseconds: nowMilliseconds)
            if counts != current.has(StateEntry.counted) || current.has(StateEntry.countUnknown) {
                self.modifyEntry(entry) { $0.setCounted(counts) }
            }
            if counts { counted += 1 }
            self.recountedEntries += 1
            entry = current.unreadNext
        }
        self.modifyApp(app) { slot in
            slot.counted = counted
            slot.countedVersion = version
            slot.countedFocus = focus
        }
        if slot.sequence > 0 { self.markCounts(app) }
    }

    /// Whether an unread entry of `app` counts in its badge under `context`.
    private func counts(
        _ entry: StateEntry, app: UInt32, context: CompiledFocusContext?, nowMilliseconds: Int64
    ) -> Bool {
        let attributes = self.attributes[entry.attributes]
        return FocusDecider.countsInBadge(
            appID: self.appIDBySlot[Int(app)], criteria: attributes.criteria, senderID: attributes.sender,
            context: context, nowMilliseconds: nowMilliseconds)
    }

    /// Publishes the app's counted badge when it differs from the last published one; frees an
    /// app left with nothing.
    mutating func publish(_ app: UInt32, context: CompiledFocusContext?, nowMilliseconds: Int64) -> BadgeUpdate? {
        let slot = self.apps[Int(app)]
        guard slot.counted != slot.badge else {
            if slot.isEmpty { self.releaseApp(app) }
            return nil
        }
        self.markCounts(app)
        let focusOn = context?.isFocusOn(atMilliseconds: nowMilliseconds) ?? false
        let update = BadgeUpdate(
            userID: self.userIDByNumber[Int(slot.user)], appID: self.appIDBySlot[Int(app)], badge: Int(slot.counted),
            unread: Int(slot.unread), focus: focusOn ? context?.focus : nil, contextVersion: context?.version,
            sequence: slot.sequence + 1, updatedAtMilliseconds: nowMilliseconds)
        var pending = slot.pending
        if pending == StateIndex.none {
            pending = UInt32(self.pendingBadgeUpdates.count)
            self.pendingBadgeUpdates.append(update)
            self.pendingSlots.append(app)
        } else {
            self.pendingBadgeUpdates[Int(pending)] = update
        }
        self.modifyApp(app) { slot in
            slot.badge = slot.counted
            slot.sequence += 1
            slot.pending = pending
        }
        return update
    }

    // MARK: - Entries and the entry table

    @inline(__always)
    func findEntry(user: UInt32, idHash: UInt64) -> UInt32? {
        self.table.find(user: user, idHash: idHash, in: self.entries.elements)
    }

    /// Stores a new entry (reusing a free one) and indexes it.
    private mutating func allocateEntry(_ new: StateEntry, decision: DecisionRecord) -> UInt32 {
        let entry: UInt32
        if self.freeEntry != StateIndex.none {
            entry = self.freeEntry
            self.freeEntry = self.entries[Int(entry)].windowNext
            self.modifyEntry(entry) { $0 = new }
            self.decisions.replace(entry, with: decision)
        } else {
            entry = UInt32(self.entries.count)
            self.entries.append(new)
            self.decisions.append(decision)
        }
        self.indexEntry(entry)
        self.liveEntries += 1
        return entry
    }

    /// Unindexes and frees an entry; its changelog key becomes a tombstone.
    mutating func releaseEntry(_ entry: UInt32) {
        let released = self.entries[Int(entry)]
        self.unindex(entry)
        if !released.has(StateEntry.dirty) {
            self.changes.append(
                .entry(user: released.user, idHash: released.idHash, at: entry, id: self.decisions[Int(entry)].keyID))
        }
        let freeEntry = self.freeEntry
        self.modifyEntry(entry) { freed in
            freed = .free
            freed.windowNext = freeEntry
        }
        self.freeEntry = entry
        self.liveEntries -= 1
    }

    /// Adds an alive entry to the table (its key is not there yet).
    mutating func indexEntry(_ entry: UInt32) {
        self.table.insert(entry, in: self.entries.elements)
    }

    /// Removes an alive entry's key from the table.
    mutating func unindex(_ entry: UInt32) {
        guard self.entries[Int(entry)].has(StateEntry.alive) else { return }
        self.table.remove(entry, in: self.entries.elements)
    }

    // MARK: - Change marks and before-images

    mutating func markEntry(_ entry: UInt32) {
        guard !self.entries[Int(entry)].has(StateEntry.dirty) else { return }
        self.entries[Int(entry)].flags |= StateEntry.dirty
        self.changes.append(
            .entry(
                user: self.entries[Int(entry)].user, idHash: self.entries[Int(entry)].idHash, at: entry,
                id: self.decisions[Int(entry)].keyID))
    }

    private mutating func markName(_ app: UInt32) {
        guard !self.apps[Int(app)].has(AppSlot.dirtyName) else { return }
        self.apps[Int(app)].flags |= AppSlot.dirtyName
        self.changes.append(.appName(user: self.apps[Int(app)].user, ordinal: self.apps[Int(app)].ordinal, at: app))
    }

    private mutating func markCounts(_ app: UInt32) {
        guard !self.apps[Int(app)].has(AppSlot.dirtyCounts) else { return }
        self.apps[Int(app)].flags |= AppSlot.dirtyCounts
        self.changes.append(
            .appCounts(user: self.apps[Int(app)].user, ordinal: self.apps[Int(app)].ordinal, at: app))
    }

    /// Changes an entry, keeping its before-image when it existed at the commit.
    @inline(__always)
    mutating func modifyEntry(_ entry: UInt32, _ body: (inout StateEntry) -> Void) {
        self.entries.modify(entry, body)
    }

    @inline(__always)
    mutating func modifyApp(_ app: UInt32, _ body: (inout AppSlot) -> Void) {
        self.apps.modify(app, body)
    }

    @inline(__always)
    mutating func modifyUser(_ user: UInt32, _ body: (inout UserSlot) -> Void) {
        self.users.modify(user, body)
    }

    // MARK: - Attribute collection

    /// Rebuilds the attribute pool from the entries that still use it (right after a commit, when
    /// no before-image holds an old number).
    mutating func collectAttributes() {
        var used = [Bool](repeating: false, count: self.attributes.count + 1)
        for entry in self.entries where entry.has(StateEntry.alive) { used[Int(entry.attributes)] = true }
        let renumbered = self.attributes.collect(keeping: used)
        for index in self.entries.indices where self.entries[index].has(StateEntry.alive) {
            self.entries[index].attributes = renumbered[Int(self.entries[index].attributes)]
        }
    }
}
