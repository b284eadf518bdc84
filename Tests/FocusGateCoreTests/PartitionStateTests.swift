@testable import FocusGateCore
import Testing

@Suite("Partition state: dedupe, unread and badges, rollback, changelog")
struct PartitionStateTests {
    static let now = BadgeRecordTests.now
    static let work = BadgeRecordTests.context(version: 1)

    static func notification(_ id: String, _ criteria: String? = "work", user: String = "u", app: String = "chat")
        -> NotificationEvent
    {
        .fixture(id, user: user, app: app, criteria: criteria)
    }

    static func read(_ ids: [String], user: String = "u", app: String = "chat") -> NotificationEvent {
        .readFixture(ids, user: user, app: app)
    }

    /// The badge update of an admission that must not be a duplicate.
    static func update(_ admission: PartitionState.Admission) -> BadgeUpdate? {
        guard case .applied(let update) = admission else {
            Issue.record("unexpected duplicate")
            return nil
        }
        return update
    }

    @Test("Focus on → Focus changes → Focus off → read → clear")
    func lifecycle() throws {
        var state = PartitionState()
        let work = Self.work
        let admit = { (state: inout PartitionState, id: String, criteria: String?) in
            Self.update(
                state.apply(Self.notification(id, criteria), lookup: .available(work), nowMilliseconds: Self.now)
                    .admission)
        }
        let first = try #require(admit(&state, "n1", "work"))
        #expect(
            first.badge == 1 && first.unread == 1 && first.sequence == 1 && first.focus == "Work"
                && first.contextVersion == 1)
        #expect(admit(&state, "n2", "home") == nil, "a silenced notification is unread but does not change the badge")
        #expect(state.badges(userID: "u") == [.init(appID: "chat", badge: 1, unread: 2, sequence: 1)])
        let third = try #require(admit(&state, "n3", nil))
        #expect(third.badge == 2 && third.unread == 3 && third.sequence == 2, "no criteria: delivered, counted")

