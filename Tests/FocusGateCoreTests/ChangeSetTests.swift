@testable import FocusGateCore
import Testing

@Suite("The change set: the changelog keys changed since the commit")
struct ChangeSetTests {
    @Test("a write marks what it went through; a commit or rollback forgets everything")
    func writtenAndCleared() {
        var changes = ChangeSet()
        changes.append(.senders(user: 1))
        changes.append(.status(user: 2))
        #expect(changes.unwritten.count == 2)
        changes.markWritten()
        changes.append(.transition(user: 3))
        #expect(changes.written == 2 && Array(changes.unwritten) == [.transition(user: 3)])
        changes.removeAll()
        #expect(changes.isEmpty && changes.written == 0)
    }

    @Test(
        "every marked slot is listed through admits, reads, writes, commits and rollbacks; a mark set without a listing is found"
    )
    func marksAreListed() throws {
        var state = PartitionState()
        let now = PartitionStateTests.now
        let context = PartitionStateTests.work
        for (index, user) in ["u1", "u2", "u1"].enumerated() {
            _ = state.admit(
                .fixture("n\(index)", user: user, app: "chat", criteria: "work"), context: context, nowMilliseconds: now
            )
        }
        #expect(state.markViolations.isEmpty)
        state.writeChanges { _, _ in }
        _ = state.admit(.readFixture(["n0"], user: "u1", app: "chat"), context: context, nowMilliseconds: now)
        #expect(state.markViolations.isEmpty, "after a write, and a read since")
        state.rollback()
        #expect(state.markViolations.isEmpty)
        _ = state.admit(
            .fixture("n9", user: "u2", app: "chat", criteria: "work"), context: context, nowMilliseconds: now)
        state.writeChanges { _, _ in }
        state.commit()
        #expect(state.markViolations.isEmpty && state.changes.isEmpty)
        // A change that marks its slot but is not listed would never be written.
        let entry = try #require(state.entries.indices.first { state.entries[$0].has(StateEntry.alive) })
        state.entries[entry].flags |= StateEntry.dirty
        #expect(state.markViolations == ["entry \(entry) marked but not listed"])
    }
}
