import Foundation
import Testing

@testable import FocusGateCore

/// A user's history in the partition state: what it remembers of each notification and how it
/// was decided, across the changelog and from records written before decisions were kept.
@Suite("History")
struct HistoryTests {
    /// Work: chat filtered by `work`, mail silenced, Bob silenced, at most 2 deliveries a minute.
    static func work(version: Int64) throws -> CompiledFocusContext {
        var compiler = FocusContextCompiler()
        return try compiler.compile(
            FocusContext(
                userID: "u", version: version, focus: "Work",
                apps: [
                    "chat": .init(filterPredicate: "SELF == 'work'"), "mail": .init(silenced: true),
                ],
                people: .init(silenced: ["bob"]),
                rateLimits: .init(perUser: .init(max: 2, windowSeconds: 60), exempt: [])))
    }

    static func event(
        _ id: String, app: String = "chat", criteria: String? = "work", sender: String? = nil,
        level: InterruptionLevel = .active
    ) -> NotificationEvent {
        NotificationEvent(
            id: id, userID: "u", appID: app, filterCriteria: criteria, interruptionLevel: level, senderID: sender)
    }

    /// One notification of each reason, decided as the worker decides (input offsets 10, 11, …).
    static func everyReason(_ state: inout PartitionState) throws -> [String: Decision] {
        let work = try Self.work(version: 7)
        var decisions: [String: Decision] = [:]
        let events: [(NotificationEvent, CompiledFocusContext?)] = [
            (Self.event("n-match"), work),  // predicate-match (1 delivery)
            (Self.event("n-mismatch", criteria: "home"), work),  // predicate-mismatch
            (Self.event("n-app", app: "mail"), work),  // app-silenced
            (Self.event("n-person", sender: "bob"), work),  // person-silenced
            (Self.event("n-critical", app: "mail", level: .critical), work),  // breakthrough (2 deliveries)
            (Self.event("n-limited"), work),  // rate-limited: the third delivery in the minute
            (Self.event("n-free"), nil),  // no-focus
        ]
        for (offset, (event, context)) in events.enumerated() {
            decisions[event.id] =
                state.decide(
                    event, lookup: .available(context), defaultRateLimits: .none, repeatedWindowMilliseconds: 0,
                    nowMilliseconds: 1_000 + Int64(offset), sentAtMilliseconds: 1_000 + Int64(offset),
                    sourceOffset: 10 + Int64(offset)
                ).decision
        }
        return decisions
    }

