// MARK: - History: what the state remembers of a user's notifications, and how each was decided

/// One notification the state remembers, as the user's history shows it (docs/contract.md,
/// "A user's recent decisions").
public struct HistoryItem: Sendable, Hashable {
    /// The notification id; `nil` for one restored from a state record that held only its hash.
    public var notificationID: String?
    /// The app; `nil` when a read notification was restored from a record that did not name it.
    public var appID: String?
    public var outcome: Decision.Outcome
    /// Why; `nil` when decided before the state kept reasons.
    public var reason: Decision.Reason?
    /// The Focus on when it was decided.
    public var focus: String?
    /// The context version it was decided under; `nil`: no context (or not known).
    public var contextVersion: Int64?
    /// Unix milliseconds.
    public var decidedAtMilliseconds: Int64
    /// The input record's offset in its partition; `nil`: not known.
    public var sourceOffset: Int64?
    /// The input's `focusgate-source` (`topic/partition/offset`), filled in by whoever knows the
    /// topic and partition.
    public var source: String?
    /// Not read or cleared yet.
    public var unread: Bool
    /// Whether it counts in its app's badge now; `nil` while that is not worked out (restored
    /// unread under an app whose count stands).
    public var countedInBadge: Bool?
    /// A summary has listed it.
    public var summarized: Bool
    /// Its place among the user's notifications (the user's arrival number): newer ones have
    /// greater positions; a page's cursor.
    public var position: UInt32
}

/// Which of a user's remembered notifications to list, newest first.
public struct HistoryQuery: Sendable, Hashable {
    /// At most this many.
    public var limit: Int
    /// Only those older than this position (the previous page's ``HistoryPage/nextCursor``).
    public var before: UInt32?
    public var appID: String?
    public var outcome: Decision.Outcome?

    public init(limit: Int, before: UInt32? = nil, appID: String? = nil, outcome: Decision.Outcome? = nil) {
        self.limit = limit
        self.before = before
        self.appID = appID
        self.outcome = outcome
    }
}

/// One page of a user's history.
public struct HistoryPage: Sendable, Hashable {
    public var items: [HistoryItem]
    /// The cursor of the next page (``HistoryQuery/before``); `nil` when this page is the last.
    public var nextCursor: UInt32?

    public init(items: [HistoryItem], nextCursor: UInt32?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// What the state says of one notification id of a user.
public enum HistoryLookup: Sendable, Hashable {
    case found(HistoryItem)
    /// Not remembered. `forgotten`: the state has let some of the user's notifications go (past
    /// the dedupe window, read), so this one may have been among them; `false`: it remembers every
    /// notification of the user it was given, so it never saw this one.
    case notRemembered(forgotten: Bool)
}

extension PartitionState {
    /// The user's remembered notifications, newest first: those in the dedupe window and those
    /// older but still unread. Walks the user's window and unread lists: bounded by
    /// ``dedupeWindow`` and ``maxUnreadPerApp``, whatever the partition holds.
    public func history(userID: String, query: HistoryQuery) -> HistoryPage {
        guard let user = self.userNumber(userID), query.limit > 0 else {
            return HistoryPage(items: [], nextCursor: nil)
        }
        var remembered: [UInt32] = []
        self.forEachRemembered(user: user) { remembered.append($0) }
        remembered.sort { self.entries[Int($0)].arrival > self.entries[Int($1)].arrival }
        var items: [HistoryItem] = []
        var more = false
        for entry in remembered {
            if let before = query.before, self.entries[Int(entry)].arrival >= before { continue }
            let item = self.historyItem(at: entry)
            if let outcome = query.outcome, item.outcome != outcome { continue }
            if let appID = query.appID, item.appID != appID { continue }
            guard items.count < query.limit else {
                more = true
                break
            }
            items.append(item)
        }
        return HistoryPage(items: items, nextCursor: more ? items.last?.position : nil)
    }

    /// What the state remembers of the notification `id` of the user.
    public func historyItem(userID: String, notificationID id: String) -> HistoryLookup {
        guard let user = self.userNumber(userID) else { return .notRemembered(forgotten: false) }
        if let entry = self.findEntry(user: user, idHash: Self.idHash(id)),
            !self.decisions[Int(entry)].hasID || self.hasID(self.decisions[Int(entry)], id)
        {
            return .found(self.historyItem(at: entry))
        }
        // Every notification the user was given has an arrival number; fewer remembered than
        // given means some were let go.
        return .notRemembered(forgotten: self.rememberedCount(user: user) < Int(self.users[Int(user)].nextArrival))
    }

    private func rememberedCount(user: UInt32) -> Int {
        var count = 0
        self.forEachRemembered(user: user) { _ in count += 1 }
        return count
    }

    /// Each notification remembered for the user, once: its window's, then the unread ones that
    /// have left it, app by app.
    private func forEachRemembered(user: UInt32, _ body: (UInt32) -> Void) {
        var window = WindowList.walk(self.users[Int(user)])
        while let entry = window.next(in: self.entries) { body(entry) }
        var apps = AppList.walk(self.users[Int(user)])
        while let app = apps.next(in: self.apps) {
            var unread = UnreadList.walk(self.apps[Int(app)])
            while let entry = unread.next(in: self.entries) {
                if !self.entries[Int(entry)].has(StateEntry.inWindow) { body(entry) }
            }
        }
    }

    private func historyItem(at index: UInt32) -> HistoryItem {
        let entry = self.entries[Int(index)]
        let record = self.decisions[Int(index)]
        var appID: String?
        if entry.app != StateIndex.none {
            appID = self.appIDBySlot[Int(entry.app)]
        } else if record.appOrdinal != 0, let app = self.findApp(user: entry.user, ordinal: record.appOrdinal) {
            appID = self.appIDBySlot[Int(app)]
        }
        let unread = entry.has(StateEntry.unread)
        var counted: Bool? = unread && entry.has(StateEntry.counted)
        if unread && entry.has(StateEntry.countUnknown) {
            // Known for the app as a whole when all or none of its unread count.
            let slot = self.apps[Int(entry.app)]
            counted = slot.counted == slot.unread ? true : slot.counted == 0 ? false : nil
        }
        return HistoryItem(
            notificationID: self.notificationID(of: record), appID: appID,
            outcome: entry.has(StateEntry.silenced) ? .silenced : .delivered,
            reason: record.reason == 0 ? nil : Decision.Reason.all[Int(record.reason) - 1],
            focus: self.focusName(record.focus),
            contextVersion: record.contextVersion == .min ? nil : record.contextVersion,
            decidedAtMilliseconds: entry.decidedAt,
            sourceOffset: record.sourceOffset < 0 ? nil : record.sourceOffset, source: nil,
            unread: unread, countedInBadge: counted, summarized: entry.has(StateEntry.summarized),
            position: entry.arrival)
    }
}
