import FocusGateCore
import Testing

@Suite("Partition state: dedupe window, rollback, changelog form")
struct PartitionStateTests {
    static let now = BadgeLedgerTests.now

    private func notification(_ id: String, criteria: String? = "work", user: String = "u") -> NotificationEvent {
        NotificationEvent(kind: .notification, id: id, userID: user, appID: "chat", filterCriteria: criteria)
    }

    @Test("a notification id seen within the window is a duplicate and changes nothing")
    func dedupe() {
        var state = PartitionState(dedupeWindow: 3)
        #expect(state.admit(self.notification("n1"), context: nil, nowMilliseconds: Self.now) != .duplicate)
        #expect(state.admit(self.notification("n1"), context: nil, nowMilliseconds: Self.now) == .duplicate)
        #expect(
            state.admit(self.notification("n1", user: "other"), context: nil, nowMilliseconds: Self.now) != .duplicate,
            "ids are per user")
        // Read n1: it is no longer unread, but the window still remembers it.
        _ = state.admit(
            NotificationEvent(kind: .read, id: "r", userID: "u", appID: "chat", notificationIDs: ["n1"]), context: nil,
            nowMilliseconds: Self.now)
        #expect(state.admit(self.notification("n1"), context: nil, nowMilliseconds: Self.now) == .duplicate)
        for id in ["n2", "n3", "n4"] { _ = state.admit(self.notification(id), context: nil, nowMilliseconds: Self.now) }
        #expect(
            state.admit(self.notification("n1"), context: nil, nowMilliseconds: Self.now) != .duplicate,
            "the window holds the last 3 ids")
    }

    @Test("rollback puts back exactly the state of the last commit")
    func rollback() throws {
        var state = PartitionState()
        _ = state.admit(self.notification("n1"), context: nil, nowMilliseconds: Self.now)
        state.commit()
        let committed = try #require(state.serializedState(userID: "u"))
        #expect(state.changedUsers.isEmpty)

        _ = state.admit(self.notification("n2"), context: nil, nowMilliseconds: Self.now)
        _ = state.admit(self.notification("x1", user: "new"), context: nil, nowMilliseconds: Self.now)
        _ = state.recompute(userID: "u", context: BadgeLedgerTests.context(version: 2), nowMilliseconds: Self.now)
        #expect(Set(state.changedUsers) == ["u", "new"])
        state.rollback()
        #expect(state.serializedState(userID: "u") == committed)
        #expect(state.serializedState(userID: "new") == nil && !state.contains(userID: "new"))
        #expect(state.badges(userID: "u") == [.init(appID: "chat", badge: 1, unread: 1, sequence: 1)])
        #expect(
            state.admit(self.notification("n2"), context: nil, nowMilliseconds: Self.now) != .duplicate,
            "n2 was rolled back")
    }

    @Test("the changelog form restores badges and the dedupe window; a tombstone removes the user")
    func roundTrip() throws {
        var state = PartitionState(dedupeWindow: 2)
        let work = BadgeLedgerTests.context(version: 1)
        for id in ["n1", "n2", "n3"] {
            _ = state.admit(self.notification(id), context: work, nowMilliseconds: Self.now)
        }
        _ = state.admit(
            NotificationEvent(kind: .clear, id: "c", userID: "u", appID: "chat"), context: work,
            nowMilliseconds: Self.now)
        let bytes = try #require(state.serializedState(userID: "u"))

        var restored = PartitionState(dedupeWindow: 2)
        try restored.restore(userID: "u", from: bytes)
        #expect(restored.serializedState(userID: "u") == bytes)
        #expect(restored.badges(userID: "u") == state.badges(userID: "u"))
        #expect(restored.admit(self.notification("n3"), context: work, nowMilliseconds: Self.now) == .duplicate)
        #expect(
            restored.admit(self.notification("n1"), context: work, nowMilliseconds: Self.now) != .duplicate,
            "n1 fell out of a window of 2")
        #expect(restored.changedUsers == ["u"], "restored state is committed; only the new admission is a change")

        try restored.restore(userID: "u", from: nil)
        #expect(!restored.contains(userID: "u"))
        #expect(throws: BadgeStateError.self) { try restored.restore(userID: "u", from: [9]) }
        #expect(throws: BadgeStateError.self) { try restored.restore(userID: "u", from: [1, 5, 0]) }
    }
}
