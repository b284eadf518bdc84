/// The per-user state a gateway worker keeps for one input partition: badges (``BadgeLedger``)
/// and the dedupe window of each user, with the changes since the last commit.
///
/// The state changes only through ``admit(_:context:nowMilliseconds:)`` and
/// ``recompute(userID:context:nowMilliseconds:)``. The first change of a user after a commit saves
/// the user's previous state, so that an aborted transaction can be rolled back exactly
/// (``rollback()``), and marks the user for the changelog (``changedUsers``).
///
/// Not `Sendable` by use: the worker that owns the partition owns its state.
public struct PartitionState {
    /// Unread notifications kept per (user, app).
    public var maxUnreadPerApp: Int { self.ledger.maxUnreadPerApp }
    /// Notification ids remembered per user for dedupe.
    public let dedupeWindow: Int
    var ledger: BadgeLedger
    var windows: [String: DedupeWindow] = [:]
    /// Each changed user's state as of the last commit (`nil` parts: absent then).
    private var saved: [String: Snapshot] = [:]

    private struct Snapshot {
        var badges: BadgeLedger.UserBadges?
        var window: DedupeWindow?
    }

    /// Creates an empty state.
    ///
    /// - Parameters:
    ///   - maxUnreadPerApp: `badges.maxUnreadPerApp`.
    ///   - dedupeWindow: `dedupe.windowPerUser`: notification ids remembered per user.
    public init(maxUnreadPerApp: Int = 1000, dedupeWindow: Int = 1000) {
        self.ledger = BadgeLedger(maxUnreadPerApp: maxUnreadPerApp)
        self.dedupeWindow = dedupeWindow
    }

    /// Users with any state.
    public var userCount: Int { self.windows.count }

    /// The users with state here.
    public var userIDs: [String] {
        Array(Set(self.windows.keys).union(self.ledger.users.keys))
    }

    /// Whether the user has state here.
    public func contains(userID: String) -> Bool {
        self.windows[userID] != nil || self.ledger.users[userID] != nil
    }

    // MARK: - Events

    /// What admitting an event did.
    public enum Admission: Sendable, Hashable {
        /// A notification whose id is in the user's dedupe window: nothing changed, nothing to publish.
        case duplicate
        /// The event was applied; the badge changed when an update is given.
        case applied(BadgeUpdate?)
    }

    /// Applies a decided notification (recorded as unread), a `read` or a `clear`.
    ///
    /// - Parameters:
    ///   - event: The event.
    ///   - context: The user's context, for the badge (`nil`: no Focus).
    ///   - nowMilliseconds: The decision time.
    public mutating func admit(_ event: NotificationEvent, context: CompiledFocusContext?, nowMilliseconds: Int64)
        -> Admission
    {
        switch event.kind {
        case .notification:
            if self.windows[event.userID]?.contains(event.id) == true { return .duplicate }
            self.save(event.userID)
            self.windows[event.userID, default: DedupeWindow(capacity: self.dedupeWindow)].insert(event.id)
            let outcome = self.ledger.recordNotification(
                userID: event.userID, appID: event.appID, id: event.id, criteria: event.filterCriteria,
                context: context, nowMilliseconds: nowMilliseconds
            )
            switch outcome {
            case .added(let update): return .applied(update)
            // Still unread, though the window had forgotten it: a duplicate all the same.
            case .duplicate: return .duplicate
            }
        case .read:
            guard self.ledger.users[event.userID]?.apps[event.appID] != nil else { return .applied(nil) }
            self.save(event.userID)
            return .applied(
                self.ledger.markRead(
                    userID: event.userID, appID: event.appID, ids: event.notificationIDs, context: context,
                    nowMilliseconds: nowMilliseconds
                ))
        case .clear:
            guard self.ledger.users[event.userID]?.apps[event.appID] != nil else { return .applied(nil) }
            self.save(event.userID)
            return .applied(
                self.ledger.clear(
                    userID: event.userID, appID: event.appID, context: context, nowMilliseconds: nowMilliseconds))
        }
    }

    /// Recomputes the user's badges under a changed or expired context; returns the changed ones.
    public mutating func recompute(userID: String, context: CompiledFocusContext?, nowMilliseconds: Int64)
        -> [BadgeUpdate]
    {
        guard self.ledger.users[userID] != nil else { return [] }
        self.save(userID)
        return self.ledger.recompute(userID: userID, context: context, nowMilliseconds: nowMilliseconds)
    }

    /// The user's badges.
    public func badges(userID: String) -> [BadgeLedger.Badge] {
        self.ledger.badges(userID: userID)
    }

    // MARK: - Transactions

    /// Whether any user changed since the last ``commit()`` or ``rollback()``.
    public var hasChanges: Bool {
        !self.saved.isEmpty
    }

    /// Users changed since the last ``commit()`` or ``rollback()``, for the changelog.
    public var changedUsers: [String] {
        Array(self.saved.keys)
    }

    /// Forgets the saved states: the changes are committed.
    public mutating func commit() {
        self.saved.removeAll(keepingCapacity: true)
    }

    /// Puts every changed user back as of the last commit.
    public mutating func rollback() {
        for (userID, snapshot) in self.saved {
            self.ledger.users[userID] = snapshot.badges
            self.windows[userID] = snapshot.window
        }
        self.saved.removeAll(keepingCapacity: true)
    }

    private mutating func save(_ userID: String) {
        guard self.saved[userID] == nil else { return }
        self.saved[userID] = Snapshot(badges: self.ledger.users[userID], window: self.windows[userID])
    }
}
