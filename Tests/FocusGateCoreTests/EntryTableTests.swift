@testable import FocusGateCore
import FocusGateTestSupport
import Testing

@Suite("The partition's entry table")
struct EntryTableTests {
    /// An entry array slot with key (`user`, `idHash`).
    static func entry(user: UInt32, idHash: UInt64) -> StateEntry {
        var entry = StateEntry.free
        entry.user = user
        entry.idHash = idHash
        entry.flags = StateEntry.alive
        return entry
    }

    @Test(
        "inserts and removes find what a map of keys to entries would, with runs of keys that share a home slot; the invariants hold after each step",
        .computeThread, arguments: 1...6)
    func againstMap(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        var table = EntryTable(seed: 0, capacity: 8)
        var entries: [StateEntry] = []
        var model: [Key: UInt32] = [:]
        var free: [UInt32] = []
        // Half of the keys share one home slot in a table of 1,024 (unseeded): long runs, which
        // wrap around the end of the smaller tables, and backward shifts across them.
        var crowded: [UInt64] = []
        var candidate: UInt64 = 0
        while crowded.count < 40 {
            if EntryTable.home(user: 1, idHash: candidate, seed: 0) & 1023 == 1023 { crowded.append(candidate) }
            candidate += 1
        }
        for step in 0..<4_000 {
            let key =
                Bool.random(using: &random)
                ? Key(user: 1, idHash: crowded.randomElement(using: &random)!)
                : Key(user: UInt32.random(in: 0..<8, using: &random), idHash: UInt64.random(in: 0..<60, using: &random))
            if let held = model[key] {
                table.remove(held, in: entries)
                model[key] = nil
                entries[Int(held)] = .free
                free.append(held)
            } else {
                let index: UInt32
                if let reused = free.popLast() {
                    index = reused
                    entries[Int(index)] = Self.entry(user: key.user, idHash: key.idHash)
                } else {
                    index = UInt32(entries.count)
                    entries.append(Self.entry(user: key.user, idHash: key.idHash))
                }
                table.insert(index, in: entries)
                model[key] = index
            }
            try #require(table.violations(keys: entries).isEmpty, "step \(step): \(table.violations(keys: entries))")
            try #require(table.count == model.count, "step \(step)")
            for (key, index) in model {
                try #require(table.find(user: key.user, idHash: key.idHash, in: entries) == index, "step \(step)")
            }
            try #require(table.find(user: key.user, idHash: key.idHash, in: entries) == model[key])
        }
        #expect(table.slots.count >= 2 * model.count)
    }

    struct Key: Hashable {
        var user: UInt32
        var idHash: UInt64
    }

    @Test("removing an entry the table does not hold changes nothing; it grows when it would be over half full")
    func removeAbsentAndGrow() {
        var table = EntryTable(capacity: 4)
        let entries = (0..<3).map { Self.entry(user: 0, idHash: UInt64($0)) }
        table.insert(0, in: entries)
        table.insert(1, in: entries)
        #expect(table.slots.count == 4)
        let before = table.slots
        table.remove(2, in: entries)
        #expect(table.slots == before && table.count == 2)
        table.insert(2, in: entries)
        #expect(table.slots.count == 8 && table.count == 3 && table.violations(keys: entries).isEmpty)
    }

    @Test("reserving room grows the table at once to hold that many without growing, and keeps every entry")
    func reserve() {
        var table = EntryTable(capacity: 4)
        let entries = (0..<40).map { Self.entry(user: $0 % 3, idHash: UInt64($0)) }
        for index in 0..<2 { table.insert(UInt32(index), in: entries) }
        table.reserve(40)
        #expect(table.slots.count == 128 && table.violations(keys: entries).isEmpty)
        for index in 0..<2 {
            #expect(table.find(user: entries[index].user, idHash: UInt64(index), in: entries) == UInt32(index))
        }
        for index in 2..<40 { table.insert(UInt32(index), in: entries) }
        #expect(table.slots.count == 128 && table.violations(keys: entries).isEmpty)
        table.reserve(10)
        #expect(table.slots.count == 128, "never shrinks")
    }

    @Test(
        "a lookup of an absent key, a removal's backward shift and a growth read no entry but the one looked up or removed: each slot keeps its key's hash"
    )
    func slotsKeepTheirHash() throws {
        // 60 keys, half of them sharing one home slot: long runs to shift back.
        var table = EntryTable(seed: 0, capacity: 8)
        var keys: [Key] = []
        var candidate: UInt64 = 0
        while keys.count < 30 {
            if EntryTable.home(user: 1, idHash: candidate, seed: 0) & 127 == 5 {
                keys.append(Key(user: 1, idHash: candidate))
            }
            candidate += 1
        }
        keys += (0..<30).map { Key(user: 2, idHash: UInt64($0) * 7_919) }
        let entries = keys.map { Self.entry(user: $0.user, idHash: $0.idHash) }
        for index in entries.indices { table.insert(UInt32(index), in: entries) }
        // What the caller passes holds only the entry at hand: every other key is wrong.
        func only(_ index: Int) -> [StateEntry] {
            var blind = Array(repeating: Self.entry(user: 9, idHash: 9), count: entries.count)
            blind[index] = entries[index]
            return blind
        }
        #expect(table.find(user: 1, idHash: candidate + 1, in: only(0)) == nil)
        for index in stride(from: 0, to: 60, by: 3) {
            table.remove(UInt32(index), in: only(index))
            try #require(
                table.violations(keys: entries).isEmpty, "after removing \(index): \(table.violations(keys: entries))")
        }
        table.reserve(1_000)
        #expect(table.slots.count == 2_048 && table.violations(keys: entries).isEmpty)
        for index in entries.indices {
            #expect(
                table.find(user: keys[index].user, idHash: keys[index].idHash, in: entries)
                    == (index % 3 == 0 ? nil : UInt32(index)))
        }
        // A slot's hash that is not its entry's key's is a violation.
        var wrong = entries
        wrong[1].idHash ^= 1
        #expect(table.violations(keys: wrong).contains { $0.contains("another key's hash") })
    }

    @Test("ids chosen to share a slot of the unseeded table are spread in a table of its own seed")
    func seeded() {
        // 50 ids whose unseeded slots in a table of 1,024 are one and the same.
        var ids: [String] = []
        var candidate = 0
        while ids.count < 50 {
            let id = "x-\(candidate)"
            if EntryTable.home(user: 0, idHash: PartitionState.idHash(id), seed: 0) & 1023 == 0 { ids.append(id) }
            candidate += 1
        }
        let table = EntryTable()
        let slots = Set(ids.map { table.home(user: 0, idHash: PartitionState.idHash($0)) & 1023 })
        #expect(slots.count > 25, "\(slots.count) slots for 50 ids")
        #expect(EntryTable().seed != table.seed, "each table has a seed of its own")
        #expect(PartitionState().table.seed != PartitionState().table.seed, "so has each partition's state")
    }
}