    @Test("each remembered notification answers how it was decided, as the decision said; newest first")
    func everyReasonListed() throws {
        var state = PartitionState()
        let decisions = try Self.everyReason(&state)
        #expect(
            Set(decisions.values.map(\.reason)) == [
                .predicateMatch, .predicateMismatch, .appSilenced, .personSilenced, .breakthroughCritical,
                .rateLimited, .noFocus,
            ])
        let page = state.history(userID: "u", query: HistoryQuery(limit: 100))
        #expect(
            page.items.map(\.notificationID) == [
                "n-free", "n-limited", "n-critical", "n-person", "n-app", "n-mismatch", "n-match",
            ])
        #expect(page.nextCursor == nil)
        for item in page.items {
            let decision = try #require(decisions[item.notificationID!])
            #expect(item.outcome == decision.outcome, "\(item.notificationID!)")
            #expect(item.reason == decision.reason, "\(item.notificationID!)")
            #expect(item.focus == decision.focus, "\(item.notificationID!)")
            #expect(item.contextVersion == decision.contextVersion, "\(item.notificationID!)")
            #expect(item.unread && !item.summarized)
            #expect(state.historyItem(userID: "u", notificationID: item.notificationID!) == .found(item))
        }
        let limited = try #require(page.items.first { $0.notificationID == "n-limited" })
        #expect(limited.focus == "Work" && limited.contextVersion == 7 && limited.sourceOffset == 15)
        #expect(limited.appID == "chat" && limited.decidedAtMilliseconds == 1_005)
        // Whether each counts in its app's badge now: chat was recounted with no Focus on (n-free),
        // so all of its count; mail's badge still stands as Work counted it.
        #expect(page.items.first { $0.notificationID == "n-mismatch" }?.countedInBadge == true)
        #expect(page.items.first { $0.notificationID == "n-app" }?.countedInBadge == false)
        let free = try #require(page.items.first)
        #expect(free.focus == nil && free.contextVersion == nil && free.reason == .noFocus)
    }

    @Test("pages by cursor, filters by app and decision; an unknown id says whether anything was let go")
    func pagesAndFilters() throws {
        var state = PartitionState(dedupeWindow: 4)
        _ = try Self.everyReason(&state)
        let first = state.history(userID: "u", query: HistoryQuery(limit: 2))
        // The window keeps 4; the three older ones are still unread, so still remembered.
        #expect(first.items.map(\.notificationID) == ["n-free", "n-limited"])
        let second = state.history(userID: "u", query: HistoryQuery(limit: 2, before: first.nextCursor))
        #expect(second.items.map(\.notificationID) == ["n-critical", "n-person"])
        let silencedMail = state.history(
            userID: "u", query: HistoryQuery(limit: 10, appID: "mail", outcome: .silenced))
        #expect(silencedMail.items.map(\.notificationID) == ["n-app"])
        #expect(state.historyItem(userID: "u", notificationID: "never") == .notRemembered(forgotten: false))
        #expect(state.historyItem(userID: "nobody", notificationID: "n-match") == .notRemembered(forgotten: false))
        // Read, n-match leaves: it is out of the window and no longer unread.
        _ = state.apply(
            NotificationEvent(kind: .read, id: "r", userID: "u", appID: "chat", notificationIDs: ["n-match"]),
            lookup: .available(nil), nowMilliseconds: 2_000
        )
        #expect(state.historyItem(userID: "u", notificationID: "n-match") == .notRemembered(forgotten: true))
        #expect(state.history(userID: "u", query: HistoryQuery(limit: 100)).items.count == 6)
    }

    @Test("the decisions survive the changelog, read ones with their app; a rollback leaves none behind")
    func changelog() throws {
        var state = PartitionState()
        _ = try Self.everyReason(&state)
        _ = state.apply(
            NotificationEvent(kind: .read, id: "r", userID: "u", appID: "mail", notificationIDs: ["n-app"]),
            lookup: .available(nil), nowMilliseconds: 2_000
        )
        let before = state.history(userID: "u", query: HistoryQuery(limit: 100))
        let log = FocusScheduleTests.changelog(&state)
        #expect(log.allSatisfy { $0.0[1] != UInt8(ascii: "E") }, "entries are keyed by their ids")
        let restored = try FocusScheduleTests.restored(log)
        let after = restored.history(userID: "u", query: HistoryQuery(limit: 100))
        #expect(after == before)
        let read = try #require(after.items.first { $0.notificationID == "n-app" })
        #expect(!read.unread && read.appID == "mail" && read.reason == .appSilenced)

        // Rolled back, a notification is not in the history (nor the changelog).
        _ = state.decide(
            Self.event("n-late"), lookup: .available(nil), defaultRateLimits: .none, repeatedWindowMilliseconds: 0,
            nowMilliseconds: 3_000, sentAtMilliseconds: 3_000, sourceOffset: 40)
        state.rollback()
        #expect(state.history(userID: "u", query: HistoryQuery(limit: 100)) == before)
        #expect(state.historyItem(userID: "u", notificationID: "n-late") == .notRemembered(forgotten: false))
    }

    @Test("the ids' buffer is compacted after commits once it has doubled: it stays proportional to what is remembered")
    func idsCompacted() throws {
        var state = PartitionState(maxUnreadPerApp: 10, dedupeWindow: 10)
        var log: [([UInt8], [UInt8]?)] = []
        for index in 0..<20_000 {
            _ = state.decide(
                Self.event("notification-\(index)"), lookup: .available(nil), defaultRateLimits: .none,
                repeatedWindowMilliseconds: 0, nowMilliseconds: Int64(index), sentAtMilliseconds: Int64(index),
                sourceOffset: Int64(index))
            if index % 100 == 99 { log += FocusScheduleTests.changelog(&state) }
        }
        // 380,000 bytes of ids went through; ten are remembered.
        #expect(state.idBytes.count < 2 * (1 << 16))
        let page = state.history(userID: "u", query: HistoryQuery(limit: 100))
        #expect(page.items.map(\.notificationID) == (19_990..<20_000).reversed().map { "notification-\($0)" })
        #expect(page.items.map(\.sourceOffset) == (19_990..<20_000).reversed().map { Int64($0) })
        // A rollback after a compaction puts back the ids as they were.
        _ = state.decide(
            Self.event("late"), lookup: .available(nil), defaultRateLimits: .none, repeatedWindowMilliseconds: 0,
            nowMilliseconds: 30_000, sentAtMilliseconds: 30_000, sourceOffset: 30_000)
        state.rollback()
        #expect(state.history(userID: "u", query: HistoryQuery(limit: 100)) == page)
        // The changelog of it all, restored: the same ids.
        let restored = try FocusScheduleTests.restored(log)
        #expect(
            restored.history(userID: "u", query: HistoryQuery(limit: 100)).items.map(\.notificationID)
                == page.items.map(\.notificationID))
    }

    @Test(
        "a restore ends with its ids kept once each and room in the entry table for as many entries again: the worker's first commits and records do neither"
    )
    func restoreLeavesNoStateSizedWork() throws {
        var state = PartitionState(maxUnreadPerApp: 10, dedupeWindow: 100)
        var log: [([UInt8], [UInt8]?)] = []
        for user in 0..<2_000 {
            for index in 0..<10 {
                _ = state.decide(
                    NotificationEvent(id: "notification-\(user)-\(index)", userID: "user-\(user)", appID: "chat"),
                    lookup: .available(nil), defaultRateLimits: .none, repeatedWindowMilliseconds: 0,
                    nowMilliseconds: 1_000, sentAtMilliseconds: 1_000, sourceOffset: Int64(user))
            }
            if user % 100 == 99 { log += FocusScheduleTests.changelog(&state) }
        }
        // Each entry written twice (a compacted topic can hold both), the older first.
        var restored = try FocusScheduleTests.restored(log + log)
        #expect(restored.idBytes.count == state.idBytes.count, "each id once: \(restored.idBytes.count) bytes")
        #expect(restored.idBytes.count >= 1 << 16)
        let compacted = restored.idBytesAfterCompaction
        #expect(compacted == restored.idBytes.count, "the first commit does not compact them again")
        #expect(restored.table.slots.count >= 4 * restored.table.count)
        let slots = restored.table.slots.count
        for index in 0..<restored.table.count {
            _ = restored.decide(
                NotificationEvent(id: "new-\(index)", userID: "user-\(index % 2_000)", appID: "chat"),
                lookup: .available(nil), defaultRateLimits: .none, repeatedWindowMilliseconds: 0,
                nowMilliseconds: 2_000, sentAtMilliseconds: 2_000, sourceOffset: Int64(index))
        }
        #expect(restored.table.slots.count == slots, "as many entries again without growing")
        _ = FocusScheduleTests.changelog(&restored)
        #expect(restored.idBytesAfterCompaction == compacted, "the first commit after it compacted nothing")
    }

    @Test(
        "a Focus the system offers is written as a code, an input offset as its distance from the as-of, no relevance as a flag: all restore as they were"
    )
    func compactDecisions() throws {
        var compiler = FocusContextCompiler()
        let custom = try compiler.compile(
            FocusContext(
                userID: "u", version: 3, focus: "Deep Work", apps: ["chat": .init(filterPredicate: "SELF == 'work'")]))
        let decided: [(String, CompiledFocusContext?, Double?)] = [
            ("n-work", try Self.work(version: 7), nil), ("n-deep", custom, 0.5), ("n-none", nil, nil),
        ]
        func decideAll(_ state: inout PartitionState) {
            for (index, (id, context, relevance)) in decided.enumerated() {
                var event = Self.event(id)
                event.relevanceScore = relevance
                _ = state.decide(
                    event, lookup: .available(context), defaultRateLimits: .none, repeatedWindowMilliseconds: 0,
                    nowMilliseconds: 1_000, sentAtMilliseconds: 1_000, sourceOffset: 5_000_000 + Int64(index))
            }
        }
        var state = PartitionState()
        decideAll(&state)
        let before = state.history(userID: "u", query: HistoryQuery(limit: 10))
        #expect(before.items.map(\.focus) == [nil, "Deep Work", "Work"])
        var log: [([UInt8], [UInt8]?)] = []
        state.writeChanges(asOf: 5_000_010) { key, value in log.append((key, value)) }
        state.commit()
        let values = Dictionary(
            uniqueKeysWithValues: log.compactMap { key, value in
                key[1] == UInt8(ascii: "I")
                    ? value.map { (String(decoding: key.dropFirst(3).prefix(6), as: UTF8.self), $0) } : nil
            })
        let work = try #require(values["n-work"])
        #expect(work[0] & 128 != 0, "no relevance byte")
        #expect(!work.contains(subsequence: Array("Work".utf8)), "Work by its code")
        #expect(try #require(values["n-deep"]).contains(subsequence: Array("Deep Work".utf8)))
        // The offset's distance from the as-of (10) is one byte where 5,000,001 takes four.
        var absolute = PartitionState()
        decideAll(&absolute)
        let withoutAsOf = FocusScheduleTests.changelog(&absolute)
        let compactBytes = log.reduce(0) { $0 + ($1.1?.count ?? 0) }
        let absoluteBytes = withoutAsOf.reduce(0) { $0 + ($1.1?.count ?? 0) }
        #expect(compactBytes == absoluteBytes - 9)

        var restored = PartitionState()
        for (key, value) in log { try restored.restore(key: key, value: value, asOf: 5_000_010) }
        restored.finishRestore()
        #expect(restored.history(userID: "u", query: HistoryQuery(limit: 10)) == before)
        #expect(
            try FocusScheduleTests.restored(withoutAsOf).history(userID: "u", query: HistoryQuery(limit: 10)) == before)
        // A distance needs the record's as-of.
        var headerless = PartitionState()
        let entry = try #require(log.first { $0.0[1] == UInt8(ascii: "I") })
        #expect(throws: StateFormatError.self) { try headerless.restore(key: entry.0, value: entry.1) }
    }

    @Test(
        "decided-at is written as its distance below the record's timestamp: 2 bytes instead of 6, restored exactly, and unreadable without the timestamp"
    )
    func decidedAtByDistance() throws {
        let decidedAt: Int64 = 1_800_000_000_000
        func decideAll(_ state: inout PartitionState) throws {
            let work = try Self.work(version: 7)
            for index in 0..<3 {
                _ = state.decide(
                    Self.event("n-\(index)"), lookup: .available(work), defaultRateLimits: .none,
                    repeatedWindowMilliseconds: 0, nowMilliseconds: decidedAt + Int64(index),
                    sentAtMilliseconds: decidedAt + Int64(index), sourceOffset: 100 + Int64(index))
            }
        }
        /// The entry records `state` writes, with the record timestamp `writtenAt`.
        func entries(_ state: inout PartitionState, writtenAt: Int64?) -> [([UInt8], [UInt8]?)] {
            var log: [([UInt8], [UInt8]?)] = []
            state.writeChanges(asOf: 110, writtenAt: writtenAt) { key, value in log.append((key, value)) }
            state.commit()
            return log
        }
        var state = PartitionState()
        try decideAll(&state)
        let before = state.history(userID: "u", query: HistoryQuery(limit: 10))
        let writtenAt = decidedAt + 1_000
        let log = entries(&state, writtenAt: writtenAt)
        var full = PartitionState()
        try decideAll(&full)
        let fullLog = entries(&full, writtenAt: nil)
        // Three entries, 998–1,000 ms below the timestamp: 2 bytes each where the time takes 6.
        let bytes = { (log: [([UInt8], [UInt8]?)]) in log.reduce(0) { $0 + ($1.1?.count ?? 0) } }
        #expect(bytes(log) == bytes(fullLog) - 12)

        var restored = PartitionState()
        for (key, value) in log { try restored.restore(key: key, value: value, asOf: 110, writtenAt: writtenAt) }
        restored.finishRestore()
        #expect(restored.history(userID: "u", query: HistoryQuery(limit: 10)) == before)
        let newest = restored.history(userID: "u", query: HistoryQuery(limit: 1)).items.first
        #expect(newest?.decidedAtMilliseconds == decidedAt + 2)
        // Without the record's timestamp the distance means nothing: the record is refused.
        var untimed = PartitionState()
        let entry = try #require(log.first { $0.0[1] == UInt8(ascii: "I") })
        #expect(throws: StateFormatError.self) { try untimed.restore(key: entry.0, value: entry.1, asOf: 110) }
        // A timestamp behind decided-at (a clock set back) leaves decided-at in full.
        var behind = PartitionState()
        try decideAll(&behind)
        let behindLog = entries(&behind, writtenAt: decidedAt - 1)
        #expect(bytes(behindLog) == bytes(fullLog))
        var restoredBehind = PartitionState()
        for (key, value) in behindLog { try restoredBehind.restore(key: key, value: value, asOf: 110) }
        restoredBehind.finishRestore()
        #expect(restoredBehind.history(userID: "u", query: HistoryQuery(limit: 10)) == before)
    }

    @Test("an entry written before ids and decisions were kept restores with them absent, and goes under its own key")
    func olderRecords() throws {
        // The form keyed by the id's hash: unread, app 1, arrival 0, decided at 1000, criteria "x".
        var key: [UInt8] = [0, UInt8(ascii: "E")]
        withUnsafeBytes(of: PartitionState.idHash("old").littleEndian) { key.append(contentsOf: $0) }
        key.append(contentsOf: "u".utf8)
        var value: [UInt8] = [1, 1, 0]
        PartitionState.writeVarint(1_000, to: &value)
        value += [0, 2, UInt8(ascii: "x")]
        var state = PartitionState(dedupeWindow: 1)
        try state.restore(key: [0, UInt8(ascii: "N"), 1] + Array("u".utf8), value: Array("chat".utf8))
        try state.restore(key: key, value: value)
        state.finishRestore()
        let item = try #require(state.history(userID: "u", query: HistoryQuery(limit: 10)).items.first)
        #expect(item.notificationID == nil && item.reason == nil && item.focus == nil && item.sourceOffset == nil)
        #expect(item.appID == "chat" && item.unread && item.decidedAtMilliseconds == 1_000)
        #expect(state.historyItem(userID: "u", notificationID: "old").notificationID == .some(nil))
        // Read (and out of the one-notification window once another comes), it goes: the
        // tombstone is its old key, not one with its id.
        _ = state.apply(
            NotificationEvent(kind: .read, id: "r", userID: "u", appID: "chat", notificationIDs: ["old"]),
            lookup: .available(nil), nowMilliseconds: 2_000
        )
        _ = state.apply(Self.event("new"), lookup: .available(nil), nowMilliseconds: 2_001)
        var tombstones: [[UInt8]] = []
        state.writeChanges { key, value in
            if value == nil && (key[1] == UInt8(ascii: "E") || key[1] == UInt8(ascii: "I")) { tombstones.append(key) }
        }
        #expect(tombstones == [key])
    }
}

extension Array where Element == UInt8 {
    fileprivate func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= self.count else { return false }
        return (0...(self.count - subsequence.count)).contains {
            Array(self[$0..<$0 + subsequence.count]) == subsequence
        }
    }
}

extension HistoryLookup {
    /// The id of what was found.
    fileprivate var notificationID: String?? {
        guard case .found(let item) = self else { return .none }
        return .some(item.notificationID)
    }
}
