import Foundation
import Testing

@testable import FocusGateCore

/// The retention: what the partition state forgets, what it publishes and writes when it does,
/// and that a rollback or a restore sees the same state.
@Suite("Retention")
struct RetentionTests {
    static let day: Int64 = 86_400_000
    static let start: Int64 = 1_800_000_000_000
    /// One delivery a minute per user at most: every user below gets a rate window.
    static let limits = RateLimitPolicy(FocusContext.RateLimits(perUser: .init(max: 100, windowSeconds: 60)))

    static func notification(_ id: String, user: String, app: String = "chat", sender: String? = "bob")
        -> NotificationEvent
    {
        NotificationEvent(id: id, userID: user, appID: app, filterCriteria: "work", senderID: sender)
    }

    /// Decides `event` at `time` with no Focus, under the rate limits, as the worker does.
    @discardableResult
    static func decide(_ state: inout PartitionState, _ event: NotificationEvent, at time: Int64) -> Decision? {
        state.decide(
            event, lookup: .available(nil), defaultRateLimits: Self.limits, repeatedWindowMilliseconds: 60_000,
            nowMilliseconds: time, sentAtMilliseconds: time
        ).decision
    }

    /// Writes and commits; returns what was written.
    static func commit(_ state: inout PartitionState, into log: inout [(key: [UInt8], value: [UInt8]?)]) {
        state.writeChanges { key, value in log.append((key, value)) }
        state.commit()
    }

    /// The user ids the live keys of a compacted `log` name (a key ends with its user id).
    static func usersWithLiveKeys(_ log: [(key: [UInt8], value: [UInt8]?)], among users: [String]) -> Set<String> {
        var newest: [[UInt8]: [UInt8]?] = [:]
        for record in log { newest[record.key] = record.value }
        var found: Set<String> = []
        for (key, value) in newest where value != nil {
            for user in users where key.count > 2 && key.suffix(user.utf8.count).elementsEqual(user.utf8) {
                found.insert(user)
            }
        }
        return found
    }

    @Test(
        "a notification forgotten and sent again within one commit interval, its slot taken meanwhile: restored as it is, not as a tombstone"
    )
    func forgottenAndSentAgain() throws {
        // Found by the model test: the same id's key listed at three slots in one interval; the
        // newest lands in the first one's slot, which the write reaches first, and the middle
        // one's "not where it was" wrote a tombstone after that record.
        var state = PartitionState(maxUnreadPerApp: 3, dedupeWindow: 4)
        let context = PartitionStateTests.work
        var now = PartitionStateTests.now
        func notify(_ app: String, _ id: String) {
            now += 1
            _ = state.apply(
                .fixture(id, user: "u", app: app, criteria: "work"), lookup: .available(context),
                nowMilliseconds: now
            )
        }
        func expire(behind: Int64) {
            now += 1
            _ = state.expire(userID: "u", context: context, nowMilliseconds: now, before: now - behind)
        }
        var log: [(key: [UInt8], value: [UInt8]?)] = []
        notify("b", "n2")
        expire(behind: 1)
        notify("a", "n5")
        notify("b", "n2")
        expire(behind: 0)
        notify("a", "n0")
        notify("b", "n2")
        Self.commit(&state, into: &log)
        var restored = PartitionState(maxUnreadPerApp: 3, dedupeWindow: 4)
        for record in log { try restored.restore(key: record.key, value: record.value) }
        restored.finishRestore()
        #expect(state.badges(userID: "u").map(\.unread) == [1, 1])
        #expect(restored.entryCount == state.entryCount)
        #expect(restored.badges(userID: "u") == state.badges(userID: "u"))
    }

    @Test("quiet users are forgotten: badges fall to 0, every key of theirs a tombstone, a restore holds none of them")
    func quietUsersForgotten() throws {
        var state = PartitionState()
        var log: [(key: [UInt8], value: [UInt8]?)] = []
        for user in ["quiet-1", "quiet-2"] {
            Self.decide(&state, Self.notification("n1", user: user), at: Self.start)
            Self.decide(&state, Self.notification("n2", user: user, app: "mail", sender: nil), at: Self.start + 1)
        }
        Self.decide(&state, Self.notification("n1", user: "active"), at: Self.start)
        Self.commit(&state, into: &log)
        Self.decide(&state, Self.notification("n2", user: "active"), at: Self.start + 30 * Self.day)
        Self.commit(&state, into: &log)

        let now = Self.start + 31 * Self.day
        let cutoff = now - 30 * Self.day
        let found = state.usersToExpire(before: cutoff, examining: 10)
        #expect(Set(found) == ["quiet-1", "quiet-2", "active"])
        var updates: [BadgeUpdate] = []
        for user in found {
            updates += state.expire(userID: user, context: nil, nowMilliseconds: now, before: cutoff)
        }
        // Their badges fall to 0 with the next sequence; the active user's first notification goes.
        #expect(
            updates.map { "\($0.userID)/\($0.appID) \($0.badge) #\($0.sequence)" }.sorted() == [
                "active/chat 1 #3", "quiet-1/chat 0 #2", "quiet-1/mail 0 #2", "quiet-2/chat 0 #2",
                "quiet-2/mail 0 #2",
            ])
        #expect(state.pendingBadgeUpdates.count == 5)
        #expect(state.forgottenEntries == 5)
        Self.commit(&state, into: &log)
        #expect(state.forgottenUsers == 2)
        #expect(state.userCount == 1 && state.userIDs == ["active"] && state.entryCount == 1)
        #expect(state.badges(userID: "quiet-1").isEmpty)
        #expect(state.history(userID: "quiet-1", query: HistoryQuery(limit: 10)).items.isEmpty)

