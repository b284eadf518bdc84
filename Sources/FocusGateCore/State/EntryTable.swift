/// Where each remembered notification of a partition is, by (user, id hash): an open-addressing
/// table of entry indices with linear probing, a power of two long, grown when half full, and
/// backward-shift deletion (no tombstones, so a lookup never walks what was removed).
///
/// The table holds 4-byte indices only (index + 1, `0`: empty): the keys are the entries' own
/// `user` and `idHash`, read from the entry array the caller passes, so a lookup touches one slot
/// and the entry it points at. The caller keeps the two in step: an entry is inserted once while
/// its key is not in the table, and removed (or its key left unchanged) before its key changes.
///
/// A key's home slot mixes a seed drawn per table into the id's hash: the hashes are FNV-1a of
/// ids that producers choose, and without the seed ids chosen to share a slot would make every
/// lookup of their user walk them all.
///
/// Invariants (``violations(keys:)``): ``count`` slots are occupied; no entry is stored twice;
/// each stored entry is reached from its key's home slot without crossing an empty slot.
struct EntryTable {
    /// Entry index + 1 per slot, `0` for empty.
    private(set) var slots: [UInt32]
    /// Occupied slots.
    private(set) var count = 0
    let seed: UInt64

    /// An empty table of `capacity` slots (a power of two, at least 2).
    init(seed: UInt64 = .random(in: .min ... .max), capacity: Int = 64) {
        precondition(capacity >= 2 && capacity & (capacity - 1) == 0, "a power of two of at least 2 slots")
        self.seed = seed
        self.slots = Array(repeating: 0, count: capacity)
    }

    /// The entry whose key is (`user`, `idHash`), if the table holds one.
    @inline(__always)
    func find(user: UInt32, idHash: UInt64, in entries: [StateEntry]) -> UInt32? {
        let mask = self.slots.count - 1
        var slot = self.home(user: user, idHash: idHash) & mask
        while true {
            let stored = self.slots[slot]
            if stored == 0 { return nil }
            let entry = entries[Int(stored - 1)]
            if entry.idHash == idHash && entry.user == user { return stored - 1 }
            slot = (slot + 1) & mask
        }
    }

    /// Adds `entry`, whose key the table does not hold yet; grows the table first when it would be
    /// more than half full.
    mutating func insert(_ entry: UInt32, in entries: [StateEntry]) {
        if (self.count + 1) * 2 > self.slots.count { self.grow(in: entries) }
        self.place(entry + 1, key: entries[Int(entry)])
        self.count += 1
    }

    /// Removes `entry` (found by its key as it is in `entries`); nothing when the table does not
    /// hold it. Every entry after it in its run that may move back into the hole does, so no
    /// probe sequence is cut.
    mutating func remove(_ entry: UInt32, in entries: [StateEntry]) {
        let key = entries[Int(entry)]
        let mask = self.slots.count - 1
        var hole = self.home(user: key.user, idHash: key.idHash) & mask
        while self.slots[hole] != entry + 1 {
            if self.slots[hole] == 0 { return }
            hole = (hole + 1) & mask
        }
        var probe = hole
        while true {
            probe = (probe + 1) & mask
            let moving = self.slots[probe]
            if moving == 0 { break }
            let movingKey = entries[Int(moving - 1)]
            let home = self.home(user: movingKey.user, idHash: movingKey.idHash) & mask
            // The entry at `probe` may move back into the hole unless its home lies in (hole, probe].
            let stays = hole <= probe ? (home > hole && home <= probe) : (home > hole || home <= probe)
            if !stays {
                self.slots[hole] = moving
                hole = probe
            }
        }
        self.slots[hole] = 0
        self.count -= 1
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

    /// The first free slot from `key`'s home on takes `stored`.
    private mutating func place(_ stored: UInt32, key: StateEntry) {
        let mask = self.slots.count - 1
        var slot = self.home(user: key.user, idHash: key.idHash) & mask
        while self.slots[slot] != 0 { slot = (slot + 1) & mask }
        self.slots[slot] = stored
    }

    /// Grows the table now, if it must, so that it holds `count` entries without growing: a
    /// growth rehashes every entry, work better done where it stalls nothing (at the end of a
    /// restore) than at the record that happens to cross the half.
    mutating func reserve(_ count: Int, in entries: [StateEntry]) {
        var capacity = self.slots.count
        while count * 2 > capacity { capacity *= 2 }
        if capacity > self.slots.count { self.rehash(capacity: capacity, in: entries) }
    }

    private mutating func grow(in entries: [StateEntry]) {
        self.rehash(capacity: self.slots.count * 2, in: entries)
    }

    private mutating func rehash(capacity: Int, in entries: [StateEntry]) {
        let old = self.slots
        self.slots = Array(repeating: 0, count: capacity)
        for stored in old where stored != 0 { self.place(stored, key: entries[Int(stored - 1)]) }
    }

    /// What breaks the invariants, as sentences (none: they hold). Walks the whole table: for
    /// tests and audits, not for the record loop.
    func violations(keys entries: [StateEntry]) -> [String] {
        var found: [String] = []
        let occupied = self.slots.lazy.filter { $0 != 0 }.count
        if occupied != self.count { found.append("\(occupied) slots occupied, count \(self.count)") }
        if occupied * 2 > self.slots.count { found.append("\(occupied) of \(self.slots.count) slots: over half full") }
        var seen = Set<UInt32>()
        let mask = self.slots.count - 1
        for (slot, stored) in self.slots.enumerated() where stored != 0 {
            if !seen.insert(stored).inserted { found.append("entry \(stored - 1) stored twice") }
            guard Int(stored - 1) < entries.count else {
                found.append("slot \(slot) holds entry \(stored - 1), past the entries")
                continue
            }
            let key = entries[Int(stored - 1)]
            var probe = self.home(user: key.user, idHash: key.idHash) & mask
            while probe != slot {
                if self.slots[probe] == 0 {
                    found.append("entry \(stored - 1) at slot \(slot) cut off from its home by empty slot \(probe)")
                    break
                }
                probe = (probe + 1) & mask
            }
        }
        return found
    }
}
