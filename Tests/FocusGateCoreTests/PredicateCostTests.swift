@testable import FocusGateCore
import Foundation
import Testing

/// What a predicate chosen to be slow costs a worker: `LIKE` and the substring operators are
/// linear in the criteria, and what is not (`?` tried at every character) is bounded by the
/// evaluation's budget.
///
/// Linear is shown by the steps counted; the times are a bound a quadratic matcher (about 10^9
/// steps here, seconds) could not meet, with room for a debug build on a busy machine (the same
/// evaluations take 1–12 ms there, beside the other suites).
@Suite("Predicate cost")
struct PredicateCostTests {
    /// The criteria of the slowest case found: 65,455 bytes, at most what an event may carry.
    static let criteria = String(repeating: "a", count: 65_455)

    /// The fastest of five evaluations, so that a busy machine's pauses do not count.
    static func fastest(_ predicate: FilterPredicate, _ criteria: String) -> (
        Duration, Result<Bool, FilterEvaluationError>
    ) {
        var best = Duration.seconds(3600)
        var result: Result<Bool, FilterEvaluationError> = .success(false)
        for _ in 0..<5 {
            let clock = ContinuousClock()
            let start = clock.now
            result = Result { () throws(FilterEvaluationError) -> Bool in try predicate.evaluate(criteria) }
            best = min(best, clock.now - start)
        }
        return (best, result)
    }

    @Test(
        "SELF LIKE '*a{32000}b' against 65 KB of criteria: decided in steps linear in the criteria, well under 100 ms",
        arguments: ["", "[c]", "[cd]"])
    func longLiteralPattern(modifier: String) throws {
        let pattern = "*" + String(repeating: "a", count: 32_000) + "b"
        let predicate = try FilterPredicate("SELF LIKE\(modifier) '\(pattern)'")
        let (time, result) = Self.fastest(predicate, Self.criteria)
        #expect(try result.get() == false)
        #expect(time < .milliseconds(100), "\(time)")
        // The steps taken, counted: the text and the pattern once each, not their product.
        var budget = Int.max
        let taken = Array(Self.criteria.utf8).withUnsafeBytes { text in
            Array(pattern.utf8).withUnsafeBytes { pattern in
                PredicateBytes.like(text, pattern, budget: &budget)
            }
        }
        #expect(taken == false)
        #expect(Int.max - budget <= Self.criteria.utf8.count + pattern.utf8.count)
    }

    @Test(
        "eight 15,000-character patterns and a 32,000-character CONTAINS in one predicate: steps linear in the criteria, well under 100 ms"
    )
    func manyLongPatterns() throws {
        let patterns = (0..<8).map { index in
            "SELF LIKE '*\(String(repeating: "a", count: 15_000))\(Character(Unicode.Scalar(UInt8(98 + index))))*'"
        }
        let needle = String(repeating: "a", count: 32_000) + "b"
        let predicate = try FilterPredicate(patterns.joined(separator: " OR ") + " OR SELF CONTAINS '\(needle)'")
        let (time, result) = Self.fastest(predicate, Self.criteria)
        #expect(try result.get() == false)
        #expect(time < .milliseconds(100), "\(time)")
        // Each pattern's steps: the text and the pattern once each.
        let pattern = "*" + String(repeating: "a", count: 15_000) + "b*"
        var budget = Int.max
        let taken = Array(Self.criteria.utf8).withUnsafeBytes { text in
            Array(pattern.utf8).withUnsafeBytes { pattern in PredicateBytes.like(text, pattern, budget: &budget) }
        }
        #expect(taken == false)
        #expect(Int.max - budget <= Self.criteria.utf8.count + pattern.utf8.count)
    }

    @Test(
        "a pattern whose '?' must be tried at every character runs out of the budget: an evaluation error (predicate-error), bounded in time"
    )
    func budgetBoundsWildcards() throws {
        let pattern = "*" + String(repeating: "a?", count: 16_000) + "b*"
        let predicate = try FilterPredicate("SELF LIKE '\(pattern)'")
        let (time, result) = Self.fastest(predicate, Self.criteria)
        #expect(throws: FilterEvaluationError.self) { try result.get() }
        if case .failure(let error) = result { #expect(error.code == CompiledPredicate.budgetExceeded) }
        // The budget's steps, whatever this build's speed a step (a debug build's are slower).
        #expect(time < .milliseconds(500), "\(time)")
        // Short pieces with '?' are matched as before: what a real filter writes.
        let ordinary = try FilterPredicate("SELF LIKE '*a?b*'")
        #expect(try ordinary.evaluate(Self.criteria + "acb") == true)
        #expect(try ordinary.evaluate(Self.criteria) == false)
    }

    @Test(
        "LIKE agrees with a backtracking matcher on wildcards, several stars and multi-byte characters",
        arguments: [
            ("abc", "a*c", true), ("abc", "a?c", true), ("ac", "a?c", false), ("aXbXc", "*b*", true),
            ("a", "a*a", false), ("aa", "a*a", true), ("éé", "?é", true), ("é", "??", false), ("", "*", true),
            ("", "", true), ("ab", "*?", true), ("ab", "*??*", true), ("ab", "*???*", false),
            ("xaybzc", "x*a*b*c", true), ("xaybzc", "x*b*a*c", false), ("日本語", "日*語", true), ("日本語", "?本?", true),
        ])
    func agreesOnExamples(text: String, pattern: String, expected: Bool) throws {
        var budget = CompiledPredicate.evaluationBudget
        let matched = Array(text.utf8).withUnsafeBytes { text in
            Array(pattern.utf8).withUnsafeBytes { pattern in PredicateBytes.like(text, pattern, budget: &budget) }
        }
        #expect(matched == expected, "'\(text)' LIKE '\(pattern)'")
    }
}
