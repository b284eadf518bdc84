// MARK: - Retention: what the state forgets (docs/state.md, Retention)

extension PartitionState {
    /// Looks at up to `limit` users from where the last call stopped (wrapping around) and
    /// returns those with something to forget before `cutoff` (Unix ms): a remembered or unread
    /// notification decided then or earlier, an app with nothing unread once the user's window is
    /// empty, or nothing left at all. A sweep in steps: each call costs at most `limit` looks,
    /// whatever the state's size. The caller passes each user's context to
    /// ``expire(userID:context:nowMilliseconds:before:)``.
    public mutating func usersToExpire(before cutoff: Int64, examining limit: Int) -> [String] {
        var found: [String] = []
        for _ in 0..<min(limit, self.users.count) {
            if self.sweepCursor >= self.users.count { self.sweepCursor = 0 }
            let user = UInt32(self.sweepCursor)
            self.sweepCursor += 1
            if self.hasSomethingToForget(user: user, before: cutoff) { found.append(self.userIDByNumber[Int(user)]) }
        }
        return found
    }

    private func hasSomethingToForget(user: UInt32, before cutoff: Int64) -> Bool {
        let slot = self.users[Int(user)]
        guard !slot.isFree, !self.departingUsers.contains(user) else { return false }
        if slot.windowHead != StateIndex.none {
            if self.entries[Int(slot.windowHead)].decidedAt <= cutoff { return true }
        } else if self.hasNothing(user: user) {
            return true
        }
        var apps = AppList.walk(slot)
        while let app = apps.next(in: self.apps) {
            let head = self.apps[Int(app)].unreadHead
            if head == StateIndex.none {
                if slot.windowHead == StateIndex.none { return true }
            } else if self.entries[Int(head)].decidedAt <= cutoff {
                return true
            }
        }
        return false
    }

    /// Forgets what the user was sent before `cutoff` (Unix ms, by decided-at): the notifications
    /// remembered for dedupe and those still unread. An app left with nothing unread goes once the
    /// user's window is empty too (the user sent nothing since `cutoff`); its badge falls to 0
    /// first where it was not, published like any badge change. A user left with nothing (no
    /// notification, no app, no pending Focus transition, not shown as focused) is forgotten: its
    /// changelog keys get tombstones and the commit frees its number. Returns the badges that changed.
    ///
    /// - Parameter context: The user's context, as for ``recompute(userID:context:nowMilliseconds:timerAt:)``.
    public mutating func expire(
        userID: String, context: CompiledFocusContext?, nowMilliseconds: Int64, before cutoff: Int64
    ) -> [BadgeUpdate] {
        guard let user = self.userNumber(userID) else { return [] }
        let context = context?.inForce(atMilliseconds: nowMilliseconds)
        // The apps whose unread lists change, each counted under `context` before its first change.
        var touched: [UInt32] = []
        func prepare(_ state: inout PartitionState, _ app: UInt32) {
            guard !touched.contains(app) else { return }
            state.recount(app, context: context, nowMilliseconds: nowMilliseconds)
            touched.append(app)
        }
        // The window, oldest first; an unread one leaves its app's list too.
        while case let head = self.users[Int(user)].windowHead, head != StateIndex.none,
            self.entries[Int(head)].decidedAt <= cutoff
        {
            if self.entries[Int(head)].has(StateEntry.unread) {
                prepare(&self, self.entries[Int(head)].app)
                self.removeUnread(head, context: context, nowMilliseconds: nowMilliseconds)
            }
            self.leaveWindow(of: user)
            self.forgottenEntries += 1
        }
        // Unread ones that left the window earlier, oldest first in each app.
        var apps = AppList.walk(self.users[Int(user)])
        while let app = apps.next(in: self.apps) {
            while case let head = self.apps[Int(app)].unreadHead, head != StateIndex.none,
                self.entries[Int(head)].decidedAt <= cutoff
            {
                prepare(&self, app)
                self.removeUnread(head, context: context, nowMilliseconds: nowMilliseconds)
                self.forgottenEntries += 1
            }
        }
        // With the window empty, apps with nothing unread go too. By app id, as a recompute
        // publishes, so that the updates come out in the same order whatever the apps' history.
        let windowEmpty = self.users[Int(user)].windowHead == StateIndex.none
        if windowEmpty {
            var apps = AppList.walk(self.users[Int(user)])
            while let app = apps.next(in: self.apps) {
                if self.apps[Int(app)].unread == 0 && !touched.contains(app) { touched.append(app) }
            }
        }
        touched.sort { self.appIDBySlot[Int($0)] < self.appIDBySlot[Int($1)] }
        var updates: [BadgeUpdate] = []
        for app in touched {
            // Nothing unread counts nothing: a badge still shown falls to 0 before the app goes.
            if let update = self.publish(app, context: context, nowMilliseconds: nowMilliseconds) {
                updates.append(update)
            }
            // `publish` frees an app that never published.
            if windowEmpty && self.apps[Int(app)].has(AppSlot.alive) && self.apps[Int(app)].unread == 0 {
                self.releaseApp(app)
            }
        }
        if self.hasNothing(user: user) && self.departingUsers.insert(user).inserted {
            self.changes.append(.userGone(user: user))
        }
        return updates
    }

    /// The user has nothing the state must keep: no remembered notification, no app, no
    /// pending Focus transition, and is not shown as focused.
    func hasNothing(user: UInt32) -> Bool {
        let slot = self.users[Int(user)]
        return slot.windowHead == StateIndex.none && slot.firstApp == StateIndex.none
            && !self.userRecords.keeps(user: user)
    }

    /// Frees the numbers of the users ``expire(userID:context:nowMilliseconds:before:)`` left
    /// with nothing and that still have nothing, with their sender rings and rate windows: at a
    /// commit (what a rollback returns to), so nothing here needs a before-image.
    mutating func freeDepartedUsers() {
        for user in self.departingUsers.sorted() where self.hasNothing(user: user) {
            self.freeUser(user)
            self.forgottenUsers += 1
        }
        self.departingUsers.removeAll()
    }

    /// Frees a user with nothing left: its number, and what the components kept of it, are reused
    /// by later users.
    mutating func freeUser(_ user: UInt32) {
        self.userRecords.forget(user: user)
        self.userIndex.remove(user, hash: IdentifierIndex.hash(self.userIDByNumber[Int(user)]))
        self.userIDByNumber[Int(user)] = ""
        self.users[Int(user)] = .freed
        self.freeUsers.free(user)
    }
}
