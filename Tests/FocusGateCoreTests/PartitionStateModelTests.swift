@testable import FocusGateCore
import FocusGateHarness
import FocusGateTestSupport
import Testing

/// The partition state against a plain model of docs/contract.md, Outputs and Badges (arrays and dictionaries, recounting
/// everything), over random notifications, reads, clears, Focus changes, the retention's expiry,
/// stages (changes written before their commit), commits and rollbacks; then restored from its changelog, as
/// written and as compaction would leave it.
@Suite("Partition state against a model")
struct PartitionStateModelTests {
    static let now = BadgeRecordTests.now
    static let contexts: [CompiledFocusContext?] = [
        nil,
        BadgeRecordTests.context(version: 1),
        BadgeRecordTests.context(version: 2, focus: "Personal", predicate: "SELF == 'home'"),
        BadgeRecordTests.context(version: 3, hideBadges: true),
        BadgeRecordTests.context(version: 4, focus: "Sleep", predicate: "FALSEPREDICATE"),
        BadgeRecordTests.context(version: 5, focus: nil),
        // People: "boss" gets through the silenced apps (the predicate still applies), "spam" is
        // silenced everywhere.
        FocusContext.fixture(
            version: 6, otherApps: .silence, apps: ["a": .init(filterPredicate: "SELF == 'work'")],
            people: .init(allowed: ["boss"], silenced: ["spam"])
        ).compiledForTests(),
        FocusContext.fixture(
            version: 7, apps: ["b": .init(silenced: true)], people: .init(allowed: ["spam"], silenced: ["boss"])
        ).compiledForTests(),
    ]

    /// The contract's rules written the obvious way.
    struct Model {
        let window: Int
        let cap: Int
        /// The decision time: moves on, so that the retention has something to forget.
        var now = PartitionStateModelTests.now
        var windows: [String: [(id: String, at: Int64)]] = [:]
        var apps: [String: [String: App]] = [:]
        /// Badge updates since the commit: the latest per (user, app), in order of first change.
        var pending: [BadgeUpdate] = []

        struct App {
            var unread: [(id: String, criteria: String?, sender: String?, at: Int64)] = []
            var badge = 0
            var sequence: UInt64 = 0
        }

        func isDuplicate(user: String, id: String) -> Bool {
            self.windows[user, default: []].contains { $0.id == id }
                || self.apps[user, default: [:]].values.contains { $0.unread.contains { $0.id == id } }
        }

        mutating func admit(_ event: NotificationEvent, context: CompiledFocusContext?) -> PartitionState.Admission {
            let (user, appID) = (event.userID, event.appID)
            switch event.kind {
            case .notification:
                if self.isDuplicate(user: user, id: event.id) { return .duplicate }
                self.windows[user, default: []].append((event.id, self.now))
                if self.windows[user]!.count > self.window { self.windows[user]!.removeFirst() }
                self.apps[user, default: [:]][appID, default: App()].unread.append(
                    (event.id, event.filterCriteria, event.senderID, self.now))
                if self.apps[user]![appID]!.unread.count > self.cap { self.apps[user]![appID]!.unread.removeFirst() }
            case .read:
                guard self.apps[user]?[appID] != nil else { return .applied(nil) }
                self.apps[user]![appID]!.unread.removeAll { event.notificationIDs.contains($0.id) }
            case .clear:
                guard self.apps[user]?[appID] != nil else { return .applied(nil) }
                self.apps[user]![appID]!.unread.removeAll()
            }
            return .applied(self.publish(user: user, appID: appID, context: context))
        }

        mutating func recompute(user: String, context: CompiledFocusContext?) -> [BadgeUpdate] {
            (self.apps[user]?.keys.sorted() ?? []).compactMap { self.publish(user: user, appID: $0, context: context) }
        }