        // Compaction keeps no live key of theirs: every one, entries, apps, senders and rate
        // windows alike, got a tombstone.
        #expect(Self.usersWithLiveKeys(log, among: ["quiet-1", "quiet-2", "active"]) == ["active"])
        for restored in try PartitionStateModelTests.restored(from: log) {
            #expect(restored.userIDs == ["active"])
            #expect(restored.entryCount == 1)
            #expect(restored.badges(userID: "active") == state.badges(userID: "active"))
        }

        // A forgotten user who comes back starts afresh, in a freed number, with a new sequence.
        Self.decide(&state, Self.notification("n1", user: "quiet-1"), at: now)
        #expect(state.pendingBadgeUpdates.map(\.sequence) == [1])
        #expect(state.userCount == 2)
    }

    @Test("a rollback undoes an expiry and the reuse of a freed number; the sweep's users stay consistent")
    func rollbackUndoesExpiry() throws {
        var state = PartitionState()
        var log: [(key: [UInt8], value: [UInt8]?)] = []
        Self.decide(&state, Self.notification("n1", user: "a"), at: Self.start)
        Self.decide(&state, Self.notification("n1", user: "b"), at: Self.start)
        Self.commit(&state, into: &log)
        let before = (state.badges(userID: "a"), state.entryCount, state.userIDs)

        // Forgotten, then rolled back: all as it was.
        _ = state.expire(userID: "a", context: nil, nowMilliseconds: Self.start + 1, before: Self.start)
        #expect(state.badges(userID: "a").isEmpty)
        state.rollback()
        #expect(state.badges(userID: "a") == before.0 && state.entryCount == before.1 && state.userIDs == before.2)
        #expect(state.forgottenEntries == 0)

        // Forgotten and committed: the number is free; a new user takes it, then a rollback
        // gives it back, and the next one takes it again.
        _ = state.expire(userID: "a", context: nil, nowMilliseconds: Self.start + 1, before: Self.start)
        Self.commit(&state, into: &log)
        #expect(state.userIDs == ["b"])
        Self.decide(&state, Self.notification("n9", user: "c"), at: Self.start + 2)
        #expect(state.contains(userID: "c"))
        state.rollback()
        #expect(!state.contains(userID: "c") && state.userIDs == ["b"] && state.userCount == 1)
        Self.decide(&state, Self.notification("n9", user: "d"), at: Self.start + 2)
        Self.decide(&state, Self.notification("n9", user: "b"), at: Self.start + 2)
        Self.commit(&state, into: &log)
        #expect(Set(state.userIDs) == ["b", "d"])
        #expect(state.badges(userID: "d").map(\.badge) == [1] && state.badges(userID: "b").map(\.badge) == [2])
        for restored in try PartitionStateModelTests.restored(from: log) {
            #expect(Set(restored.userIDs) == ["b", "d"])
            #expect(restored.badges(userID: "d") == state.badges(userID: "d"))
        }
    }

    @Test("a user whose Focus will change on its own, or who is shown as focused, keeps what only says so")
    func focusKeepsUser() throws {
        var state = PartitionState()
        var compiler = FocusContextCompiler()
        let expiring = try compiler.compile(
            FocusContext(
                userID: "u", version: 1, focus: "Work", expiresAt: Date(unixMilliseconds: Self.start + 40 * Self.day)))
        _ = state.decide(
            Self.notification("n1", user: "u"), lookup: .available(expiring), defaultRateLimits: .none,
            repeatedWindowMilliseconds: 0, nowMilliseconds: Self.start, sentAtMilliseconds: Self.start)
        state.writeChanges { _, _ in }
        state.commit()
        let now = Self.start + 31 * Self.day
        _ = state.expire(userID: "u", context: expiring, nowMilliseconds: now, before: now - 30 * Self.day)
        state.writeChanges { _, _ in }
        state.commit()
        #expect(state.entryCount == 0 && state.badges(userID: "u").isEmpty)
        #expect(state.contains(userID: "u") && state.pendingTransitions == 1 && state.forgottenUsers == 0)
        #expect(state.usersToExpire(before: now - 30 * Self.day, examining: 10).isEmpty)
    }

    @Test("the sweep looks at most at the users it is given, from where it stopped, around the partition")
    func sweepInSteps() {
        var state = PartitionState()
        for user in 0..<10 {
            Self.decide(&state, Self.notification("n", user: "u\(user)"), at: Self.start + Int64(user))
        }
        state.writeChanges { _, _ in }
        state.commit()
        let cutoff = Self.start + 4
        #expect(state.usersToExpire(before: cutoff, examining: 3) == ["u0", "u1", "u2"])
        #expect(state.usersToExpire(before: cutoff, examining: 3) == ["u3", "u4"])
        #expect(state.usersToExpire(before: cutoff, examining: 3).isEmpty)
        #expect(state.usersToExpire(before: cutoff, examining: 3) == ["u0", "u1"])
    }
}
