@testable import FocusGateCore
import Testing

@Suite("The interning pool of entries' attributes")
struct AttributePoolTests {
    static func attributes(_ number: Int) -> EntryAttributes {
        EntryAttributes(
            criteria: number % 3 == 0 ? nil : "c\(number % 7)", sender: number % 2 == 0 ? nil : "s\(number)",
            thread: number % 5 == 0 ? "t\(number % 3)" : nil)
    }

    @Test("equal attributes share one number, none is 0, and a number reads back its attributes")
    func interning() {
        var pool = AttributePool()
        #expect(pool.intern(.none) == 0)
        let first = pool.intern(EntryAttributes(criteria: "work", sender: "ann"))
        #expect(pool.intern(EntryAttributes(criteria: "work", sender: "ann")) == first)
        #expect(pool.intern(EntryAttributes(criteria: "work", sender: nil)) != first)
        #expect(pool.intern(EntryAttributes(criteria: "work", sender: "ann", thread: "t")) != first)
        #expect(pool[first] == EntryAttributes(criteria: "work", sender: "ann"))
        #expect(pool[0] == .none)
        #expect(pool.count == 3)
        #expect(pool.violations.isEmpty)
    }

    @Test(
        "interning and collecting at random: every number in use reads back what it was interned as, renumbered by each collection; the invariants hold throughout",
        arguments: 1...4)
    func againstModel(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        var pool = AttributePool()
        // What each holder (an entry) has: its number and the attributes it interned.
        var holders: [(number: UInt32, attributes: EntryAttributes)] = []
        var collections = 0
        for step in 0..<6_000 {
            if Int.random(in: 0..<10, using: &random) < 7 || holders.isEmpty {
                let attributes = Self.attributes(Int.random(in: 0..<400, using: &random))
                holders.append((pool.intern(attributes), attributes))
            } else {
                holders.remove(at: Int.random(in: 0..<holders.count, using: &random))
            }
            if step % 500 == 499 {
                var used = [Bool](repeating: false, count: pool.count + 1)
                for holder in holders { used[Int(holder.number)] = true }
                let renumbered = pool.collect(keeping: used)
                for index in holders.indices { holders[index].number = renumbered[Int(holders[index].number)] }
                collections += 1
                let inUse = Set(holders.map(\.number)).subtracting([0])
                try #require(pool.count == inUse.count, "step \(step): only what is in use is kept")
            }
            guard step % 100 == 99 else { continue }
            try #require(pool.violations.isEmpty, "step \(step): \(pool.violations)")
            for holder in holders {
                try #require(pool[holder.number] == holder.attributes, "step \(step)")
            }
        }
        #expect(collections == 12)
    }

    @Test("a collection pays only once the pool has doubled since the last one (and holds 1,024 or more)")
    func collectionThreshold() {
        var pool = AttributePool()
        var needs: [Bool] = []
        for number in 0..<1_023 { _ = pool.intern(EntryAttributes(criteria: "c\(number)", sender: nil)) }
        needs.append(pool.needsCollection)
        _ = pool.intern(EntryAttributes(criteria: "c1023", sender: nil))
        needs.append(pool.needsCollection)
        var used = [Bool](repeating: true, count: pool.count + 1)
        used[1] = false
        _ = pool.collect(keeping: used)
        let count = pool.count
        needs.append(pool.needsCollection)
        for number in 1_024..<2_046 { _ = pool.intern(EntryAttributes(criteria: "c\(number)", sender: nil)) }
        needs.append(pool.needsCollection)
        _ = pool.intern(EntryAttributes(criteria: "c2046", sender: nil))
        needs.append(pool.needsCollection)
        #expect(count == 1_023)
        #expect(needs == [false, true, false, false, true], "1,023; 1,024; 1,023 after; 2,045; 2,046 (2 × 1,023)")
    }
}
