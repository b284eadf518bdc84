/// Unread notifications per (user, app) and the badges they make (SPEC §7).
///
/// A notification is unread from the moment it is decided (delivered or silenced) until a `read`
/// or `clear`. The badge counts the unread notifications whose criteria the current context
/// would deliver: everything with no Focus on, nothing with `hideBadges`. An update is produced
/// only when a badge changes, with a sequence number that increases per (user, app).
///
/// Memory is bounded: at most ``maxUnreadPerApp`` unread notifications are kept per (user, app);
/// past that the oldest are dropped (and counted in ``droppedUnread``). Not `Sendable`: one worker
/// owns the ledger of its partitions.
public struct BadgeLedger {
    /// Unread notifications kept per (user, app) (`badges.maxUnreadPerApp`). Default: `1000`.
    public let maxUnreadPerApp: Int
    var users: [String: UserBadges] = [:]
    /// Unread notifications dropped because an app exceeded ``maxUnreadPerApp``.
    public private(set) var droppedUnread = 0

    /// Creates an empty ledger.
    public init(maxUnreadPerApp: Int = 1000) {
        precondition(maxUnreadPerApp > 0, "maxUnreadPerApp must be positive")
        self.maxUnreadPerApp = maxUnreadPerApp
    }

    /// One user's badges.
    struct UserBadges: Equatable {
        var apps: [String: AppBadge] = [:]
    }

    /// One (user, app): its unread notifications, oldest first, and the last published badge.
    struct AppBadge: Equatable {
        var ids: [String] = []
        var criteria: [String?] = []
        /// Whether each unread notification counts, under ``countedUnder``.
        var counts: [Bool] = []
        var countedUnder: CountingKey?
        var badge = 0
        var sequence: UInt64 = 0
    }

    /// What the cached ``AppBadge/counts`` were computed with; a different key means recount.
    struct CountingKey: Equatable {
        var version: Int64?
        var focusOn: Bool
    }

    /// The outcome of recording a notification.
    public enum RecordOutcome: Sendable, Hashable {
        /// Added to the unread; the badge changed when an update is given.
        case added(BadgeUpdate?)
        /// Already unread with this id: nothing changed.
        case duplicate
    }

    // MARK: - Events

    /// Records a decided notification as unread.
    public mutating func recordNotification(
        userID: String, appID: String, id: String, criteria: String?,
        context: CompiledFocusContext?, nowMilliseconds: Int64
    ) -> RecordOutcome {
        let maxUnread = self.maxUnreadPerApp
        var dropped = 0
        let outcome = self.modifyApp(userID: userID, appID: appID) { (app) -> RecordOutcome in
            if app.ids.contains(id) { return .duplicate }
            Self.recount(&app, appID: appID, context: context, nowMilliseconds: nowMilliseconds)
            app.ids.append(id)
            app.criteria.append(criteria)
            app.counts.append(
                FocusDecider.countsInBadge(
                    appID: appID, criteria: criteria, context: context, nowMilliseconds: nowMilliseconds))
            if app.ids.count > maxUnread {
                dropped = app.ids.count - maxUnread
                app.ids.removeFirst(dropped)
                app.criteria.removeFirst(dropped)
                app.counts.removeFirst(dropped)
            }
            return .added(
                Self.publish(&app, userID: userID, appID: appID, context: context, nowMilliseconds: nowMilliseconds))
        }
        self.droppedUnread += dropped
        return outcome
    }

    /// Marks notifications read; unknown ids are ignored.
    public mutating func markRead(
        userID: String, appID: String, ids: [String],
        context: CompiledFocusContext?, nowMilliseconds: Int64
    ) -> BadgeUpdate? {
        guard self.users[userID]?.apps[appID] != nil else { return nil }
        return self.modifyApp(userID: userID, appID: appID) { app in
            let read = Set(ids)
            var index = 0
            while index < app.ids.count {
                if read.contains(app.ids[index]) {
                    app.ids.remove(at: index)
                    app.criteria.remove(at: index)
                    app.counts.remove(at: index)
                } else {
                    index += 1
                }
            }
            Self.recount(&app, appID: appID, context: context, nowMilliseconds: nowMilliseconds)
            return Self.publish(&app, userID: userID, appID: appID, context: context, nowMilliseconds: nowMilliseconds)
        }
    }

