/// The changelog keys changed since the last commit, in the order of their first change, and how
/// many of them a write has gone through (``PartitionState/writeChanges(asOf:writtenAt:_:)``).
///
/// A key is listed once while the mark of the slot it belongs to is set: the state sets a slot's
/// mark when it lists the key, and a write clears the marks of what it wrote. The one invariant
/// that spans the state, every marked slot listed (a mark without a listing is a change no commit
/// would ever write), is checked by ``PartitionState/markViolations``. A key can be listed again
/// after its slot was freed (its tombstone) and made again in the same interval.
struct ChangeSet: RandomAccessCollection {
    private(set) var changes: [StateChange] = []
    /// How many of ``changes`` a write went through.
    private(set) var written = 0

    var startIndex: Int { 0 }
    var endIndex: Int { self.changes.count }
    subscript(position: Int) -> StateChange { self.changes[position] }

    /// Lists a changed key.
    @inline(__always)
    mutating func append(_ change: StateChange) {
        self.changes.append(change)
    }

    /// Notes that a write went through every change listed.
    mutating func markWritten() {
        self.written = self.changes.count
    }

    /// The changes no write has gone through.
    var unwritten: ArraySlice<StateChange> { self.changes[self.written...] }

    /// Forgets every change (a commit or a rollback).
    mutating func removeAll() {
        self.changes.removeAll(keepingCapacity: true)
        self.written = 0
    }
}

extension PartitionState {
    /// What breaks the change set's invariant (empty when it holds): a slot whose mark says its
    /// key is listed, with no change listing it. Walks the whole state: for tests.
    var markViolations: [String] {
        var entries = Set<UInt32>()
        var names = Set<UInt32>()
        var counts = Set<UInt32>()
        var userRecords = Set<UserRecordKey>()
        for change in self.changes {
            switch change {
            case .entry(_, _, let at, _): entries.insert(at)
            case .appName(_, _, let at): names.insert(at)
            case .appCounts(_, _, let at): counts.insert(at)
            case .userRecord(let kind, let user): userRecords.insert(UserRecordKey(kind: kind, user: user))
            case .userGone: continue
            }
        }
        var found: [String] = []
        for (index, entry) in self.entries.enumerated()
        where entry.has(StateEntry.alive) && entry.has(StateEntry.dirty) && !entries.contains(UInt32(index)) {
            found.append("entry \(index) marked but not listed")
        }
        for (index, app) in self.apps.enumerated() where app.has(AppSlot.alive) {
            if app.has(AppSlot.dirtyName) && !names.contains(UInt32(index)) {
                found.append("app \(index)'s name marked but not listed")
            }
            if app.has(AppSlot.dirtyCounts) && !counts.contains(UInt32(index)) {
                found.append("app \(index)'s counts marked but not listed")
            }
        }
        found += self.userRecords.unlistedMarks(listed: userRecords)
        return found
    }
}
