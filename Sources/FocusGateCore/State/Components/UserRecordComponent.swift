// MARK: - The per-user components of a partition state

/// A kind of per-user state that a ``PartitionState`` keeps apart from its entries and apps, with
/// one changelog record per user (key `00`, the kind letter, the user id). A component owns its
/// slots, their undo, their marks and their record's form; the aggregate lists a changed user's
/// record in its change set (``StateChange/userRecord(kind:user:)``) and reaches every
/// component through ``UserRecords/forEach(_:)`` to write, restore, commit, roll back and forget.
///
/// What the aggregate needs of a component:
/// - **Undo.** Every change of a slot as of the last ``commit()`` keeps its before-image (its
///   ``UndoableArray``s and ``PerUserSlots``); ``rollBack()`` returns to the commit.
/// - **Marks.** A user's record is marked when it first changes after a write: the component
///   says so (its update returns `true`, or lists the change itself) and the aggregate lists the
///   key once. Writing the record clears the mark; a commit or a rollback clears them all.
/// - **Forgetting.** ``forget(user:)`` frees what the user had, at a commit (the user's number is
///   about to be reused), so that nothing of it outlives the user.
protocol UserRecordComponent {
    /// The kind letter of the record it writes (docs/state.md, the changelog form).
    static var recordKind: UInt8 { get }
    /// Kind letters of older forms it still reads; a forgotten user's tombstones name them too.
    static var olderRecordKinds: [UInt8] { get }
    /// What its slots are called in a violation.
    static var name: String { get }

    /// Writes the user's record when it is marked, clearing the mark (`key` and `value` are the
    /// caller's buffers, empty when given).
    mutating func writeRecord<E: Error>(
        user: UInt32, userID: String, key: inout [UInt8], value: inout [UInt8],
        _ write: (_ key: [UInt8], _ value: [UInt8]?) throws(E) -> Void
    ) throws(E)

    /// Applies the user's record of `kind` (``recordKind`` or one of ``olderRecordKinds``), read
    /// back in log order; `nil` value: a tombstone.
    mutating func restore(user: UInt32, kind: UInt8, value: UnsafeRawBufferPointer?) throws(StateFormatError)

    /// Makes what was restored the committed state, once every record was applied.
    mutating func finishRestore()

    /// Makes the slots as they are the committed ones and clears every mark.
    mutating func commit()

    /// Returns every slot to the last commit and clears every mark.
    mutating func rollBack()

    /// Frees what the user has: only at a commit, before ``commit()``, or at the end of a restore.
    mutating func forget(user: UInt32)

    /// Whether the user has something here that keeps the user (a user that nothing keeps is
    /// forgotten by the retention).
    func keeps(user: UInt32) -> Bool

    /// The users whose record is marked.
    var markedUsers: [UInt32] { get }

    /// What breaks the component's invariants (empty when they hold).
    var violations: [String] { get }
}

extension UserRecordComponent {
    static var olderRecordKinds: [UInt8] { [] }

    func keeps(user: UInt32) -> Bool { false }

    mutating func finishRestore() { self.commit() }

    /// Whether it reads records of `kind`.
    static func reads(_ kind: UInt8) -> Bool {
        kind == Self.recordKind || Self.olderRecordKinds.contains(kind)
    }

    /// The key of a record keyed by the user alone: `00`, the kind, the user id.
    static func appendKey(kind: UInt8, userID: String, to key: inout [UInt8]) {
        key.append(0)
        key.append(kind)
        key.append(contentsOf: userID.utf8)
    }
}

/// Something done to each component in turn (``UserRecords/forEach(_:)``): generic over the
/// component, so an optimized build calls each directly, with no existential or dynamic dispatch.
protocol UserRecordVisitor {
    associatedtype Failure: Error = Never
    mutating func visit<Component: UserRecordComponent>(_ component: inout Component) throws(Failure)
}

/// Something read of each component in turn (``UserRecords/inspect(_:)``), borrowing it.
protocol UserRecordInspector {
    mutating func inspect<Component: UserRecordComponent>(_ component: borrowing Component)
}

