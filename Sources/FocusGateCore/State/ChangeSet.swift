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
        var senders = Set<UInt32>()
        var rateWindows = Set<UInt32>()
        var transitions = Set<UInt32>()
        var statuses = Set<UInt32>()
        for change in self.changes {
            switch change {
            case .entry(_, _, let at, _): entries.insert(at)
            case .appName(_, _, let at): names.insert(at)
            case .appCounts(_, _, let at): counts.insert(at)
            case .senders(let user): senders.insert(user)
            case .rateWindows(let user): rateWindows.insert(user)
            case .transition(let user): transitions.insert(user)
            case .status(let user): statuses.insert(user)
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
        for (user, slot) in self.users.enumerated() where !slot.isFree {
            if slot.senderRing != StateIndex.none && self.senderRings[Int(slot.senderRing)].isDirty
                && !senders.contains(UInt32(user))
            {
                found.append("user \(user)'s senders marked but not listed")
            }
            if slot.rateWindow != StateIndex.none && self.rateWindows[Int(slot.rateWindow)].isDirty
                && !rateWindows.contains(UInt32(user))
            {
                found.append("user \(user)'s rate windows marked but not listed")
            }
        }
        for (user, slot) in self.transitionSlots where slot.isDirty && !transitions.contains(user) {
            found.append("user \(user)'s timer marked but not listed")
        }
        for (user, slot) in self.statusSlots where slot.isDirty && !statuses.contains(user) {
            found.append("user \(user)'s status marked but not listed")
        }
        return found
    }
}
