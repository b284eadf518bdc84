/// The fixed-size records a ``PartitionState`` keeps in contiguous arrays and links by index.
///
/// Indices are `UInt32`; ``StateIndex/none`` marks the end of a list or an absent link.
enum StateIndex {
    static let none = UInt32.max
}

/// One remembered notification of a user: in the user's dedupe window, unread, or both (48 bytes).
///
/// An entry lives while it is either of those; its key in the partition's entry table is
/// (``user``, ``idHash``).
struct StateEntry {
    /// The 64-bit FNV-1a hash of the notification id.
    var idHash: UInt64
    /// When the notification was decided, Unix milliseconds.
    var decidedAt: Int64
    var user: UInt32
    /// The app slot, while unread; ``StateIndex/none`` otherwise.
    var app: UInt32
    /// Index + 1 in the partition's attribute pool (criteria and sender); `0`: the notification
    /// carried neither.
    var attributes: UInt32
    /// The user's arrival number: orders the window and the unread lists.
    var arrival: UInt32
    /// The next newer entry in the user's window; the next free entry while free.
    var windowNext: UInt32
    var unreadPrev: UInt32
    var unreadNext: UInt32
    var flags: UInt8
    /// `relevanceScore` × 254 + 1, rounded; `0`: none.
    var relevance: UInt8

    static let alive: UInt8 = 1
    static let inWindow: UInt8 = 2
    static let unread: UInt8 = 4
    /// Counts in the app's badge under the app's counting key.
    static let counted: UInt8 = 8
    /// The notification was silenced when decided.
    static let silenced: UInt8 = 16
    /// Changed since the commit and listed in the changes once.
    static let dirty: UInt8 = 32
    /// A silenced notification a summary has listed: no later summary lists it again.
    static let summarized: UInt8 = 64
    /// Restored unread, under an app whose count stands: whether it counts under the app's
    /// counted context is worked out when it leaves the unread list or the app is recounted
    /// (the changelog keeps the app's count, not each entry's).
    static let countUnknown: UInt8 = 128

    func has(_ flag: UInt8) -> Bool { self.flags & flag != 0 }

    /// Whether the entry table holds it as it holds `other`: both free, or both alive with one key.
    func sameKey(as other: StateEntry) -> Bool {
        guard self.has(Self.alive) else { return !other.has(Self.alive) }
        return other.has(Self.alive) && self.user == other.user && self.idHash == other.idHash
    }

    /// Whether it counts in its app's badge, known from now on.
    mutating func setCounted(_ counts: Bool) {
        self.flags = self.flags & ~(Self.counted | Self.countUnknown) | (counts ? Self.counted : 0)
    }

    static let free = StateEntry(
        idHash: 0, decidedAt: 0, user: StateIndex.none, app: StateIndex.none, attributes: 0, arrival: 0,
        windowNext: StateIndex.none, unreadPrev: StateIndex.none, unreadNext: StateIndex.none, flags: 0, relevance: 0)

    /// The relevance byte of a score in 0…1.
    static func relevanceByte(_ score: Double?) -> UInt8 {
        guard let score else { return 0 }
        return UInt8((min(1, max(0, score)) * 254).rounded()) + 1
    }
}

/// How a remembered notification was decided, kept beside its entry (the same index in
/// `PartitionState.decisions`): what the user's history and a silenced notification's summary say
/// of it. Unique to each notification, so not interned. Set when the entry is made or restored and
/// not changed while the entry lives; a rollback puts back the record of a reused entry.
struct DecisionRecord {
    // Widest first: 32 bytes a record.
    /// The input record's offset in its partition (`focusgate-source`); `-1`: not known.
    var sourceOffset: Int64
    /// The context version decided under; `Int64.min`: none, or not known.
    var contextVersion: Int64
    /// The notification id's UTF-8 bytes in `PartitionState.idBytes` (start, length); length
    /// `0`: not known (an entry restored from a record that held only its hash).
    var idStart: UInt32
    /// The app's ordinal within the user; `0`: not known.
    var appOrdinal: UInt32
    var idLength: UInt16
    /// The Focus on when decided: its number in `PartitionState.focusNames` + 1; `0`: none.
    var focus: UInt16
    /// ``Decision/Reason/index`` + 1; `0`: not known (restored from before reasons were kept).
    var reason: UInt8
    /// Silenced for a user who wanted summaries then: a summary may list it.
    var summarizable: Bool
    /// Its changelog key holds the id's hash, not the id (it was restored from such a record):
    /// it is written, and removed, under that key.
    var hashKeyed: Bool

    var hasID: Bool { self.idLength > 0 }

    /// Whether it holds anything beyond the id: what the changelog writes after the flags.
    var isKnown: Bool {
        self.reason != 0 || self.summarizable || self.focus != 0 || self.sourceOffset >= 0
            || self.contextVersion != .min
    }

    /// The span of the id its changelog key holds; length `0`: the key holds the id's hash.
    var keyID: IDSpan {
        self.hashKeyed ? IDSpan(start: 0, length: 0) : IDSpan(start: self.idStart, length: self.idLength)
    }

    static let unknown = DecisionRecord(
        sourceOffset: -1, contextVersion: .min, idStart: 0, appOrdinal: 0, idLength: 0, focus: 0, reason: 0,
        summarizable: false, hashKeyed: true)
}

/// Where a notification id's bytes lie in `PartitionState.idBytes`; length `0`: none.
struct IDSpan: Hashable {
    var start: UInt32
    var length: UInt16
}