/// The per-user components of a partition state. A new kind of per-user state is a type
/// conforming to ``UserRecordComponent``, a stored property here and its line in each of the two
/// lists below, ``forEach(_:)`` (to change each) and ``inspect(_:)`` (to read each).
struct UserRecords {
    var senders = SenderRings()
    var rateWindows = RateWindows()
    var timers = FocusTimers()
    var statuses = FocusStatuses()

    /// Every component, once, to change.
    mutating func forEach<Visitor: UserRecordVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.visit(&self.senders)
        try visitor.visit(&self.rateWindows)
        try visitor.visit(&self.timers)
        try visitor.visit(&self.statuses)
    }

    /// Every component, once, to read: in the order of ``forEach(_:)``.
    func inspect<Inspector: UserRecordInspector>(_ inspector: inout Inspector) {
        inspector.inspect(self.senders)
        inspector.inspect(self.rateWindows)
        inspector.inspect(self.timers)
        inspector.inspect(self.statuses)
    }

    /// Every kind letter the components write or read, older forms first.
    var recordKinds: [UInt8] {
        struct Kinds: UserRecordInspector {
            var kinds: [UInt8] = []
            mutating func inspect<Component: UserRecordComponent>(_ component: borrowing Component) {
                self.kinds += Component.olderRecordKinds + [Component.recordKind]
            }
        }
        var kinds = Kinds()
        self.inspect(&kinds)
        return kinds.kinds
    }

    mutating func writeRecord<E: Error>(
        kind: UInt8, user: UInt32, userID: String, key: inout [UInt8], value: inout [UInt8],
        _ write: (_ key: [UInt8], _ value: [UInt8]?) throws(E) -> Void
    ) throws(E) {
        // The buffers travel with the visitor, moved in and back out (no copy), and the write
        // with it for this call only.
        try withoutActuallyEscaping(write) { (write) throws(E) in
            var visitor = UserRecordWrite(kind: kind, user: user, userID: userID, write: write)
            swap(&visitor.key, &key)
            swap(&visitor.value, &value)
            defer {
                swap(&visitor.key, &key)
                swap(&visitor.value, &value)
            }
            try self.forEach(&visitor)
        }
    }

    /// Whether a component reads records of `kind`.
    func reads(_ kind: UInt8) -> Bool {
        struct Reads: UserRecordInspector {
            let kind: UInt8
            var found = false
            mutating func inspect<Component: UserRecordComponent>(_ component: borrowing Component) {
                self.found = self.found || Component.reads(self.kind)
            }
        }
        var inspector = Reads(kind: kind)
        self.inspect(&inspector)
        return inspector.found
    }

    mutating func restore(user: UInt32, kind: UInt8, value: UnsafeRawBufferPointer?) throws(StateFormatError) {
        struct Restore: UserRecordVisitor {
            let user: UInt32
            let kind: UInt8
            let value: UnsafeRawBufferPointer?
            mutating func visit<Component: UserRecordComponent>(_ component: inout Component) throws(StateFormatError) {
                guard Component.reads(self.kind) else { return }
                try component.restore(user: self.user, kind: self.kind, value: self.value)
            }
        }
        var visitor = Restore(user: user, kind: kind, value: value)
        try self.forEach(&visitor)
    }

    mutating func finishRestore() {
        struct FinishRestore: UserRecordVisitor {
            mutating func visit<Component: UserRecordComponent>(_ component: inout Component) {
                component.finishRestore()
            }
        }
        var visitor = FinishRestore()
        self.forEach(&visitor)
    }

    mutating func commit() {
        struct Commit: UserRecordVisitor {
            mutating func visit<Component: UserRecordComponent>(_ component: inout Component) { component.commit() }
        }
        var visitor = Commit()
        self.forEach(&visitor)
    }

    mutating func rollBack() {
        struct RollBack: UserRecordVisitor {
            mutating func visit<Component: UserRecordComponent>(_ component: inout Component) {
                component.rollBack()
            }
        }
        var visitor = RollBack()
        self.forEach(&visitor)
    }

    mutating func forget(user: UInt32) {
        struct Forget: UserRecordVisitor {
            let user: UInt32
            mutating func visit<Component: UserRecordComponent>(_ component: inout Component) {
                component.forget(user: self.user)
            }
        }
        var visitor = Forget(user: user)
        self.forEach(&visitor)
    }

    /// Whether a component keeps the user.
    func keeps(user: UInt32) -> Bool {
        struct Keeps: UserRecordInspector {
            let user: UInt32
            var kept = false
            mutating func inspect<Component: UserRecordComponent>(_ component: borrowing Component) {
                if !self.kept { self.kept = component.keeps(user: self.user) }
            }
        }
        var visitor = Keeps(user: user)
        self.inspect(&visitor)
        return visitor.kept
    }

    /// What breaks the components' invariants (empty when they hold).
    var violations: [String] {
        struct Violations: UserRecordInspector {
            var found: [String] = []
            mutating func inspect<Component: UserRecordComponent>(_ component: borrowing Component) {
                self.found += component.violations.map { "\(Component.name): \($0)" }
            }
        }
        var visitor = Violations()
        self.inspect(&visitor)
        return visitor.found
    }

    /// The marked records that `listed` (the (kind, user) of every
    /// ``StateChange/userRecord(kind:user:)`` in the change set) does not list.
    func unlistedMarks(listed: Set<UserRecordKey>) -> [String] {
        struct Marks: UserRecordInspector {
            let listed: Set<UserRecordKey>
            var found: [String] = []
            mutating func inspect<Component: UserRecordComponent>(_ component: borrowing Component) {
                for user in component.markedUsers
                where !self.listed.contains(UserRecordKey(kind: Component.recordKind, user: user)) {
                    self.found.append("user \(user)'s \(Component.name) marked but not listed")
                }
            }
        }
        var visitor = Marks(listed: listed)
        self.inspect(&visitor)
        return visitor.found
    }
}