        let personal = BadgeRecordTests.context(version: 2, focus: "Personal", predicate: "SELF == 'home'")
        #expect(
            state.recompute(userID: "u", context: personal, nowMilliseconds: Self.now).isEmpty,
            "n1 stops counting, n2 starts: the badge stays 2, nothing is published")
        let off = state.recompute(
            userID: "u", context: BadgeRecordTests.context(version: 3, focus: nil), nowMilliseconds: Self.now)
        #expect(off.map(\.badge) == [3])
        #expect(off.first?.focus == nil && off.first?.contextVersion == 3 && off.first?.sequence == 3)

        let read = try #require(
            Self.update(
                state.apply(Self.read(["n1", "unknown"]), lookup: .available(nil), nowMilliseconds: Self.now).admission)
        )
        #expect(read.badge == 2 && read.unread == 2 && read.sequence == 4)
        let clear = NotificationEvent(kind: .clear, id: "c", userID: "u", appID: "chat")
        let cleared = try #require(
            Self.update(state.apply(clear, lookup: .available(nil), nowMilliseconds: Self.now).admission))
        #expect(cleared.badge == 0 && cleared.unread == 0 && cleared.sequence == 5)
        #expect(
            state.apply(clear, lookup: .available(nil), nowMilliseconds: Self.now).admission == .applied(nil),
            "no change, no update")
    }

    @Test("hideBadges counts nothing; an expired context counts everything")
    func hideAndExpiry() {
        var state = PartitionState()
        let hidden = BadgeRecordTests.context(version: 1, hideBadges: true)
        #expect(
            state.apply(Self.notification("n1"), lookup: .available(hidden), nowMilliseconds: Self.now).admission
                == .applied(nil))
        let expiring = BadgeRecordTests.context(version: 2, expiresAt: Self.now + 1000)
        #expect(state.recompute(userID: "u", context: expiring, nowMilliseconds: Self.now).map(\.badge) == [1])
        _ = state.apply(Self.notification("n2", "home"), lookup: .available(expiring), nowMilliseconds: Self.now)
        #expect(state.badges(userID: "u").first?.badge == 1)
        let later = state.recompute(userID: "u", context: expiring, nowMilliseconds: Self.now + 1001)
        #expect(later.map(\.badge) == [2] && later.first?.focus == nil)
    }

    @Test("an id remembered for the user is a duplicate: in the window, or older but still unread")
    func dedupe() {
        var state = PartitionState(dedupeWindow: 3)
        let admit = { (state: inout PartitionState, event: NotificationEvent) in
            state.apply(event, lookup: .available(nil), nowMilliseconds: Self.now).admission
        }
        #expect(admit(&state, Self.notification("n1")) != .duplicate)
        #expect(admit(&state, Self.notification("n1")) == .duplicate)
        #expect(admit(&state, Self.notification("n1", app: "mail")) == .duplicate, "ids are per user, not per app")
        #expect(admit(&state, Self.notification("n1", user: "other")) != .duplicate, "ids are per user")
        _ = admit(&state, Self.read(["n1"]))
        #expect(admit(&state, Self.notification("n1")) == .duplicate, "read, but still in the window")
        for id in ["n2", "n3", "n4"] { _ = admit(&state, Self.notification(id)) }
        #expect(admit(&state, Self.notification("n1")) != .duplicate, "read and out of a window of 3")
        // n2 left the window but is unread: still a duplicate.
        for id in ["n5", "n6", "n7"] { _ = admit(&state, Self.notification(id)) }
        #expect(admit(&state, Self.notification("n2")) == .duplicate)
        #expect(state.entryCount == 8, "the other user's n1, n1 (again) and n2…n7: unread; nothing else is kept")
    }

    @Test(
        "a notification id as a worker decodes it: a UUID held in the event is the id given as a String (a duplicate either way, read back from the history, read by a read event)"
    )
    func decodedLongID() throws {
        var state = PartitionState()
        var pool = IdentifierPool()
        let user = "3f2c8a4e-1d2b-4c5e-8f90-a1b2c3d4e5f6"
        let id = "6f1c2d4e-8a9b-4c3d-9e8f-0a1b2c3d4e5f"
        let decoded = try Array(#"{"id":"\#(id)","userId":"\#(user)","appId":"chat","filterCriteria":"work"}"#.utf8)
            .withUnsafeBytes { try EventDecoder().decode(value: $0, key: nil, identifiers: &pool) }
        try #require(decoded.identifier.isInline)
        let first = Self.update(
            state.apply(decoded, lookup: .available(Self.work), nowMilliseconds: Self.now).admission)
        #expect(first?.badge == 1)
        #expect(state.apply(decoded, lookup: .available(Self.work), nowMilliseconds: Self.now).admission == .duplicate)
        #expect(
            state.apply(Self.notification(id, user: user), lookup: .available(Self.work), nowMilliseconds: Self.now)
                .admission == .duplicate)
        let page = state.history(userID: user, query: HistoryQuery(limit: 10))
        #expect(page.items.map(\.notificationID) == [id])
        let read = Self.update(
            state.apply(Self.read([id], user: user), lookup: .available(Self.work), nowMilliseconds: Self.now).admission
        )
        #expect(read?.badge == 0 && read?.unread == 0)
    }

    @Test("unread per app is capped: the oldest are dropped and counted")
    func cap() {
        var state = PartitionState(maxUnreadPerApp: 3)
        for index in 0..<5 {
            _ = state.apply(Self.notification("n\(index)", nil), lookup: .available(nil), nowMilliseconds: Self.now)
        }
        #expect(state.badges(userID: "u") == [.init(appID: "chat", badge: 3, unread: 3, sequence: 3)])
        #expect(state.droppedUnread == 2)
        #expect(
            state.apply(Self.read(["n0", "n1"]), lookup: .available(nil), nowMilliseconds: Self.now).admission
                == .applied(nil),
            "the dropped ones are gone: reading them changes nothing")
    }

    @Test("badge updates wait for the commit, coalesced to the latest per (user, app); a rollback drops them")
    func coalescedBadgeUpdates() {
        var state = PartitionState()
        for id in ["n1", "n2", "n3"] {
            _ = state.apply(Self.notification(id), lookup: .available(nil), nowMilliseconds: Self.now)
        }
        _ = state.apply(Self.notification("m1", app: "mail"), lookup: .available(nil), nowMilliseconds: Self.now)
        _ = state.apply(Self.read(["n1"]), lookup: .available(nil), nowMilliseconds: Self.now + 5)
        #expect(
            state.pendingBadgeUpdates.map { "\($0.appID) \($0.badge) #\($0.sequence)" } == ["chat 2 #4", "mail 1 #1"])
        #expect(state.pendingBadgeUpdates.first?.updatedAtMilliseconds == Self.now + 5)
        state.commit()
        #expect(state.pendingBadgeUpdates.isEmpty)
        _ = state.apply(Self.notification("n4"), lookup: .available(nil), nowMilliseconds: Self.now)
        #expect(state.pendingBadgeUpdates.map(\.sequence) == [5])
        state.rollback()
        #expect(state.pendingBadgeUpdates.isEmpty)
        _ = state.apply(Self.notification("n4"), lookup: .available(nil), nowMilliseconds: Self.now)
        #expect(state.pendingBadgeUpdates.map(\.sequence) == [5], "the rolled-back change is made again, once")
    }

    @Test("an app left with nothing unread and never published goes; its changelog keys become tombstones")
    func emptyAppGoes() {
        var state = PartitionState()
        let sleep = BadgeRecordTests.context(version: 1, focus: "Sleep", predicate: "FALSEPREDICATE")
        _ = state.apply(Self.notification("n1"), lookup: .available(sleep), nowMilliseconds: Self.now)
        state.commit()
        _ = state.apply(Self.read(["n1"]), lookup: .available(sleep), nowMilliseconds: Self.now)
        #expect(state.badges(userID: "u").isEmpty)
        var tombstones = 0
        state.writeChanges { (_, value) in if value == nil { tombstones += 1 } }
        #expect(tombstones == 2, "the app's name and counts keys")
    }

    @Test(
        "an app slot freed and taken by another user's app before the commit: tombstones for the one, records for the other"
    )
    func freedAppSlotTakenBeforeCommit() {
        var state = PartitionState()
        let sleep = BadgeRecordTests.context(version: 1, focus: "Sleep", predicate: "FALSEPREDICATE")
        _ = state.apply(Self.notification("n1"), lookup: .available(sleep), nowMilliseconds: Self.now)
        state.commit()
        _ = state.apply(Self.read(["n1"]), lookup: .available(sleep), nowMilliseconds: Self.now)  // u's chat goes
        _ = state.apply(Self.notification("m1", user: "v"), lookup: .available(sleep), nowMilliseconds: Self.now)
        var appRecords: [(user: String, kind: UInt8, isTombstone: Bool)] = []
        state.writeChanges { (key, value) throws(Never) in
            guard key.count > 3, key[1] == UInt8(ascii: "N") || key[1] == UInt8(ascii: "A") else { return }
            // 00, kind, the app's number (one byte here), the user id.
            appRecords.append((String(decoding: key[3...], as: UTF8.self), key[1], value == nil))
        }
        let ofU = appRecords.filter { $0.user == "u" }
        #expect(ofU.count == 2 && ofU.allSatisfy { $0.isTombstone }, "u's app name and counts keys: tombstones")
        #expect(
            appRecords.contains { $0.user == "v" && $0.kind == UInt8(ascii: "N") && !$0.isTombstone },
            "v's app name is written, though u's change pointed at the same slot")
    }

    @Test("rollback puts back exactly the state of the last commit, including new users and freed entries")
    func rollback() throws {
        var state = PartitionState(dedupeWindow: 2)
        _ = state.apply(Self.notification("n1"), lookup: .available(nil), nowMilliseconds: Self.now)
        _ = state.apply(Self.notification("n2"), lookup: .available(nil), nowMilliseconds: Self.now)
        _ = state.apply(Self.read(["n1"]), lookup: .available(nil), nowMilliseconds: Self.now)
        state.commit()
        let badges = state.badges(userID: "u")
        #expect(!state.hasChanges)

        // n1 leaves the window and, read, is freed.
        _ = state.apply(Self.notification("n3"), lookup: .available(nil), nowMilliseconds: Self.now)
        _ = state.apply(Self.notification("x1", user: "new"), lookup: .available(nil), nowMilliseconds: Self.now)
        _ = state.recompute(userID: "u", context: Self.work, nowMilliseconds: Self.now)
        #expect(Set(state.changedUsers) == ["u", "new"])
        state.rollback()
        #expect(!state.hasChanges && state.badges(userID: "u") == badges)
        #expect(!state.contains(userID: "new") && state.entryCount == 2)
        #expect(
            state.apply(Self.notification("n1"), lookup: .available(nil), nowMilliseconds: Self.now).admission
                == .duplicate)
        #expect(
            state.apply(Self.notification("n3"), lookup: .available(nil), nowMilliseconds: Self.now).admission
                != .duplicate)
    }

    @Test("a restore tells apart users whose ids share a prefix or a length, read one after another or interleaved")
    func restoreUsersAlike() throws {
        var state = PartitionState()
        let users = ["u1", "u10", "u1", "u2", "u2", "", "u10", "u1"]
        for (index, user) in users.enumerated() {
            _ = state.apply(
                Self.notification("n\(index)", user: user), lookup: .available(nil), nowMilliseconds: Self.now
            )
        }
        var log: [([UInt8], [UInt8]?)] = []
        state.writeChanges { key, value in log.append((key, value)) }
        state.commit()
        var restored = PartitionState()
        for (key, value) in log { try restored.restore(key: key, value: value) }
        restored.finishRestore()
        #expect(restored.userCount == 4 && restored.entryCount == users.count)
        for user in Set(users) {
            #expect(restored.badges(userID: user) == state.badges(userID: user), "\(user)")
        }
        #expect(restored.badges(userID: "u1").first?.unread == 3)

        // Records restored and then rolled back (never finished) leave no user behind to compare with.
        var rolledBack = PartitionState()
        for (key, value) in log.prefix(3) { try rolledBack.restore(key: key, value: value) }
        rolledBack.rollback()
        for (key, value) in log { try rolledBack.restore(key: key, value: value) }
        rolledBack.finishRestore()
        #expect(rolledBack.userCount == 4 && rolledBack.badges(userID: "u10") == state.badges(userID: "u10"))
    }

    @Test("the changelog restores badges, unread and the dedupe window; sequences continue")
    func roundTrip() throws {
        var state = PartitionState(dedupeWindow: 2)
        for id in ["n1", "n2", "n3"] {
            _ = state.apply(Self.notification(id), lookup: .available(Self.work), nowMilliseconds: Self.now)
        }
        _ = state.apply(
            Self.notification("m1", "", app: "mail"), lookup: .available(Self.work), nowMilliseconds: Self.now
        )
        _ = state.apply(Self.read(["n3"]), lookup: .available(Self.work), nowMilliseconds: Self.now)
        var log: [([UInt8], [UInt8]?)] = []
        state.writeChanges { key, value in log.append((key, value)) }
        state.commit()

        var restored = PartitionState(dedupeWindow: 2)
        for (key, value) in log { try restored.restore(key: key, value: value) }
        restored.finishRestore()
        #expect(restored.badges(userID: "u") == state.badges(userID: "u"))
        #expect(restored.entryCount == state.entryCount)
        #expect(
            restored.apply(Self.notification("n3"), lookup: .available(Self.work), nowMilliseconds: Self.now).admission
                == .duplicate)
        #expect(
            restored.apply(Self.notification("n1"), lookup: .available(Self.work), nowMilliseconds: Self.now).admission
                == .duplicate,
            "out of the window but unread")
        let next = try #require(
            Self.update(
                restored.apply(Self.read(["n1"]), lookup: .available(Self.work), nowMilliseconds: Self.now).admission))
        #expect(next.sequence == 5 && next.badge == 1, "n1…n3 made 1, 2, 3; reading n3 made 4")
    }

    @Test("an app's counts ride with its newest unread entry's record; written anew when it stops being the newest")
    func countsRideWithNewestEntry() throws {
        var state = PartitionState()
        var log: [(key: [UInt8], value: [UInt8]?)] = []
        func commit() -> [UInt8] { Self.commitKinds(&state, to: &log) }
        let sleep = BadgeRecordTests.context(version: 2, focus: "Sleep", predicate: "FALSEPREDICATE")
        _ = state.apply(Self.notification("n1"), lookup: .available(nil), nowMilliseconds: Self.now)
        #expect(commit() == [UInt8(ascii: "I"), UInt8(ascii: "N")], "a new app's name and its entry; no counts record")
        // Sleep recounts (badge 0, sequence 2); n2 is the newest and carries that; n1's record goes.
        _ = state.apply(Self.notification("n2"), lookup: .available(sleep), nowMilliseconds: Self.now)
        _ = state.apply(Self.read(["n1"]), lookup: .available(sleep), nowMilliseconds: Self.now)
        #expect(commit() == [UInt8(ascii: "I"), UInt8(ascii: "I")])
        // Reading n2 changes no badge (it never counted), but its record no longer carries the counts.
        _ = state.apply(Self.read(["n2"]), lookup: .available(sleep), nowMilliseconds: Self.now)
        #expect(commit() == [UInt8(ascii: "A"), UInt8(ascii: "I")])

        for records in [log, Self.compacted(log)] {
            var restored = PartitionState()
            for record in records { try restored.restore(key: record.key, value: record.value) }
            restored.finishRestore()
            #expect(restored.badges(userID: "u") == [Badge(appID: "chat", badge: 0, unread: 0, sequence: 2)])
        }
    }

    @Test("a context change that recounts several apps writes one counts record for the user; later records win")
    func userCountsRecord() throws {
        var state = PartitionState()
        var log: [(key: [UInt8], value: [UInt8]?)] = []
        func commit() -> [UInt8] { Self.commitKinds(&state, to: &log) }
        for app in ["chat", "mail", "news"] {
            _ = state.apply(Self.notification("\(app)-1", app: app), lookup: .available(nil), nowMilliseconds: Self.now)
        }
        _ = commit()
        let hidden = BadgeRecordTests.context(version: 2, hideBadges: true)
        #expect(state.recompute(userID: "u", context: hidden, nowMilliseconds: Self.now).count == 3)
        #expect(commit() == [UInt8(ascii: "U")], "three apps' counts in one record")
        // A new version that counts alike: no badge changes, what each app was counted under does.
        let hiddenAgain = BadgeRecordTests.context(version: 3, hideBadges: true)
        #expect(state.recompute(userID: "u", context: hiddenAgain, nowMilliseconds: Self.now).isEmpty)
        #expect(commit() == [UInt8(ascii: "U")], "the counted context of the three apps, in one record")
        // One app's newest entry is read (no badge change: nothing counts): that app's own
        // record, after the user's.
        _ = state.apply(Self.read(["mail-1"], app: "mail"), lookup: .available(hiddenAgain), nowMilliseconds: Self.now)
        #expect(commit() == [UInt8(ascii: "A"), UInt8(ascii: "I")])

        for records in [log, Self.compacted(log)] {
            var restored = PartitionState()
            for record in records { try restored.restore(key: record.key, value: record.value) }
            restored.finishRestore()
            #expect(restored.badges(userID: "u") == state.badges(userID: "u"))
            #expect(restored.badges(userID: "u").map(\.badge) == [0, 0, 0])
            #expect(restored.badges(userID: "u").map(\.sequence) == [2, 2, 2])
        }
    }

    @Test(
        "a restored app keeps what its badge was counted under: the same context recounts nothing, another recounts",
        arguments: [false, true])
    func restoredCountsNeedNoRecount(compacting: Bool) throws {
        let work = BadgeRecordTests.context(version: 4)
        var state = PartitionState()
        var log: [(key: [UInt8], value: [UInt8]?)] = []
        // 50 unread under Work, every other one matching its predicate; a read in between.
        for index in 0..<50 {
            _ = state.apply(
                Self.notification("n\(index)", index % 2 == 0 ? "work" : "home"), lookup: .available(work),
                nowMilliseconds: Self.now
            )
            if index % 10 == 9 { _ = Self.commitKinds(&state, to: &log) }
        }
        _ = state.apply(Self.read(["n0"]), lookup: .available(work), nowMilliseconds: Self.now)
        _ = Self.commitKinds(&state, to: &log)
        let badges = state.badges(userID: "u")
        #expect(badges.map(\.badge) == [24] && badges.map(\.unread) == [49])

        var restored = PartitionState()
        for record in compacting ? Self.compacted(log) : log {
            try restored.restore(key: record.key, value: record.value)
        }
        restored.finishRestore()
        #expect(restored.badges(userID: "u") == badges)
        let update = Self.update(
            restored.apply(Self.notification("n50"), lookup: .available(work), nowMilliseconds: Self.now).admission)
        #expect(restored.recountedEntries == 0, "the same context: the restored count stands")
        #expect(update?.badge == 25 && update?.unread == 50)
        // Restored entries read: n2 counted, n3 did not (worked out as each leaves).
        let read = Self.update(
            restored.apply(Self.read(["n2", "n3"]), lookup: .available(work), nowMilliseconds: Self.now).admission)
        #expect(read?.badge == 24 && read?.unread == 48)
        #expect(restored.recountedEntries == 0)

        // Another version that counts everything: the 48 earlier unread are looked at again.
        let all = BadgeRecordTests.context(version: 5, predicate: "TRUEPREDICATE")
        let recounted = Self.update(
            restored.apply(Self.notification("n51", "home"), lookup: .available(all), nowMilliseconds: Self.now)
                .admission)
        #expect(restored.recountedEntries == 48)
        #expect(recounted?.badge == 49 && recounted?.unread == 49)
    }

    @Test("records written before the counted context was kept restore, and the app's next event recounts it")
    func restoredWithoutCountedContext() throws {
        var entryKey: [UInt8] = [0, UInt8(ascii: "E")]
        withUnsafeBytes(of: PartitionState.idHash("n1").littleEndian) { entryKey.append(contentsOf: $0) }
        entryKey.append(contentsOf: "u".utf8)
        var entryValue: [UInt8] = [1 | 16, 1, 1, 1, 0]  // unread, counts (sequence 1, badge 1); app 1, arrival 0
        PartitionState.writeVarint(UInt64(Self.now), to: &entryValue)
        entryValue.append(0)  // no relevance
        entryValue.append(5)
        entryValue.append(contentsOf: "work".utf8)
        var restored = PartitionState()
        try restored.restore(key: [0, UInt8(ascii: "N"), 1] + Array("u".utf8), value: Array("chat".utf8))
        try restored.restore(key: entryKey, value: entryValue)
        restored.finishRestore()
        #expect(restored.badges(userID: "u") == [Badge(appID: "chat", badge: 1, unread: 1, sequence: 1)])
        let work = BadgeRecordTests.context(version: 4)
        let update = Self.update(
            restored.apply(Self.notification("n2", "home"), lookup: .available(work), nowMilliseconds: Self.now)
                .admission)
        #expect(restored.recountedEntries == 1, "counted under an unknown context: recounted")
        #expect(update == nil, "n1 still counts, n2 does not: the badge stays 1")
        #expect(restored.badges(userID: "u") == [Badge(appID: "chat", badge: 1, unread: 2, sequence: 1)])
    }

    @Test("unread dropped by a restore under a smaller cap still have their later changes written")
    func restoreUnderSmallerCap() throws {
        var state = PartitionState(maxUnreadPerApp: 3, dedupeWindow: 3)
        var log: [(key: [UInt8], value: [UInt8]?)] = []
        for id in ["n1", "n2", "n3"] {
            _ = state.apply(Self.notification(id), lookup: .available(nil), nowMilliseconds: Self.now)
        }
        state.writeChanges { key, value in log.append((key, value)) }
        var restored = PartitionState(maxUnreadPerApp: 2, dedupeWindow: 3)
        for record in log { try restored.restore(key: record.key, value: record.value) }
        restored.finishRestore()  // n1 is no longer unread, still in the window
        #expect(restored.badges(userID: "u").map(\.unread) == [2])
        // n4 pushes n1 out of the window: it goes, and its key must become a tombstone.
        _ = restored.apply(Self.notification("n4"), lookup: .available(nil), nowMilliseconds: Self.now)
        var tombstones: [[UInt8]] = []
        restored.writeChanges { key, value in if value == nil { tombstones.append(key) } }
        let n1 = log.first { $0.key[1] == UInt8(ascii: "I") }!.key  // n1's entry came first
        #expect(tombstones.contains(n1))
    }

    /// Writes the state's changes to `log` and commits; the kinds of the records written, sorted
    /// (the Focus status record left out).
    static func commitKinds(_ state: inout PartitionState, to log: inout [(key: [UInt8], value: [UInt8]?)])
        -> [UInt8]
    {
        let start = log.count
        state.writeChanges { key, value in log.append((key, value)) }
        state.commit()
        return log[start...].map { $0.key[1] }.filter { $0 != UInt8(ascii: "F") }.sorted()
    }

    /// The newest record of each key, in log order: what compaction leaves.
    static func compacted(_ log: [(key: [UInt8], value: [UInt8]?)]) -> [(key: [UInt8], value: [UInt8]?)] {
        var newest: [[UInt8]: Int] = [:]
        for (offset, record) in log.enumerated() { newest[record.key] = offset }
        return log.enumerated().filter { newest[$0.element.key] == $0.offset }.map(\.element)
    }

    @Test("a record of the first state form is refused as legacy; bad bytes as malformed")
    func refusals() {
        var state = PartitionState()
        #expect(
            throws: StateFormatError(
                code: .legacyFormat, message: "a whole-user state record of the first state form (key = user id)")
        ) {
            try state.restore(key: Array("u-1".utf8), value: [1, 0, 0])
        }
        for (key, value) in [
            ([0, UInt8(ascii: "E"), 1, 2], [UInt8]()), ([0, UInt8(ascii: "E")] + [UInt8](repeating: 1, count: 9), [1]),
            ([0, UInt8(ascii: "A"), 0, 0x75], [1, 1]), ([0, UInt8(ascii: "Z")], [1]),
            ([0, UInt8(ascii: "A"), 1, 0x75], [1, 1, 1]),
            // An app's counts on an entry that is not unread.
            ([0, UInt8(ascii: "E")] + [UInt8](repeating: 1, count: 9), [16, 1, 0, 1, 0, 0, 0, 0]),
            ([0, UInt8(ascii: "U"), 0x75], [1, 1]), ([0, UInt8(ascii: "U"), 0x75], [0, 1, 1]),
        ] as [([UInt8], [UInt8])] {
            #expect(throws: StateFormatError.self) { try state.restore(key: key, value: value) }
        }
        let marker = PartitionState.commitMarkerValue(through: 1234)
        func offset(_ key: [UInt8]) -> Int64? {
            key.withUnsafeBytes { key in
                marker.withUnsafeBytes { PartitionState.commitMarkerOffset(key: key, value: $0) }
            }
        }
        #expect(offset(PartitionState.commitMarkerKey) == 1234)
        for notMarker in [[0], [0, UInt8(ascii: "E")], [0, UInt8(ascii: "C"), 0], [1, UInt8(ascii: "C")]] as [[UInt8]] {
            #expect(offset(notMarker) == nil)
        }
    }

    @Test("work and changelog bytes per notification do not grow with a user's history")
    func costIndependentOfHistory() {
        func cost(history: Int) -> (undo: Int, bytes: Int) {
            var state = PartitionState()
            for index in 0..<history {
                _ = state.apply(
                    Self.notification("old-\(index)"), lookup: .available(Self.work), nowMilliseconds: Self.now
                )
                if index % 2 == 0 {
                    _ = state.apply(
                        Self.read(["old-\(index)"]), lookup: .available(Self.work), nowMilliseconds: Self.now
                    )
                }
            }
            state.writeChanges { _, _ in }
            state.commit()
            _ = state.apply(Self.notification("new"), lookup: .available(Self.work), nowMilliseconds: Self.now)
            var bytes = 0
            state.writeChanges { key, value in bytes += key.count + (value?.count ?? 0) }
            return (state.beforeImageCount, bytes)
        }
        // A full window (1,000 ids) and a full unread list (1,000) each add one constant step (an
        // eviction, a drop: before-images and a tombstone); nothing depends on how much the user has.
        let fresh = cost(history: 1)
        let full = cost(history: 3000)
        #expect(full.undo <= fresh.undo + 8 && full.bytes <= fresh.bytes + 30, "\(full) vs \(fresh)")
        for history in [50, 999, 6000] {
            let long = cost(history: history)
            #expect(long.undo <= full.undo && long.bytes <= full.bytes, "at \(history): \(long) vs \(full)")
        }
    }
}
