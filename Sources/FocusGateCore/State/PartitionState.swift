/// The per-user state a gateway worker keeps for one input partition: each user's dedupe window,
/// unread notifications and badges (docs/contract.md, Outputs and Badges), laid out for the record loop.
///
/// - Users are interned once: one hash lookup per record gives an index.
/// - Every remembered notification is one fixed-size ``StateEntry`` (id hash, app, interned
///   criteria, flags, decided-at) in one array, found by (user, id hash) in an open-addressing
///   table of 32-bit indices: dedupe and `read` are constant time, whatever a user's history.
/// - The dedupe window of a user and the unread list of each (user, app) are linked lists
///   through the entries: admitting, reading and dropping the oldest are constant time.
/// - Each (user, app) keeps its badge as a count, updated per change; only a different context
///   (version, or Focus on/off) recounts the app's unread notifications.
/// - Changes since the last commit are the slots' before-images (each kind an ``UndoableArray``,
///   for ``rollback()``) and a list of changed changelog keys, each written once per commit
///   (``writeChanges(_:)``).
///
/// A notification is a duplicate while its id is remembered for the user: in the user's last
/// ``dedupeWindow`` notifications, or still unread. Not `Sendable` by use: the worker that owns
/// the partition owns its state.
public struct PartitionState {
    /// Unread notifications kept per (user, app) (`badges.maxUnreadPerApp`).
    public let maxUnreadPerApp: Int
    /// Notification ids remembered per user for dedupe (`dedupe.windowPerUser`).
    public let dedupeWindow: Int
    /// Notifications a summary names per app (`summaries.maxItemsPerApp`).
    public let summaryItemsPerApp: Int

    // The slots, each kind with its own undo log (``UndoableArray``).
    var entries = UndoableArray<StateEntry>()
    var apps = UndoableArray<AppSlot>()
    var users = UndoableArray<UserSlot>()
    /// By user number and by app slot.
    var userIDByNumber = UndoableArray<String>()
    var appIDBySlot = UndoableArray<String>()
    /// One copy of each app id, shared by the app slots (an event's app id is a fresh string).
    var appIDCopies: [String: String] = [:]
    /// The user numbers by user id (``userIDByNumber``), found by the id's hash.
    var userIndex = IdentifierIndex()
    /// The criteria and sender of the entries, each distinct pair kept once.
    var attributes = AttributePool()
    /// The per-user components: recent senders, rate-limit windows, Focus timers and status
    /// (``UserRecords``).
    var userRecords = UserRecords()
    var summaries: [FocusSummary] = []
    /// How each entry was decided, at the entry's index (what the history and summaries say).
    var decisions = UndoableArray<DecisionRecord>()
    /// The entries' notification ids, back to back (``DecisionRecord/idStart``): one growing
    /// buffer rather than a string each. Ids of entries that are gone stay until the buffer has
    /// doubled since it was last compacted, right after a commit (``compactIDs()``).
    var idBytes: [UInt8] = []
    var idBytesAfterCompaction = 0
    /// The Focus names decisions were made under, each kept once (``DecisionRecord/focus``).
    var focusNames: [String] = []
    /// Their UTF-8 bytes, as the changelog writes them.
    var focusBytes: [[UInt8]] = []
    /// Their codes among ``wellKnownFocusNames`` (index + 1; `0`: not one of them).
    var focusCodes: [UInt8] = []
    var focusNumbers: [String: UInt16] = [:]
    /// The Focus number ``focusNumber(_:)`` gave last.
    var lastFocus: UInt16 = 0
    /// Where each entry is, by (user, id hash), under a seed of this state's own (the hashes
    /// written to the changelog are not seeded).
    var table = EntryTable()
    var freeEntry = StateIndex.none
    var freeApp = StateIndex.none
    /// User numbers the retention freed (``PartitionState/commit()``).
    var freeUsers = FreeSlots()
    /// Users the retention left with nothing since the commit, freed by it if they still have
    /// nothing then (``expire(userID:context:nowMilliseconds:before:)``).
    var departingUsers: Set<UInt32> = []
    /// Where the retention's sweep looks next (``usersToExpire(before:examining:)``).
    var sweepCursor = 0
    var liveEntries = 0
    /// Unread notifications dropped because an app exceeded ``maxUnreadPerApp``.
    public internal(set) var droppedUnread = 0
    /// Unread notifications looked at again to recount their app's badge: after a context or
    /// Focus change, and after a restore for an app whose counted context was not written.
    public internal(set) var recountedEntries = 0
    /// Notifications forgotten by the retention (``expire(userID:context:nowMilliseconds:before:)``).
    public internal(set) var forgottenEntries = 0
    /// Users forgotten by the retention: their numbers freed by a commit.
    public internal(set) var forgottenUsers = 0

