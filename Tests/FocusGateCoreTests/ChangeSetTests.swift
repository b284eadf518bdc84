@testable import FocusGateCore
import Testing

@Suite("The change set: the changelog keys changed since the commit")
struct ChangeSetTests {
    @Test("a write marks what it went through; a commit or rollback forgets everything")
    func writtenAndCleared() {
        var changes = ChangeSet()
        changes.append(.userRecord(kind: SenderRings.recordKind, user: 1))
        changes.append(.userRecord(kind: FocusStatuses.recordKind, user: 2))
        #expect(changes.unwritten.count == 2)
        changes.markWritten()
        changes.append(.userRecord(kind: FocusTimers.recordKind, user: 3))
        #expect(
            changes.written == 2 && Array(changes.unwritten) == [.userRecord(kind: FocusTimers.recordKind, user: 3)])
        changes.removeAll()
        #expect(changes.isEmpty && changes.written == 0)
    }

    @Test("a second write before the commit goes through only what changed since the first; a rollback undoes both")
    func writesBeforeTheCommit() {
        var state = PartitionState()
        let now = PartitionStateTests.now
        let context = PartitionStateTests.work
        _ = state.apply(
            .fixture("n0", user: "u1", app: "chat", criteria: "work"), lookup: .available(context),
            nowMilliseconds: now
        )
        state.writeChanges { _, _ in }
        state.commit()
        _ = state.apply(
            .fixture("n1", user: "u1", app: "chat", criteria: "work"), lookup: .available(context),
            nowMilliseconds: now
        )
        _ = state.apply(
            .fixture("n2", user: "u2", app: "chat", criteria: "work"), lookup: .available(context),
            nowMilliseconds: now
        )
        // u2 is forgotten again: its keys are tombstones.
        _ = state.expire(userID: "u2", context: context, nowMilliseconds: now + 10, before: now + 1)
        var first: [(key: [UInt8], value: [UInt8]?)] = []
        state.writeChanges { key, value in first.append((key, value)) }
        #expect(first.contains { $0.value == nil } && first.contains { $0.value != nil })
        #expect(!state.hasUnwrittenChanges && state.hasChanges)
        var again = 0
        state.writeChanges { _, _ in again += 1 }
        #expect(again == 0, "nothing changed since the first write: nothing, tombstones included, is written again")
        // Reading n0 changes an entry written at the commit: the second write has its record and
        // the app's counts, nothing of the first.
        _ = state.apply(
            .readFixture(["n0"], user: "u1", app: "chat"), lookup: .available(context), nowMilliseconds: now
        )
        #expect(state.hasUnwrittenChanges)
        var second: [(key: [UInt8], value: [UInt8]?)] = []
        state.writeChanges { key, value in second.append((key, value)) }
        #expect(second.count == 2 && second.allSatisfy { $0.value != nil })
        #expect(second.allSatisfy { written in !first.contains { $0.key == written.key } })
        #expect(state.markViolations.isEmpty)
        // Both writes were into a transaction that aborts: the state is as of the commit.
        state.rollback()
        #expect(!state.hasChanges && state.markViolations.isEmpty)
        #expect(state.badges(userID: "u1").map(\.unread) == [1])
        #expect(state.badges(userID: "u2").isEmpty)
    }

    @Test(
        "every marked slot is listed through admits, reads, writes, commits and rollbacks; a mark set without a listing is found"
    )
    func marksAreListed() throws {
        var state = PartitionState()
        let now = PartitionStateTests.now
        let context = PartitionStateTests.work
        for (index, user) in ["u1", "u2", "u1"].enumerated() {
            _ = state.apply(
                .fixture("n\(index)", user: user, app: "chat", criteria: "work"), lookup: .available(context),
                nowMilliseconds: now
            )
        }
        #expect(state.markViolations.isEmpty)
        state.writeChanges { _, _ in }
        _ = state.apply(
            .readFixture(["n0"], user: "u1", app: "chat"), lookup: .available(context), nowMilliseconds: now
        )
        #expect(state.markViolations.isEmpty, "after a write, and a read since")
        state.rollback()
        #expect(state.markViolations.isEmpty)
        _ = state.apply(
            .fixture("n9", user: "u2", app: "chat", criteria: "work"), lookup: .available(context),
            nowMilliseconds: now
        )
        state.writeChanges { _, _ in }
        state.commit()
        #expect(state.markViolations.isEmpty && state.changes.isEmpty)
        // A change that marks its slot but is not listed would never be written.
        let entry = try #require(state.entries.indices.first { state.entries[$0].has(StateEntry.alive) })
        state.entries[entry].flags |= StateEntry.dirty
        #expect(state.markViolations == ["entry \(entry) marked but not listed"])
    }
}