        /// The retention: what was decided at `cutoff` or before is forgotten; once the user's
        /// window is empty, so are the apps with nothing unread (their badges at 0 first).
        mutating func expire(user: String, before cutoff: Int64, context: CompiledFocusContext?) -> [BadgeUpdate] {
            self.windows[user]?.removeAll { $0.at <= cutoff }
            if self.windows[user]?.isEmpty == true { self.windows[user] = nil }
            var changed: [String] = []
            for (appID, app) in self.apps[user] ?? [:] {
                let kept = app.unread.filter { $0.at > cutoff }
                if kept.count != app.unread.count || (self.windows[user] == nil && kept.isEmpty) {
                    changed.append(appID)
                }
                self.apps[user]![appID]!.unread = kept
            }
            var updates: [BadgeUpdate] = []
            for appID in changed.sorted() {
                if let update = self.publish(user: user, appID: appID, context: context) { updates.append(update) }
                if self.windows[user] == nil, self.apps[user]?[appID]?.unread.isEmpty == true {
                    self.apps[user]![appID] = nil
                    if self.apps[user]!.isEmpty { self.apps[user] = nil }
                }
            }
            return updates
        }

        mutating func publish(user: String, appID: String, context: CompiledFocusContext?) -> BadgeUpdate? {
            var app = self.apps[user]![appID]!
            let badge = app.unread.filter {
                FocusDecider.countsInBadge(
                    appID: appID, criteria: $0.criteria, senderID: $0.sender, context: context,
                    nowMilliseconds: self.now
                )
            }.count
            defer {
                self.apps[user]![appID] = app.unread.isEmpty && app.badge == 0 && app.sequence == 0 ? nil : app
                if self.apps[user]!.isEmpty { self.apps[user] = nil }
            }
            guard badge != app.badge else { return nil }
            app.badge = badge
            app.sequence += 1
            let focusOn = context?.isFocusOn(atMilliseconds: self.now) ?? false
            let update = BadgeUpdate(
                userID: user, appID: appID, badge: badge, unread: app.unread.count,
                focus: focusOn ? context?.focus : nil,
                contextVersion: context?.version, sequence: app.sequence,
                updatedAtMilliseconds: self.now)
            if let index = self.pending.firstIndex(where: { $0.userID == user && $0.appID == appID }) {
                self.pending[index] = update
            } else {
                self.pending.append(update)
            }
            return update
        }

        func badges(user: String) -> [Badge] {
            (self.apps[user] ?? [:]).sorted { $0.key < $1.key }.map {
                Badge(appID: $0.key, badge: $0.value.badge, unread: $0.value.unread.count, sequence: $0.value.sequence)
            }
        }
    }

    static let users = (0..<5).map { "u\($0)" }

    /// States restored from a changelog `log`: as written, and as compaction would leave it (the
    /// newest record of each key, in log order).
    static func restored(from log: [(key: [UInt8], value: [UInt8]?)]) throws -> [PartitionState] {
        var newest: [[UInt8]: Int] = [:]
        for (offset, record) in log.enumerated() { newest[record.key] = offset }
        let compacted = log.enumerated().filter { newest[$0.element.key] == $0.offset }.map(\.element)
        return try [log, compacted].map { records in
            var restored = PartitionState(maxUnreadPerApp: 3, dedupeWindow: 4)
            for record in records { try restored.restore(key: record.key, value: record.value) }
            restored.finishRestore()
            return restored
        }
    }