    /// The badge updates of the current commit interval: the latest per (user, app), in the order
    /// of each one's first change (docs/contract.md, Badges, allows coalescing within a commit interval).
    public internal(set) var pendingBadgeUpdates: [BadgeUpdate] = []
    var pendingSlots: [UInt32] = []
    /// The pending updates of apps the retention freed since the commit, by (user, app id): an
    /// app made again for the user takes its place, so a commit still publishes one update per
    /// (user, app).
    var releasedPending: [ReleasedApp: UInt32] = [:]

    struct ReleasedApp: Hashable {
        var user: UInt32
        var appID: String
    }

    // Since the last commit, besides the slots' own before-images.
    var changes = ChangeSet()
    var committed = CommitPoint()
    /// While restoring: the user of the last record applied.
    var restoreLastUser = StateIndex.none

    /// What a rollback returns to besides the slots.
    struct CommitPoint {
        var freeEntry = StateIndex.none
        var freeApp = StateIndex.none
        var freeUsers = 0
        var liveEntries = 0
        var droppedUnread = 0
        var forgottenEntries = 0
        var idBytes = 0
    }

    /// Creates an empty state.
    ///
    /// - Parameters:
    ///   - maxUnreadPerApp: `badges.maxUnreadPerApp`.
    ///   - dedupeWindow: `dedupe.windowPerUser`: notification ids remembered per user.
    ///   - summaryItemsPerApp: `summaries.maxItemsPerApp`: notifications a summary names per app.
    public init(maxUnreadPerApp: Int = 1000, dedupeWindow: Int = 1000, summaryItemsPerApp: Int = 5) {
        precondition(maxUnreadPerApp > 0 && dedupeWindow > 0, "the state must keep at least one id")
        precondition(summaryItemsPerApp >= 0, "a summary cannot name fewer than no notifications")
        self.maxUnreadPerApp = maxUnreadPerApp
        self.dedupeWindow = dedupeWindow
        self.summaryItemsPerApp = summaryItemsPerApp
    }

    /// Users with state.
    public var userCount: Int { self.userIndex.count }

    /// Remembered notifications (in a dedupe window, unread, or both).
    public var entryCount: Int { self.liveEntries }

    /// The users with state here.
    public var userIDs: [String] { self.userIDByNumber.filter { !$0.isEmpty } }

    /// Whether the user has state here.
    public func contains(userID: String) -> Bool {
        self.userNumber(userID) != nil
    }

    // MARK: - Events

    /// What admitting an event did.
    public enum Admission: Sendable, Hashable {
        /// A notification whose id is remembered for the user: nothing changed, nothing to publish.
        case duplicate
        /// The event was applied; the badge changed when an update is given.
        case applied(BadgeUpdate?)
    }

