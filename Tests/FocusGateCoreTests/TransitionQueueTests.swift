@testable import FocusGateCore
import FocusGateTestSupport
import Testing

@Suite("The partition's timer queue")
struct TransitionQueueTests {
    @Test(
        "one timer per user: set, moved, cleared and popped as a map of users to instants would; the heap and the users' places hold after every step",
        .computeThread, arguments: 1...8)
    func againstMap(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        var queue = TransitionQueue()
        var model: [UInt32: Int64] = [:]
        for step in 0..<5_000 {
            let user = UInt32.random(in: 0..<200, using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                // Few instants: many users due at once.
                let at = Int64.random(in: 0..<50, using: &random)
                queue.set(user, at: at)
                model[user] = at
            case 6..<8:
                queue.set(user, at: nil)
                model[user] = nil
            default:
                let popped = queue.popFirst()
                let earliest = model.values.min()
                try #require(popped?.at == earliest, "step \(step)")
                if let popped {
                    try #require(model[popped.user] == popped.at)
                    model[popped.user] = nil
                }
            }
            try #require(queue.count == model.count, "step \(step): one timer per user")
            try #require(queue.first?.at == model.values.min(), "step \(step)")
            try #require(queue.instant(of: user) == model[user])
            try #require(queue.violations() == [], "step \(step)")
        }
        // Timers due at once come out by user number.
        var last: TransitionTimer?
        while let timer = queue.popFirst() {
            if let last { #expect(last.precedes(timer), "\(last) before \(timer)") }
            last = timer
        }
    }

    @Test(
        "a rollback returns the heap to exactly its committed places, each user's place with it, whatever was set, cleared or popped since",
        .computeThread, arguments: 1...6)
    func rollsBackToTheCommit(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        var queue = TransitionQueue()
        var model: [UInt32: Int64] = [:]
        var committed = (timers: [(Int64, UInt32)](), model: [UInt32: Int64]())
        for step in 0..<4_000 {
            let user = UInt32.random(in: 0..<150, using: &random)
            switch Int.random(in: 0..<20, using: &random) {
            case 0..<10:
                let at = Int64.random(in: 0..<40, using: &random)
                queue.set(user, at: at)
                model[user] = at
            case 10..<14:
                queue.set(user, at: nil)
                model[user] = nil
            case 14..<17:
                if let popped = queue.popFirst() { model[popped.user] = nil }
            case 17:
                queue.commit()
                committed = (queue.timers.map { ($0.at, $0.user) }, model)
            default:
                queue.rollBack()
                model = committed.model
                let timers = queue.timers.map { ($0.at, $0.user) }
                try #require(timers.elementsEqual(committed.timers, by: ==), "step \(step): the committed places")
            }
            try #require(queue.violations() == [], "step \(step)")
            try #require(queue.count == model.count, "step \(step)")
            for each in UInt32(0)..<150 {
                try #require(queue.instant(of: each) == model[each], "step \(step), user \(each)")
            }
        }
    }
}
