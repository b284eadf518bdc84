import FocusGateCore
import FocusGateTestSupport
import Testing

@Suite("The index of identifiers by a hash computed once")
struct IdentifierIndexTests {
    @Test(
        "inserts and removes find what a dictionary would, with runs of ids that share a home slot; the invariants hold after each step",
        .computeThread, arguments: 1...4)
    func againstDictionary(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        var index = IdentifierIndex(capacity: 2)
        // Numbers are places in `ids` ("" for a free one), as the state's user numbers are.
        var ids: [String] = []
        var model: [String: UInt32] = [:]
        var free: [UInt32] = []
        // Half of the ids share one home slot in a table of 1,024: long runs, which wrap around
        // the end of the smaller tables, and backward shifts across them.
        var crowded: [String] = []
        var candidate = 0
        while crowded.count < 40 {
            if IdentifierIndex.hash("user-\(candidate)") & 1023 == 1023 { crowded.append("user-\(candidate)") }
            candidate += 1
        }
        for step in 0..<3_000 {
            let id =
                Bool.random(using: &random)
                ? crowded.randomElement(using: &random)! : "u-\(Int.random(in: 0..<60, using: &random))"
            let hash = IdentifierIndex.hash(id)
            if let held = model[id] {
                let removed = index.remove(held, hash: hash)
                try #require(removed, "step \(step)")
                model[id] = nil
                ids[Int(held)] = ""
                free.append(held)
            } else {
                let number: UInt32
                if let reused = free.popLast() {
                    number = reused
                    ids[Int(number)] = id
                } else {
                    number = UInt32(ids.count)
                    ids.append(id)
                }
                index.insert(number, hash: hash)
                model[id] = number
            }
            let violations = index.violations { ids[Int($0)] }
            try #require(violations.isEmpty, "step \(step): \(violations)")
            try #require(index.count == model.count, "step \(step)")
            for (id, number) in model {
                try #require(index.find(id, hash: IdentifierIndex.hash(id)) { ids[Int($0)] } == number, "step \(step)")
            }
            try #require(index.find(id, hash: hash) { ids[Int($0)] } == model[id], "step \(step)")
        }
    }

    @Test("a number not held is not removed, and a removed one is found no more")
    func removeAbsent() {
        var index = IdentifierIndex()
        let ids = ["a", "b"]
        index.insert(0, hash: IdentifierIndex.hash("a"))
        let otherNumber = index.remove(1, hash: IdentifierIndex.hash("b"))
        let otherHash = index.remove(0, hash: IdentifierIndex.hash("b"))
        #expect(!otherNumber && !otherHash)
        #expect(index.count == 1)
        let held = index.remove(0, hash: IdentifierIndex.hash("a"))
        #expect(held)
        #expect(index.find("a", hash: IdentifierIndex.hash("a")) { ids[Int($0)] } == nil)
        #expect(index.count == 0)
    }

    @Test("ids are their bytes, as Kafka keys are: a precomposed é and e with a combining accent are two ids")
    func idsAreBytes() {
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let ids = [precomposed]
        var index = IdentifierIndex()
        index.insert(0, hash: IdentifierIndex.hash(precomposed))
        #expect(index.find(decomposed, hash: IdentifierIndex.hash(decomposed)) { ids[Int($0)] } == nil)
        #expect(index.find(precomposed, hash: IdentifierIndex.hash(precomposed)) { ids[Int($0)] } == 0)
        // Whatever their hashes: the same stored hash with other bytes is not a match.
        #expect(index.find(decomposed, hash: IdentifierIndex.hash(precomposed)) { ids[Int($0)] } == nil)
    }

    @Test("the invariants check finds a number stored twice and a hash that is not its id's")
    func violationsFound() {
        var index = IdentifierIndex()
        index.insert(0, hash: IdentifierIndex.hash("a"))
        index.insert(0, hash: IdentifierIndex.hash("a"))
        #expect(index.violations { _ in "a" }.contains("number 0 stored twice"))
        var wrong = IdentifierIndex()
        wrong.insert(0, hash: IdentifierIndex.hash("b"))
        #expect(wrong.violations { _ in "a" }.contains { $0.hasSuffix("with another key's hash") })
        #expect(wrong.violations { _ in "b" }.isEmpty)
    }
}
