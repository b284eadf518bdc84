@testable import FocusGateCore
import Testing

@Suite("Per-user components: each owns its slots, undo, marks and record, and forgets a user")
struct UserRecordComponentTests {
    static let minute: Int64 = 60_000

    @Test("a sender ring alone: noted, committed, rolled back to the commit, its mark set once per interval")
    func senderRingUndo() {
        var rings = SenderRings()
        let firstChange = rings.note(user: 3, senderHash: 7, atMilliseconds: 1_000)
        #expect(firstChange, "the first change marks the record")
        let secondChange = rings.note(user: 3, senderHash: 8, atMilliseconds: 2_000)
        #expect(!secondChange, "marked already")
        #expect(rings.markedUsers == [3])
        rings.commit()
        #expect(rings.markedUsers.isEmpty, "a commit clears the marks")
        let afterCommit = rings.note(user: 3, senderHash: 9, atMilliseconds: 3_000)
        #expect(afterCommit)
        let anotherUser = rings.note(user: 5, senderHash: 7, atMilliseconds: 3_000)
        #expect(anotherUser)
        #expect(rings.isRepeated(user: 3, senderHash: 9, atMilliseconds: 3_000, windowMilliseconds: Self.minute))
        rings.rollBack()
        #expect(!rings.isRepeated(user: 3, senderHash: 9, atMilliseconds: 3_000, windowMilliseconds: Self.minute))
        #expect(rings.isRepeated(user: 3, senderHash: 8, atMilliseconds: 3_000, windowMilliseconds: Self.minute))
        #expect(!rings.isRepeated(user: 5, senderHash: 7, atMilliseconds: 3_000, windowMilliseconds: Self.minute))
        #expect(rings.markedUsers.isEmpty && rings.violations.isEmpty)
        #expect(rings.rings.count == 1, "the ring made since the commit is gone")
    }

    @Test("forgetting a user frees its ring and windows for a later user; a rollback takes the reuse back")
    func forgetAndReuse() {
        var records = UserRecords()
        _ = records.senders.note(user: 0, senderHash: 1, atMilliseconds: 1_000)
        var policy = RateLimitPolicy.none
        policy.perUser = .init(max: 5, windowMilliseconds: Self.minute)
        _ = records.rateWindows.note(
            user: 0, appHash: 0, places: records.rateWindows.find(user: 0, appHash: 0), policy: policy,
            atMilliseconds: 1_000)
        records.commit()
        records.forget(user: 0)
        records.commit()
        #expect(!records.senders.isRepeated(user: 0, senderHash: 1, atMilliseconds: 1_000, windowMilliseconds: 1))
        #expect(records.rateWindows.find(user: 0, appHash: 0).user == StateIndex.none)
        _ = records.senders.note(user: 1, senderHash: 2, atMilliseconds: 2_000)
        _ = records.rateWindows.note(
            user: 1, appHash: 0, places: records.rateWindows.find(user: 1, appHash: 0), policy: policy,
            atMilliseconds: 2_000)
        #expect(records.senders.rings.count == 1 && records.rateWindows.windows.count == 1, "the freed slots reused")
        #expect(records.violations.isEmpty)
        records.rollBack()
        #expect(!records.senders.isRepeated(user: 1, senderHash: 2, atMilliseconds: 2_000, windowMilliseconds: 1))
        _ = records.senders.note(user: 2, senderHash: 3, atMilliseconds: 3_000)
        #expect(records.senders.rings.count == 1, "the slot is free again after the rollback")
        #expect(records.violations.isEmpty)
    }

    @Test("Focus timers alone: set, moved and cleared, rolled back to the commit, a cleared one written as a tombstone")
    func timersUndo() {
        var timers = FocusTimers()
        let first = timers.watch(user: 1, at: 5_000)
        #expect(first)
        _ = timers.watch(user: 2, at: 4_000)
        timers.commit()
        #expect(timers.queue.first?.user == 2 && timers.keeps(user: 1) && timers.markedUsers.isEmpty)
        _ = timers.watch(user: 2, at: nil)
        _ = timers.watch(user: 1, at: 3_000)
        _ = timers.watch(user: 7, at: 1_000)
        #expect(timers.queue.first?.user == 7 && !timers.keeps(user: 2))
        var written: [(key: [UInt8], value: [UInt8]?)] = []
        var key: [UInt8] = []
        var value: [UInt8] = []
        timers.writeRecord(user: 2, userID: "b", key: &key, value: &value) { written.append(($0, $1)) }
        #expect(
            written.count == 1 && written[0].key == [0, UInt8(ascii: "T")] + Array("b".utf8) && written[0].value == nil)
        timers.rollBack()
        #expect(timers.queue.first?.user == 2 && timers.queue.count == 2 && !timers.keeps(user: 7))
        #expect(timers.violations.isEmpty && timers.markedUsers.isEmpty)
        timers.forget(user: 2)
        timers.commit()
        #expect(timers.queue.first?.user == 1 && timers.queue.count == 1 && timers.violations.isEmpty)
    }

    @Test("a status is noted once per change, kept while focused, and its pending updates end with the interval")
    func statusUndo() throws {
        var compiler = FocusContextCompiler()
        let work = try compiler.compile(FocusContext(userID: "u", version: 1, focus: "Work"))
        var statuses = FocusStatuses()
        let focused = statuses.note(user: 0, userID: "u", context: work, nowMilliseconds: 1_000)
        #expect(focused && statuses.keeps(user: 0) && statuses.pendingUpdates.count == 1)
        let again = statuses.note(user: 0, userID: "u", context: work, nowMilliseconds: 2_000)
        #expect(!again, "no change, no update")
        statuses.commit()
        #expect(statuses.pendingUpdates.isEmpty && statuses.markedUsers.isEmpty)
        _ = statuses.note(user: 0, userID: "u", context: nil, nowMilliseconds: 3_000)
        #expect(!statuses.keeps(user: 0) && statuses.pendingUpdates.map(\.sequence) == [2])
        statuses.rollBack()
        #expect(statuses.keeps(user: 0) && statuses.pendingUpdates.isEmpty && statuses.violations.isEmpty)
    }

    @Test("the registration lists every component's kinds; a forgotten user's tombstones name each of them")
    func registration() {
        #expect(UserRecords().recordKinds == Array("SPRTF".utf8))
        #expect(UserRecords().reads(UInt8(ascii: "S")) && !UserRecords().reads(UInt8(ascii: "E")))
        for kind in UserRecords().recordKinds { #expect(PartitionState.userKinds.contains(kind)) }
    }

    @Test("a ring marked outside its API, or held for another user, breaks an invariant the aggregate reports")
    func violationsReported() throws {
        var state = PartitionState()
        _ = state.apply(
            NotificationEvent(id: "n1", userID: "u", appID: "chat", senderID: "mom"), lookup: .available(nil),
            nowMilliseconds: 1_000)
        state.writeChanges { _, _ in }
        state.commit()
        #expect(state.partViolations.isEmpty && state.markViolations.isEmpty)
        // A change that marks a record the change set does not list would never be written.
        var rings = state.userRecords.senders
        let outsideTheAggregate = rings.note(user: 0, senderHash: 42, atMilliseconds: 2_000)
        #expect(outsideTheAggregate)
        state.userRecords.senders = rings
        #expect(state.markViolations == ["user 0's sender rings marked but not listed"])
    }
}
