@testable import FocusGateCore
import FocusGateTestSupport
import Testing

@Suite("Slots with an undo log (the partition state's before-images)")
struct UndoableArrayTests {
    @Test(
        "random appends, recorded changes, commits and rollbacks: a rollback returns to the last commit, whatever was changed how often; the invariants hold after each step",
        .computeThread, arguments: 1...6)
    func againstSnapshots(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        var slots = UndoableArray<Int>()
        var model: [Int] = []
        var committed: [Int] = []
        var rollbacks = 0
        for step in 0..<5_000 {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<25:
                let value = Int.random(in: 0..<1_000, using: &random)
                slots.append(value)
                model.append(value)
            case 25..<70 where !model.isEmpty:
                // Often the same few slots: several images of one slot.
                let slot = Int.random(in: 0..<min(model.count, 8 + step % 50), using: &random)
                let value = Int.random(in: 0..<1_000, using: &random)
                if Bool.random(using: &random) {
                    slots.modify(UInt32(slot)) { $0 = value }
                } else {
                    slots.replace(UInt32(slot), with: value)
                }
                model[slot] = value
            case 70..<75 where slots.committedCount < model.count:
                // A slot appended since the commit needs no image: the rollback drops it.
                let slot = Int.random(in: slots.committedCount..<model.count, using: &random)
                slots[slot] += 1
                model[slot] += 1
            case 75..<88:
                slots.commit()
                committed = model
            case 88..<100:
                slots.rollBack()
                model = committed
                rollbacks += 1
            default:
                continue
            }
            try #require(slots.violations.isEmpty, "step \(step): \(slots.violations)")
            try #require(Array(slots) == model, "step \(step)")
            try #require(slots.committedCount == committed.count, "step \(step)")
        }
        #expect(rollbacks > 100)
    }

    @Test(
        "only slots that existed at the commit and were changed through modify or replace keep an image, one per change"
    )
    func imagesOnlyForCommittedChanges() {
        var slots = UndoableArray<Int>()
        for value in 0..<100_000 { slots.append(value) }
        slots.commit()
        slots.modify(7) { $0 = -7 }
        slots.modify(7) { $0 = -70 }
        slots.replace(99_999, with: -1)
        slots.append(100_000)
        slots.modify(100_000) { $0 = 0 }
        #expect(slots.beforeImages.map(\.slot) == [7, 7, 99_999], "not the 100,000 slots, nor the one appended")
        #expect(slots.beforeImages.map(\.element) == [7, -7, 99_999])
        #expect(Array(slots.appendedSinceCommit) == [0])
        var restored: [(UInt32, Int, Int)] = []
        slots.rollBack { restored.append(($0, $1, $2)) }
        #expect(restored.map(\.0) == [99_999, 7, 7], "newest first")
        #expect(restored.map(\.1) == [-1, -70, -7], "each slot as it was before its image is put back")
        #expect(restored.map(\.2) == [99_999, -7, 7])
        #expect(slots[7] == 7 && slots[99_999] == 99_999 && slots.count == 100_000)
        #expect(slots.beforeImages.isEmpty)
    }

    @Test("a write through the subscript keeps no image: a change mark set on a committed slot outlives a rollback")
    func unrecordedWrites() {
        var slots = UndoableArray<Int>()
        slots.append(1)
        slots.commit()
        slots[0] += 10
        slots.rollBack()
        #expect(Array(slots) == [11])
        slots.modify(0) { $0 = 5 }
        slots.commit()
        slots.rollBack()
        #expect(Array(slots) == [5], "a commit keeps what was changed")
    }
}
