@testable import FocusGateCore
import Testing

@Suite("The lists threaded through the partition state's slots")
struct StateListTests {
    /// A state with two users, a read and a window that has moved on.
    static func state() -> PartitionState {
        var state = PartitionState(maxUnreadPerApp: 3, dedupeWindow: 2)
        let now = PartitionStateTests.now
        for index in 0..<5 {
            _ = state.apply(
                .fixture(
                    "n\(index)", user: index % 2 == 0 ? "u1" : "u2", app: index < 3 ? "chat" : "mail",
                    criteria: "work"),
                lookup: .available(PartitionStateTests.work), nowMilliseconds: now
            )
        }
        _ = state.apply(
            .readFixture(["n4"], user: "u1", app: "mail"), lookup: .available(PartitionStateTests.work),
            nowMilliseconds: now
        )
        return state
    }

    @Test(
        "windows, unread lists and apps hold what their counts and tails say, before and after a commit and a rollback")
    func consistent() {
        var state = Self.state()
        #expect(state.listViolations.isEmpty)
        state.writeChanges { _, _ in }
        state.commit()
        _ = state.apply(
            .fixture("n9", user: "u1", app: "chat", criteria: "work"), lookup: .available(nil),
            nowMilliseconds: PartitionStateTests.now
        )
        #expect(state.listViolations.isEmpty)
        state.rollback()
        #expect(state.listViolations.isEmpty)
    }

    @Test("a broken back link, a wrong count and a wrong tail are each found")
    func brokenFound() throws {
        let state = Self.state()
        let app = try #require(state.apps.indices.first { state.apps[$0].unread >= 2 })
        var broken = state
        broken.entries[Int(state.apps[app].unreadTail)].unreadPrev = StateIndex.none
        #expect(broken.listViolations.contains { $0.contains("links back") })
        broken = state
        broken.apps[app].unread += 1
        #expect(broken.listViolations.contains { $0.contains("unread list is") })
        let user = try #require(state.users.indices.first { state.users[$0].windowCount >= 2 })
        broken = state
        broken.users[user].windowTail = broken.users[user].windowHead
        #expect(broken.listViolations.contains { $0.contains("window ends at") })
    }
}