/// One (user, app): its unread list, the badge counted now and the badge last published. Plain
/// data (the app id is kept beside it, in `PartitionState.appIDBySlot`), so copies and before-images
/// cost no reference counting.
struct AppSlot {
    var user: UInt32
    /// The app's number within the user, stable in the changelog (from 1).
    var ordinal: UInt32
    /// The user's next app; the next free slot while free.
    var nextApp: UInt32
    /// Oldest and newest unread entries.
    var unreadHead: UInt32
    var unreadTail: UInt32
    var unread: UInt32
    /// Unread entries that count under ``countedVersion``/``countedFocus``.
    var counted: UInt32
    /// The badge last published, and its sequence.
    var badge: UInt32
    var sequence: UInt64
    /// What ``counted`` was computed with: the context version (`Int64.min`: no context) and
    /// whether a Focus was on (`0`: not computed since the slot was made or restored).
    var countedVersion: Int64
    var countedFocus: UInt8
    var flags: UInt8
    /// 16 bits of the app id's hash (``PartitionState/appTag(_:)``): a search of the user's apps
    /// compares the id only where the tag matches. (It fills what was padding.)
    var appTag: UInt16
    /// Index of this app's badge update in `PartitionState.pendingBadgeUpdates`, while one waits
    /// for the commit; ``StateIndex/none`` otherwise.
    var pending: UInt32

    static let alive: UInt8 = 1
    static let dirtyName: UInt8 = 2
    static let dirtyCounts: UInt8 = 4
    /// While restoring: a name record was read for the slot.
    static let restoredName: UInt8 = 8

    func has(_ flag: UInt8) -> Bool { self.flags & flag != 0 }

    init(user: UInt32, ordinal: UInt32, appTag: UInt16 = 0) {
        self.user = user
        self.ordinal = ordinal
        self.nextApp = StateIndex.none
        self.unreadHead = StateIndex.none
        self.unreadTail = StateIndex.none
        self.unread = 0
        self.counted = 0
        self.badge = 0
        self.sequence = 0
        self.countedVersion = .min
        self.countedFocus = 0
        self.flags = Self.alive
        self.appTag = appTag
        self.pending = StateIndex.none
    }

    /// Nothing unread and never published: the slot can go.
    var isEmpty: Bool { self.unread == 0 && self.badge == 0 && self.sequence == 0 }
}

/// What an app's badge was counted under, as a restore reads it from the app's counts
/// (``AppSlot/countedVersion`` and ``AppSlot/countedFocus``).
struct CountedContext {
    var version: Int64
    var focus: UInt8
}

/// One user, interned once per partition: the dedupe window (oldest to newest) and the apps.
/// Plain data: the user id is kept beside it, in `PartitionState.userIDByNumber`.
struct UserSlot {
    var windowHead: UInt32 = StateIndex.none
    var windowTail: UInt32 = StateIndex.none
    var windowCount: UInt32 = 0
    var firstApp: UInt32 = StateIndex.none
    var nextArrival: UInt32 = 0
    var nextOrdinal: UInt32 = 1
    /// The context version the user's timer and status were last worked out for
    /// (``PartitionState/noContextVersion``: none; `Int64.min`: not yet): a decision under the
    /// same version has nothing to update, since within a version they change only when the
    /// timer fires. Not in the changelog: after a restore the first decision works them out again.
    var followedVersion = Int64.min

    /// A number no user has: freed by the retention, waiting to be reused.
    static let freed = UserSlot(nextOrdinal: 0)

    var isFree: Bool { self.nextOrdinal == 0 }
}

/// A changelog key changed since the commit. An entry's change remembers where the entry was;
/// the key is what counts (the slot may have been freed or reused since).
enum StateChange: Hashable {
    /// `id`: the notification id its key holds (its bytes stay in `PartitionState.idBytes` until
    /// the commit); length `0`: the key holds the id's hash (an entry restored from such a record).
    case entry(user: UInt32, idHash: UInt64, at: UInt32, id: IDSpan)
    /// `at`: the app's slot when the change was made, checked before use (``PartitionState/app(user:ordinal:at:)``).
    case appName(user: UInt32, ordinal: UInt32, at: UInt32)
    case appCounts(user: UInt32, ordinal: UInt32, at: UInt32)
    /// The user's record of a per-user component (``UserRecordComponent``), by its kind letter.
    case userRecord(kind: UInt8, user: UInt32)
    /// The user was left with nothing (``PartitionState/expire(userID:context:nowMilliseconds:before:)``):
    /// its user-wide records are written as tombstones, and the commit frees its number, if it
    /// still has nothing then.
    case userGone(user: UInt32)
}

/// Freed slots of one kind (users, sender rings, rate windows), reused before the array grows.
/// Slots are freed only by a commit (``PartitionState/commit()``) and taken between commits, so
/// a rollback puts the taken ones back by restoring ``top``: nothing above it is overwritten
/// until the next commit.
struct FreeSlots {
    private var slots: [UInt32] = []
    /// How many of ``slots`` are free; those above were taken since the commit.
    private(set) var top = 0

    var count: Int { self.top }

    mutating func take() -> UInt32? {
        guard self.top > 0 else { return nil }
        self.top -= 1
        return self.slots[self.top]
    }

    /// Frees a slot: only at a commit, or while restoring.
    mutating func free(_ slot: UInt32) {
        self.slots.removeSubrange(self.top...)
        self.slots.append(slot)
        self.top += 1
    }

    /// Back to what was free at the commit.
    mutating func rollBack(to top: Int) {
        self.top = top
    }
}

/// An entry's identity, stable across the entry's moves in storage: its user's number and the
/// hash of its notification id.
struct EntryKey: Hashable {
    var user: UInt32
    var idHash: UInt64
}
