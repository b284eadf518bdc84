/// The slots of an open-addressing table of numbers, the part ``EntryTable`` and
/// ``IdentifierIndex`` share: linear probing over a power-of-two array, grown when it would be
/// more than half full, and backward-shift deletion (no tombstones, so a lookup never walks what
/// was removed).
///
/// A slot holds a number + 1 in its low 32 bits (`0`: empty) and 32 bits of its key's hash in
/// its high ones. The keys stay with the owner: a lookup reads a key only where the stored hash
/// matches, and a removal's backward shift and a growth's rehash read none (in a large state
/// each key read is a cache miss). The owner keeps the slots in step with its keys: a number is
/// inserted while its key is not held, and removed with the hash it was inserted with.
///
/// Invariants (``violations(hash:)``): ``count`` slots are occupied, at most half of them; no
/// number is stored twice; each slot's hash is its key's; each number is reached from its home
/// slot without crossing an empty slot.
struct HashSlots: Sendable {
    private(set) var slots: [UInt64]
    /// Occupied slots.
    private(set) var count = 0

    static let maxCapacity = 1 << 32

    /// Empty slots, `capacity` of them (a power of two, at least 2).
    init(capacity: Int) {
        precondition(capacity >= 2 && capacity & (capacity - 1) == 0, "a power of two of at least 2 slots")
        precondition(capacity <= Self.maxCapacity, "at most 2³² slots: a slot's hash is 32 bits")
        self.slots = Array(repeating: 0, count: capacity)
    }

    /// The first number stored with `hash` for which `matches` (given the number) is true.
    @inline(__always)
    func find(hash: UInt32, where matches: (UInt32) -> Bool) -> UInt32? {
        let mask = self.slots.count - 1
        var slot = Int(hash) & mask
        while true {
            let stored = self.slots[slot]
            if stored == 0 { return nil }
            if UInt32(truncatingIfNeeded: stored >> 32) == hash {
                let number = UInt32(truncatingIfNeeded: stored) &- 1
                if matches(number) { return number }
            }
            slot = (slot + 1) & mask
        }
    }

    /// Adds `number` with its key's `hash`; grows first when the slots would be more than half full.
    mutating func insert(_ number: UInt32, hash: UInt32) {
        precondition(number < UInt32.max, "numbers below 2³² - 1")
        if (self.count + 1) * 2 > self.slots.count { self.rehash(capacity: self.slots.count * 2) }
        self.place(UInt64(hash) << 32 | UInt64(number + 1))
        self.count += 1
    }

    /// Removes `number`, inserted with `hash`; `false` (nothing changed) when it is not held.
    /// Every slot after it in its run that may move back into the hole does, so no probe
    /// sequence is cut.
    @discardableResult
    mutating func remove(_ number: UInt32, hash: UInt32) -> Bool {
        let mask = self.slots.count - 1
        let stored = UInt64(hash) << 32 | UInt64(number &+ 1)
        var hole = Self.home(stored, mask: mask)
        while self.slots[hole] != stored {
            if self.slots[hole] == 0 { return false }
            hole = (hole + 1) & mask
        }
        var probe = hole
        while true {
            probe = (probe + 1) & mask
            let moving = self.slots[probe]
            if moving == 0 { break }
            // `moving` may fill the hole unless its home lies cyclically in (hole, probe].
            if (probe &- Self.home(moving, mask: mask)) & mask >= (probe &- hole) & mask {
                self.slots[hole] = moving
                hole = probe
            }
        }
        self.slots[hole] = 0
        self.count -= 1
        return true
    }

    /// Grows now, if it must, so that `count` numbers fit without growing: a growth rehashes
    /// every slot, work better done where it stalls nothing (at the end of a restore) than at
    /// the record that happens to cross the half.
    mutating func reserve(_ count: Int) {
        var capacity = self.slots.count
        while count * 2 > capacity { capacity *= 2 }
        if capacity > self.slots.count { self.rehash(capacity: capacity) }
    }

    /// What breaks the invariants, as sentences (none: they hold), given each stored number's key
    /// hash (`nil`: the owner has no such number). Walks every slot: for tests and audits.
    func violations(hash: (UInt32) -> UInt32?) -> [String] {
        var found: [String] = []
        let occupied = self.slots.lazy.filter { $0 != 0 }.count
        if occupied != self.count { found.append("\(occupied) slots occupied, count \(self.count)") }
        if occupied * 2 > self.slots.count { found.append("\(occupied) of \(self.slots.count) slots: over half full") }
        var seen = Set<UInt32>()
        let mask = self.slots.count - 1
        for (slot, stored) in self.slots.enumerated() where stored != 0 {
            let number = UInt32(truncatingIfNeeded: stored) &- 1
            if !seen.insert(number).inserted { found.append("number \(number) stored twice") }
            guard let expected = hash(number) else {
                found.append("slot \(slot) holds number \(number), which has no key")
                continue
            }
            if UInt32(truncatingIfNeeded: stored >> 32) != expected {
                found.append("slot \(slot) holds number \(number) with another key's hash")
            }
            var probe = Int(expected) & mask
            while probe != slot {
                if self.slots[probe] == 0 {
                    found.append("number \(number) at slot \(slot) cut off from its home by empty slot \(probe)")
                    break
                }
                probe = (probe + 1) & mask
            }
        }
        return found
    }

    @inline(__always)
    private static func home(_ stored: UInt64, mask: Int) -> Int {
        Int(stored >> 32) & mask
    }

    /// The first free slot from its home on takes `stored`.
    private mutating func place(_ stored: UInt64) {
        let mask = self.slots.count - 1
        var slot = Self.home(stored, mask: mask)
        while self.slots[slot] != 0 { slot = (slot + 1) & mask }
        self.slots[slot] = stored
    }

    private mutating func rehash(capacity: Int) {
        precondition(capacity <= Self.maxCapacity, "at most 2³² slots: a slot's hash is 32 bits")
        let old = self.slots
        self.slots = Array(repeating: 0, count: capacity)
        for stored in old where stored != 0 { self.place(stored) }
    }
}