/// ``UserRecords/writeRecord(kind:user:userID:key:value:_:)``'s visit: the component of the kind
/// writes the user's record.
private struct UserRecordWrite<E: Error>: UserRecordVisitor {
    typealias Failure = E
    let kind: UInt8
    let user: UInt32
    let userID: String
    var key: [UInt8] = []
    var value: [UInt8] = []
    let write: (_ key: [UInt8], _ value: [UInt8]?) throws(E) -> Void

    mutating func visit<Component: UserRecordComponent>(_ component: inout Component) throws(E) {
        guard Component.recordKind == self.kind else { return }
        try component.writeRecord(user: self.user, userID: self.userID, key: &self.key, value: &self.value, self.write)
    }
}

/// A user's record of one component, as the change set lists it.
struct UserRecordKey: Hashable {
    var kind: UInt8
    var user: UInt32
}

/// A component's slot per user number (``StateIndex/none``: none), kept with its undo: the
/// component finds a user's slot by the user's number without a field in the user's own slot.
struct PerUserSlots {
    private var slots = UndoableArray<UInt32>()

    subscript(user: UInt32) -> UInt32 {
        Int(user) < self.slots.count ? self.slots[Int(user)] : StateIndex.none
    }

    /// Sets the user's slot, keeping the before-image.
    mutating func set(_ user: UInt32, to slot: UInt32) {
        while self.slots.count <= Int(user) { self.slots.append(StateIndex.none) }
        self.slots.replace(user, with: slot)
    }

    /// The users with a slot, and theirs.
    var assigned: [(user: UInt32, slot: UInt32)] {
        self.slots.indices.compactMap { self.slots[$0] == StateIndex.none ? nil : (UInt32($0), self.slots[$0]) }
    }

    mutating func commit() { self.slots.commit() }
    mutating func rollBack() { self.slots.rollBack() }
    var violations: [String] { self.slots.violations }
}