    /// Applies an event as the record loop does: a `notification` decided
    /// (``decide(_:lookup:defaultRateLimits:repeatedWindowMilliseconds:nowMilliseconds:sentAtMilliseconds:sourceOffset:userHash:)``),
    /// a `read` or a `clear` marking the app's notifications read.
    ///
    /// - Parameters:
    ///   - event: The event.
    ///   - lookup: The user's context (a `read` or `clear` under a store that cannot answer is
    ///     counted with no Focus).
    ///   - nowMilliseconds: The decision time.
    ///   - sentAtMilliseconds: The record timestamp, for repeated senders and rate limits; `nil`:
    ///     `nowMilliseconds`.
    ///   - defaultRateLimits: The configured caps, for a user whose context sets none.
    ///   - repeatedWindowMilliseconds: `people.repeatedWindowSeconds`, in milliseconds.
    ///   - sourceOffset: The input record's offset in the partition; `-1`: not known.
    ///   - userHash: As for ``decide(_:lookup:defaultRateLimits:repeatedWindowMilliseconds:nowMilliseconds:sentAtMilliseconds:sourceOffset:userHash:)``.
    /// - Returns: A notification's decision (`nil` for a duplicate, a `read` or a `clear`) and
    ///   what applying the event did.
    public mutating func apply(
        _ event: NotificationEvent, lookup: ContextLookup, nowMilliseconds: Int64, sentAtMilliseconds: Int64? = nil,
        defaultRateLimits: RateLimitPolicy = .none,
        repeatedWindowMilliseconds: Int64 = FocusDecider.defaultRepeatedSenderWindowSeconds * 1000,
        sourceOffset: Int64 = -1, userHash: UInt64? = nil
    ) -> (decision: Decision?, admission: Admission) {
        guard event.kind == .notification else {
            var context: CompiledFocusContext?
            if case .available(let found) = lookup { context = found }
            return (nil, self.markRead(event, context: context, nowMilliseconds: nowMilliseconds, userHash: userHash))
        }
        return self.decide(
            event, lookup: lookup, defaultRateLimits: defaultRateLimits,
            repeatedWindowMilliseconds: repeatedWindowMilliseconds, nowMilliseconds: nowMilliseconds,
            sentAtMilliseconds: sentAtMilliseconds ?? nowMilliseconds, sourceOffset: sourceOffset, userHash: userHash)
    }

    /// A `read` (its ids) or a `clear` (every unread notification of the app): neither changes
    /// the user's Focus timer or status, and a `nil` context may stand for a store that cannot answer.
    mutating func markRead(
        _ event: NotificationEvent, context: CompiledFocusContext?, nowMilliseconds: Int64, userHash: UInt64?
    ) -> Admission {
        guard let user = self.userNumber(event.userID, hash: userHash ?? IdentifierIndex.hash(event.userID)),
            let app = self.findApp(user: user, appID: event.appID)
        else { return .applied(nil) }
        let context = context?.inForce(atMilliseconds: nowMilliseconds)
        self.recount(app, context: context, nowMilliseconds: nowMilliseconds)
        if event.kind == .read {
            for id in event.notificationIDs {
                guard let entry = self.findEntry(user: user, idHash: Self.idHash(id)),
                    self.entries[Int(entry)].app == app
                else { continue }
                self.removeUnread(entry, context: context, nowMilliseconds: nowMilliseconds)
            }
        } else {
            while self.apps[Int(app)].unreadHead != StateIndex.none {
                self.removeUnread(self.apps[Int(app)].unreadHead, context: context, nowMilliseconds: nowMilliseconds)
            }
        }
        return .applied(self.publish(app, context: context, nowMilliseconds: nowMilliseconds))
    }

    /// The update of ``decide(_:lookup:defaultRateLimits:repeatedWindowMilliseconds:nowMilliseconds:sentAtMilliseconds:sourceOffset:userHash:)``, of a
    /// notification that is not a duplicate, for an interned user, with its id's hash
    /// (``idHash(_:)``), the sender's hash (``senderHash(_:)``), the app's
    /// (``appHash(_:)``, when a per-app cap is set) and the user's
    /// rate windows (``RateWindows/find(user:appHash:)``, when a cap is set) computed once, and
    /// how it was decided as its ``DecisionRecord`` keeps it (reason, context version, Focus);
    /// and whether it counts in the badge (``FocusDecider/Ruling/countsInBadge``).
    mutating func admitNotification(
        _ event: NotificationEvent, user: UInt32, idHash: UInt64, senderHash: UInt64?, appHash: UInt64,
        context: CompiledFocusContext?, nowMilliseconds: Int64, silenced: Bool,
        countsInBadge: Bool, decided: (reason: UInt8, contextVersion: Int64, focus: UInt16),
        sentAtMilliseconds: Int64, rateLimits: RateLimitPolicy, rateWindows: RateWindowPlaces, sourceOffset: Int64
    ) -> Admission {
        if let senderHash,
            self.userRecords.senders.note(user: user, senderHash: senderHash, atMilliseconds: sentAtMilliseconds)
        {
            self.changes.append(.userRecord(kind: SenderRings.recordKind, user: user))
        }
        if !silenced && rateLimits.isActive
            && self.userRecords.rateWindows.note(
                user: user, appHash: appHash, places: rateWindows, policy: rateLimits,
                atMilliseconds: sentAtMilliseconds)
        {
            self.changes.append(.userRecord(kind: RateWindows.recordKind, user: user))
        }
        let app = self.findApp(user: user, appID: event.appID) ?? self.makeApp(user: user, appID: event.appID)
        self.recount(app, context: context, nowMilliseconds: nowMilliseconds)
        var flags = StateEntry.alive | StateEntry.inWindow | StateEntry.unread
        if countsInBadge { flags |= StateEntry.counted }
        if silenced { flags |= StateEntry.silenced }
        let id = event.identifier.withUTF8 { self.storeID($0) }
        let record = DecisionRecord(
            sourceOffset: sourceOffset, contextVersion: decided.contextVersion, idStart: id.start,
            appOrdinal: self.apps[Int(app)].ordinal, idLength: id.length, focus: decided.focus,
            reason: decided.reason,
            // Listed by summaries only for a user who wants them: the rest pay nothing for them.
            summarizable: silenced && context?.summaries != nil, hashKeyed: id.length == 0)
        self.addEntry(
            StateEntry(
                idHash: idHash, decidedAt: nowMilliseconds, user: user, app: app,
                attributes: self.attributes.intern(
                    EntryAttributes(criteria: event.filterCriteria, sender: event.senderID, thread: event.threadID)),
                arrival: 0, windowNext: StateIndex.none,
                unreadPrev: StateIndex.none, unreadNext: StateIndex.none, flags: flags,
                relevance: StateEntry.relevanceByte(event.relevanceScore)),
            decision: record, context: context, nowMilliseconds: nowMilliseconds)
        return .applied(self.publish(app, context: context, nowMilliseconds: nowMilliseconds))
    }