    /// A random event over few users, apps and ids, so that duplicates, reads of unknown ids and
    /// full windows and lists are common.
    static func event(_ random: inout SeededGenerator) -> NotificationEvent {
        let user = Self.users.randomElement(using: &random)!
        let app = ["a", "b", "c"].randomElement(using: &random)!
        let id = { (random: inout SeededGenerator) in "n\(Int.random(in: 0..<16, using: &random))" }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<70:
            return NotificationEvent(
                id: id(&random), userID: user, appID: app,
                filterCriteria: ["work", "home", nil, ""].randomElement(using: &random)!,
                senderID: [nil, nil, "boss", "spam", "friend"].randomElement(using: &random)!)
        case 70..<92:
            let ids = (0..<Int.random(in: 1...3, using: &random)).map { _ in id(&random) }
            return NotificationEvent(kind: .read, id: "r", userID: user, appID: app, notificationIDs: ids)
        default:
            return NotificationEvent(kind: .clear, id: "c", userID: user, appID: app)
        }
    }

    @Test(
        "same outcomes and badges as the model; restores from the changelog continue identically", .computeThread,
        arguments: 1...12)
    func againstModel(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        var state = PartitionState(maxUnreadPerApp: 3, dedupeWindow: 4)
        var model = Model(window: 4, cap: 3)
        var committedModel = model
        var log: [(key: [UInt8], value: [UInt8]?)] = []
        // Written by stages since the commit: in the log when it commits.
        var staged: [(key: [UInt8], value: [UInt8]?)] = []
        var context: [String: CompiledFocusContext?] = [:]

        for step in 0..<3_000 {
            model.now += Int64.random(in: 0...2, using: &random)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<76:
                let event = Self.event(&random)
                let userContext = context[event.userID] ?? nil
                let got = state.apply(event, lookup: .available(userContext), nowMilliseconds: model.now).admission
                let expected = model.admit(event, context: userContext)
                try #require(got == expected, "step \(step): \(event)")
            case 76..<80:
                // The retention, over a few steps' worth of history or all of it.
                let user = Self.users.randomElement(using: &random)!
                let cutoff = model.now - Int64.random(in: 0...60, using: &random)
                let userContext = context[user] ?? nil
                try #require(
                    state.expire(userID: user, context: userContext, nowMilliseconds: model.now, before: cutoff)
                        == model.expire(user: user, before: cutoff, context: userContext),
                    "step \(step): expire \(user) before \(cutoff)")
            case 80..<85:
                let user = Self.users.randomElement(using: &random)!
                let changed = Self.contexts.randomElement(using: &random)!
                context[user] = changed
                try #require(
                    state.recompute(userID: user, context: changed, nowMilliseconds: model.now)
                        == model.recompute(user: user, context: changed), "step \(step): recompute \(user)")
            case 85..<89:
                // A stage: the changes so far written into the open transaction, which a
                // rollback discards (and the badge updates still coalesced until the commit).
                state.writeChanges { key, value in staged.append((key, value)) }
                try #require(!state.hasUnwrittenChanges, "step \(step): a stage writes every change")
            case 89..<96:
                try #require(state.pendingBadgeUpdates == model.pending, "step \(step): coalesced badge updates")
                log += staged
                staged.removeAll()
                state.writeChanges { key, value in log.append((key, value)) }
                state.commit()
                model.pending = []
                committedModel = model
            default:
                state.rollback()
                staged.removeAll()
                model = committedModel
                try #require(state.pendingBadgeUpdates.isEmpty)
            }
            for user in Self.users {
                try #require(state.badges(userID: user) == model.badges(user: user), "step \(step): \(user)")
            }
            // The entry table holds every remembered notification, reachable from its home.
            try #require(state.table.count == state.entryCount, "step \(step): the entry table's count")
            let violations = state.table.violations(keys: state.entries.elements) + state.partViolations
            try #require(violations.isEmpty, "step \(step): \(violations)")
        }
        log += staged
        state.writeChanges { key, value in log.append((key, value)) }
        state.commit()
        #expect(state.forgottenEntries > 0, "the run forgets notifications")

        for var restored in try Self.restored(from: log) {
            #expect(restored.entryCount == state.entryCount)
            #expect(restored.userCount == state.userCount)
            var continued = model
            for user in Self.users {
                try #require(restored.badges(userID: user) == continued.badges(user: user))
            }
            for step in 0..<500 {
                let event = Self.event(&random)
                let userContext = context[event.userID] ?? nil
                try #require(
                    restored.apply(event, lookup: .available(userContext), nowMilliseconds: continued.now).admission
                        == continued.admit(event, context: userContext), "after restore, step \(step): \(event)")
            }
        }
    }
}
