/// Where each remembered notification of a partition is, by (user, id hash): entry indices in
/// open-addressing slots (``HashSlots``: linear probing, grown when half full, backward-shift
/// deletion).
///
/// A slot holds an entry's index beside the low 32 bits of its key's home hash: the keys are the
/// entries' own `user` and `idHash`, read from the entry array the caller passes only when the
/// stored hash matches. So a lookup of an absent key (every new
/// notification's dedupe check) reads slots only, a hit reads the one entry it finds, and a
/// removal's backward shift and a growth's rehash read no entry at all: with a large state the
/// entries are far apart in memory, and each one read is a cache miss. The caller keeps the table
/// and the entries in step: an entry is inserted once while its key is not in the table, and
/// removed (or its key left unchanged) before its key changes.
///
/// A key's home slot mixes a seed drawn per table into the id's hash: the hashes are FNV-1a of
/// ids that producers choose, and without the seed ids chosen to share a slot would make every
/// lookup of their user walk them all.
///
/// Invariants (``violations(keys:)``): ``count`` slots are occupied; no entry is stored twice;
/// each slot's hash is its entry's key's; each stored entry is reached from its key's home slot
/// without crossing an empty slot.
struct EntryTable {
    private var storage: HashSlots
    let seed: UInt64

    /// An empty table of `capacity` slots (a power of two, at least 2).
    init(seed: UInt64 = .random(in: .min ... .max), capacity: Int = 64) {
        self.seed = seed
        self.storage = HashSlots(capacity: capacity)
    }

    /// Per slot: entry index + 1 in the low 32 bits (`0`: empty), the key's home hash (its low 32
    /// bits) in the high ones.
    var slots: [UInt64] { self.storage.slots }
    /// Occupied slots.
    var count: Int { self.storage.count }

    /// The entry whose key is (`user`, `idHash`), if the table holds one.
    @inline(__always)
    func find(user: UInt32, idHash: UInt64, in entries: [StateEntry]) -> UInt32? {
        self.storage.find(hash: self.slotHash(user: user, idHash: idHash)) { index in
            let entry = entries[Int(index)]
            return entry.idHash == idHash && entry.user == user
        }
    }

    /// Adds `entry`, whose key the table does not hold yet; grows the table first when it would be
    /// more than half full.
    mutating func insert(_ entry: UInt32, in entries: [StateEntry]) {
        let key = entries[Int(entry)]
        self.storage.insert(entry, hash: self.slotHash(user: key.user, idHash: key.idHash))
    }

    /// Removes `entry` (found by its key as it is in `entries`); nothing when the table does not
    /// hold it.
    mutating func remove(_ entry: UInt32, in entries: [StateEntry]) {
        let key = entries[Int(entry)]
        self.storage.remove(entry, hash: self.slotHash(user: key.user, idHash: key.idHash))
    }

    /// Grows the table now, if it must, so that it holds `count` entries without growing (see
    /// ``HashSlots/reserve(_:)``).
    mutating func reserve(_ count: Int) {
        self.storage.reserve(count)
    }

    /// The 32 bits of (`user`, `idHash`)'s home hash a slot keeps, under this table's seed.
    @inline(__always)
    private func slotHash(user: UInt32, idHash: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: self.home(user: user, idHash: idHash))
    }

    /// The home slot of (`user`, `idHash`), before masking, under this table's seed.
    @inline(__always)
    func home(user: UInt32, idHash: UInt64) -> Int {
        Self.home(user: user, idHash: idHash, seed: self.seed)
    }

    @inline(__always)
    static func home(user: UInt32, idHash: UInt64, seed: UInt64) -> Int {
        var mixed = idHash ^ seed ^ (UInt64(user) &* 0x9E37_79B9_7F4A_7C15)
        mixed ^= mixed >> 33
        mixed &*= 0xFF51_AFD7_ED55_8CCD
        mixed ^= mixed >> 33
        return Int(truncatingIfNeeded: mixed)
    }

    /// What breaks the invariants, as sentences (none: they hold). Walks the whole table: for
    /// tests and audits, not for the record loop.
    func violations(keys entries: [StateEntry]) -> [String] {
        self.storage.violations { index in
            guard Int(index) < entries.count else { return nil }
            return self.slotHash(user: entries[Int(index)].user, idHash: entries[Int(index)].idHash)
        }
    }
}