    /// Marks all of the app's notifications read.
    public mutating func clear(userID: String, appID: String, context: CompiledFocusContext?, nowMilliseconds: Int64)
        -> BadgeUpdate?
    {
        guard self.users[userID]?.apps[appID] != nil else { return nil }
        return self.modifyApp(userID: userID, appID: appID) { app in
            app.ids.removeAll()
            app.criteria.removeAll()
            app.counts.removeAll()
            return Self.publish(&app, userID: userID, appID: appID, context: context, nowMilliseconds: nowMilliseconds)
        }
    }

    /// Recomputes every badge of a user under a new (or expired, or removed) context; returns the changed ones.
    public mutating func recompute(userID: String, context: CompiledFocusContext?, nowMilliseconds: Int64)
        -> [BadgeUpdate]
    {
        guard let appIDs = self.users[userID]?.apps.keys.sorted() else { return [] }
        var updates: [BadgeUpdate] = []
        for appID in appIDs {
            let update = self.modifyApp(userID: userID, appID: appID) { app in
                Self.recount(&app, appID: appID, context: context, nowMilliseconds: nowMilliseconds)
                return Self.publish(
                    &app, userID: userID, appID: appID, context: context, nowMilliseconds: nowMilliseconds)
            }
            if let update { updates.append(update) }
        }
        return updates
    }

    // MARK: - Reading

    /// A (user, app)'s current badge.
    public struct Badge: Sendable, Hashable {
        public var appID: String
        public var badge: Int
        public var unread: Int
        public var sequence: UInt64

        public init(appID: String, badge: Int, unread: Int, sequence: UInt64) {
            self.appID = appID
            self.badge = badge
            self.unread = unread
            self.sequence = sequence
        }
    }

    /// The user's badges as last published, by app id.
    public func badges(userID: String) -> [Badge] {
        (self.users[userID]?.apps ?? [:]).sorted { $0.key < $1.key }.map { appID, app in
            Badge(appID: appID, badge: app.badge, unread: app.ids.count, sequence: app.sequence)
        }
    }

    /// Forgets a user (their partition moved to another instance).
    public mutating func remove(userID: String) {
        self.users[userID] = nil
    }

    // MARK: - Internals

    /// Runs `body` on the (user, app) in place (created if absent), then forgets an app with
    /// nothing unread and no published badge, and a user with no apps. In place: the arrays of an
    /// app are copied only when a saved snapshot still shares them.
    private mutating func modifyApp<Result>(userID: String, appID: String, _ body: (inout AppBadge) -> Result) -> Result
    {
        let result = body(&self.users[userID, default: UserBadges()].apps[appID, default: AppBadge()])
        if let app = self.users[userID]?.apps[appID], app.ids.isEmpty && app.badge == 0 && app.sequence == 0 {
            self.users[userID]!.apps[appID] = nil
            if self.users[userID]!.apps.isEmpty { self.users[userID] = nil }
        }
        return result
    }

    private static func recount(
        _ app: inout AppBadge, appID: String, context: CompiledFocusContext?, nowMilliseconds: Int64
    ) {
        let key = CountingKey(
            version: context?.version, focusOn: context?.isFocusOn(atMilliseconds: nowMilliseconds) ?? false)
        guard app.countedUnder != key else { return }
        app.countedUnder = key
        for index in app.ids.indices {
            app.counts[index] = FocusDecider.countsInBadge(
                appID: appID, criteria: app.criteria[index], context: context, nowMilliseconds: nowMilliseconds)
        }
    }

    /// Sets the app's badge from its counts; returns an update when the badge changed.
    private static func publish(
        _ app: inout AppBadge, userID: String, appID: String, context: CompiledFocusContext?, nowMilliseconds: Int64
    ) -> BadgeUpdate? {
        var badge = 0
        for counts in app.counts where counts { badge += 1 }
        guard badge != app.badge else { return nil }
        app.badge = badge
        app.sequence += 1
        let focusOn = context?.isFocusOn(atMilliseconds: nowMilliseconds) ?? false
        return BadgeUpdate(
            userID: userID, appID: appID, badge: badge, unread: app.ids.count,
            focus: focusOn ? context?.focus : nil, contextVersion: context?.version,
            sequence: app.sequence, updatedAtMilliseconds: nowMilliseconds
        )
    }
}
