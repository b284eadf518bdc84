@testable import FocusGate
import Testing

@Suite("Retention sweep: a step's looks shared among a worker's partitions")
struct RetentionSweepTurnsTests {
    @Test("a step looks at the budget in all, however many partitions the worker holds")
    func budgetInAll() {
        var turns = RetentionSweepTurns()
        let held = (0..<256).map { (partition: Int32($0), users: 3_906) }
        for _ in 0..<1_000 {
            let looks = turns.step(budget: 2_000, held: held)
            #expect(looks.reduce(0) { $0 + $1.looks } == 2_000)
        }
        // A worker with fewer users than the budget looks at each of them once a step.
        let few = [(partition: Int32(3), users: 5), (partition: 7, users: 0), (partition: 9, users: 2)]
        let looks = turns.step(budget: 2_000, held: few)
        #expect(looks.map(\.partition) == [3, 9] && looks.map(\.looks) == [5, 2])
    }

    @Test("partitions take turns: a partition with more users than a step keeps its turn, then the next one's comes")
    func turns() {
        var turns = RetentionSweepTurns()
        let held = [
            (partition: Int32(0), users: 5), (partition: 1, users: 3), (partition: 2, users: 0),
            (partition: 4, users: 4),
        ]
        var steps: [[Int32: Int]] = []
        for _ in 0..<4 {
            steps.append(
                Dictionary(uniqueKeysWithValues: turns.step(budget: 4, held: held).map { ($0.partition, $0.looks) }))
        }
        #expect(steps == [[0: 4], [0: 1, 1: 3], [4: 4], [0: 4]])
        // Over full passes every partition gets as many looks as it has users.
        var total: [Int32: Int] = [:]
        for _ in 0..<12 {
            for (partition, looks) in turns.step(budget: 4, held: held) { total[partition, default: 0] += looks }
        }
        #expect(total == [0: 20, 1: 12, 4: 16], "four passes of 12 users from where the turns stood")
    }

    @Test("a partition that went, or came, changes whose turn it is without losing the others' place")
    func heldChanges() {
        var turns = RetentionSweepTurns()
        _ = turns.step(budget: 2, held: [(partition: 0, users: 3), (partition: 5, users: 3)])
        #expect(turns.current == 0)
        // Partition 0 was revoked mid-turn: the turn passes to the next held one, from its start.
        let looks = turns.step(budget: 2, held: [(partition: 5, users: 3)])
        #expect(looks.map(\.partition) == [5] && looks.map(\.looks) == [2])
        #expect(turns.step(budget: 2, held: []).isEmpty)
    }
}
