/// Where each remembered notification of a partition is, by (user, id hash): an open-addressing
/// table of entry indices with linear probing, a power of two long, grown when half full, and
/// backward-shift deletion (no tombstones, so a lookup never walks what was removed).
///
/// A slot holds an entry's index (+ 1, `0`: empty) beside the low 32 bits of its key's home
/// hash: the keys are the entries' own `user` and `idHash`, read from the entry array the caller
/// passes only when the stored hash matches. So a lookup of an absent key (every new
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
    /// Per slot: entry index + 1 in the low 32 bits (`0`: empty), the key's home hash (its low 32
    /// bits) in the high ones.
    private(set) var slots: [UInt64]
    /// Occupied slots.
    private(set) var count = 0
    let seed: UInt64

    /// An empty table of `capacity` slots (a power of two, at least 2).
    init(seed: UInt64 = .random(in: .min ... .max), capacity: Int = 64) {
        precondition(capacity >= 2 && capacity & (capacity - 1) == 0, "a power of two of at least 2 slots")
        precondition(capacity <= Self.maxCapacity, "at most 2³² slots: a slot's hash is 32 bits")
        self.seed = seed
        self.slots = Array(repeating: 0, count: capacity)
    }

    /// The entry whose key is (`user`, `idHash`), if the table holds one.
    @inline(__always)
    func find(user: UInt32, idHash: UInt64, in entries: [StateEntry]) -> UInt32? {
        let mask = self.slots.count - 1
        let hash = UInt32(truncatingIfNeeded: self.home(user: user, idHash: idHash))
        var slot = Int(hash) & mask
        while true {
            let stored = self.slots[slot]
            if stored == 0 { return nil }
            if UInt32(truncatingIfNeeded: stored >> 32) == hash {
                let index = Self.index(stored)
                let entry = entries[Int(index)]
                if entry.idHash == idHash && entry.user == user { return index }
            }
            slot = (slot + 1) & mask
        }
    }

    /// Adds `entry`, whose key the table does not hold yet; grows the table first when it would be
    /// more than half full.
    mutating func insert(_ entry: UInt32, in entries: [StateEntry]) {
        if (self.count + 1) * 2 > self.slots.count { self.grow() }
        let key = entries[Int(entry)]
        let hash = UInt32(truncatingIfNeeded: self.home(user: key.user, idHash: key.idHash))
        self.place(UInt64(hash) << 32 | UInt64(entry + 1))
        self.count += 1
    }

    /// Removes `entry` (found by its key as it is in `entries`); nothing when the table does not
    /// hold it. Every entry after it in its run that may move back into the hole does, so no
    /// probe sequence is cut.
    mutating func remove(_ entry: UInt32, in entries: [StateEntry]) {
        let key = entries[Int(entry)]
        let mask = self.slots.count - 1
        let stored =
            UInt64(UInt32(truncatingIfNeeded: self.home(user: key.user, idHash: key.idHash))) << 32
            | UInt64(entry + 1)
        var hole = Self.homeSlot(stored, mask: mask)
        while self.slots[hole] != stored {
            if self.slots[hole] == 0 { return }
            hole = (hole + 1) & mask
        }
        var probe = hole
        while true {
            probe = (probe + 1) & mask
            let moving = self.slots[probe]
            if moving == 0 { break }
            let home = Self.homeSlot(moving, mask: mask)
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

    static let maxCapacity = 1 << 32

    /// The entry index a slot holds.
    @inline(__always)
    static func index(_ stored: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: stored) &- 1
    }

    /// The home slot of what a slot holds, from its hash alone.
    @inline(__always)
    static func homeSlot(_ stored: UInt64, mask: Int) -> Int {
        Int(stored >> 32) & mask
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

    /// The first free slot from its home on takes `stored`.
    private mutating func place(_ stored: UInt64) {
        let mask = self.slots.count - 1
        var slot = Self.homeSlot(stored, mask: mask)
        while self.slots[slot] != 0 { slot = (slot + 1) & mask }
        self.slots[slot] = stored
    }

    /// Grows the table now, if it must, so that it holds `count` entries without growing: a
    /// growth rehashes every entry, work better done where it stalls nothing (at the end of a
    /// restore) than at the record that happens to cross the half.
    mutating func reserve(_ count: Int) {
        var capacity = self.slots.count
        while count * 2 > capacity { capacity *= 2 }
        if capacity > self.slots.count { self.rehash(capacity: capacity) }
    }

    private mutating func grow() {
        self.rehash(capacity: self.slots.count * 2)
    }

    /// Places every stored entry again by its slot's hash: no entry is read.
    private mutating func rehash(capacity: Int) {
        precondition(capacity <= Self.maxCapacity, "at most 2³² slots: a slot's hash is 32 bits")
        let old = self.slots
        self.slots = Array(repeating: 0, count: capacity)
        for stored in old where stored != 0 { self.place(stored) }
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
            let index = Self.index(stored)
            if !seen.insert(index).inserted { found.append("entry \(index) stored twice") }
            guard Int(index) < entries.count else {
                found.append("slot \(slot) holds entry \(index), past the entries")
                continue
            }
            let key = entries[Int(index)]
            let hash = UInt32(truncatingIfNeeded: self.home(user: key.user, idHash: key.idHash))
            if UInt32(truncatingIfNeeded: stored >> 32) != hash {
                found.append("slot \(slot) holds entry \(index) with another key's hash")
            }
            var probe = Int(hash) & mask
            while probe != slot {
                if self.slots[probe] == 0 {
                    found.append("entry \(index) at slot \(slot) cut off from its home by empty slot \(probe)")
                    break
                }
                probe = (probe + 1) & mask
            }
        }
        return found
    }
}