    /// Recomputes the user's badges under a changed or expired context; returns the changed ones.
    public mutating func recompute(
        userID: String, context: CompiledFocusContext?, nowMilliseconds: Int64, timerAt: Int64? = nil
    ) -> [BadgeUpdate] {
        guard let user = self.userNumber(userID) else { return [] }
        self.followFocus(user: user, context: context, nowMilliseconds: nowMilliseconds, timerAt: timerAt)
        let context = context?.inForce(atMilliseconds: nowMilliseconds)
        // By app id, so that the updates come out in the same order whatever the apps' history.
        var apps: [UInt32] = []
        var walk = AppList.walk(self.users[Int(user)])
        while let app = walk.next(in: self.apps) { apps.append(app) }
        apps.sort { self.appIDBySlot[Int($0)] < self.appIDBySlot[Int($1)] }
        var updates: [BadgeUpdate] = []
        for app in apps {
            self.recount(app, context: context, nowMilliseconds: nowMilliseconds)
            if let update = self.publish(app, context: context, nowMilliseconds: nowMilliseconds) {
                updates.append(update)
            }
        }
        return updates
    }

    /// The user's badges as last published, by app id.
    public func badges(userID: String) -> [Badge] {
        guard let user = self.userNumber(userID) else { return [] }
        return self.badges(user: user)
    }

    private func badges(user: UInt32) -> [Badge] {
        // Called for every user a commit changed: one allocation, sized first and sorted in place.
        var count = 0
        var counting = AppList.walk(self.users[Int(user)])
        while counting.next(in: self.apps) != nil { count += 1 }
        var badges: [Badge] = []
        badges.reserveCapacity(count)
        var apps = AppList.walk(self.users[Int(user)])
        while let app = apps.next(in: self.apps) {
            let slot = self.apps[Int(app)]
            badges.append(
                Badge(
                    appID: self.appIDBySlot[Int(app)], badge: Int(slot.badge), unread: Int(slot.unread),
                    sequence: slot.sequence))
        }
        badges.sort { $0.appID < $1.appID }
        return badges
    }

    /// The stable hash of a notification id: 64-bit FNV-1a of its UTF-8 bytes. Two different ids
    /// of one user collide with a probability of about 2⁻⁶⁴ × the ids remembered.
    static func idHash(_ id: String) -> UInt64 {
        StableHash.fnv1a(id, basis: Self.idHashBasis)
    }

    /// ``idHash(_:)`` of an id as an event holds it, from its bytes.
    static func idHash(_ id: EventIdentifier) -> UInt64 {
        id.withUTF8 { StableHash.fnv1a($0, basis: Self.idHashBasis) }
    }

    static let idHashBasis: UInt64 = 0xcbf2_9ce4_8422_2325

}

/// A (user, app)'s badge as last published.
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
