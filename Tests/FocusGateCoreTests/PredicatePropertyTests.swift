@testable import FocusGateCore
import Testing

/// A small deterministic random generator (SplitMix64), so that failures reproduce.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random predicates and criteria over a small alphabet that hits the interesting cases:
/// case, diacritics (composed and decomposed), wildcards, quotes and escapes, numbers.
struct PredicateGenerator {
    var random: SeededGenerator
    static let pieces = [
        "a", "b", "A", "é", "e\u{301}", "É", "ß", "SS", "*", "?", "-", "'", "\\", "work", "Wörk", "", "1", "ǅ",
    ]

    mutating func text() -> String {
        (0..<Int.random(in: 0...3, using: &self.random)).map { _ in Self.pieces.randomElement(using: &self.random)! }
            .joined()
    }

    mutating func constant() -> FilterOperand {
        switch Int.random(in: 0..<10, using: &self.random) {
        case 0: .number(Double(Int.random(in: 0...3, using: &self.random)))
        case 1: .array((0..<Int.random(in: 0...12, using: &self.random)).map { _ in self.scalarConstant() })
        default: .string(self.text())
        }
    }

    mutating func scalarConstant() -> FilterOperand {
        Int.random(in: 0..<6, using: &self.random) == 0
            ? .number(Double(Int.random(in: 0...3, using: &self.random))) : .string(self.text())
    }

    mutating func comparison() -> FilterComparison {
        let op = FilterOperator.allCases.randomElement(using: &self.random)!
        let options = FilterOptions(rawValue: UInt8.random(in: 0...3, using: &self.random))
        if op == .between {
            return FilterComparison(
                left: .criteria, op, options: options, right: .array([self.scalarConstant(), self.scalarConstant()]))
        }
        return Bool.random(using: &self.random)
            ? FilterComparison(left: .criteria, op, options: options, right: self.constant())
            : FilterComparison(left: self.constant(), op, options: options, right: .criteria)
    }

    mutating func expression(depth: Int = 0) -> FilterExpression {
        let choice = depth >= 3 ? 0 : Int.random(in: 0..<8, using: &self.random)
        switch choice {
        case 4: return .not(self.expression(depth: depth + 1))
        case 5: return .and(self.expression(depth: depth + 1), self.expression(depth: depth + 1))
        case 6: return .or(self.expression(depth: depth + 1), self.expression(depth: depth + 1))
        case 7: return .constant(Bool.random(using: &self.random))
        default: return .comparison(self.comparison())
        }
    }
}

/// A plain interpreter over the parsed form, on Swift strings and Unicode scalars, written
/// independently of the compiled evaluator (which works on bytes, hash sets and stack buffers).
enum ReferenceInterpreter {
    indirect enum Value { case string([Unicode.Scalar]), number(Double), array([Value]) }

    /// `nil` stands for an evaluation error.
    static func evaluate(_ expression: FilterExpression, _ criteria: String) -> Bool? {
        switch expression {
        case .constant(let value): return value
        case .not(let inner): return self.evaluate(inner, criteria).map { !$0 }
        case .and(let left, let right):
            guard let first = self.evaluate(left, criteria) else { return nil }
            return first ? self.evaluate(right, criteria) : false
        case .or(let left, let right):
            guard let first = self.evaluate(left, criteria) else { return nil }
            return first ? true : self.evaluate(right, criteria)
        case .comparison(let comparison):
            return self.compare(comparison, criteria)
        }
    }

    static func value(_ operand: FilterOperand, _ criteria: String, _ options: FilterOptions) -> Value {
        switch operand {
        case .criteria: .string(Array(PredicateText.normalize(criteria, options).unicodeScalars))
        case .string(let text): .string(Array(PredicateText.normalize(text, options).unicodeScalars))
        case .number(let number): .number(number)
        case .array(let values): .array(values.map { self.value($0, criteria, options) })
        }
    }

    static func equal(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.array(let x), .array(let y)): x.count == y.count && zip(x, y).allSatisfy { self.equal($0, $1) }
        default: false
        }
    }

    static func order(_ a: Value, _ b: Value) -> Int? {
        switch (a, b) {
        case (.string(let x), .string(let y)):
            x == y ? 0 : x.lexicographicallyPrecedes(y, by: { $0.value < $1.value }) ? -1 : 1
        case (.number(let x), .number(let y)): x == y ? 0 : x < y ? -1 : 1
        default: nil
        }
    }

    static func like(_ text: ArraySlice<Unicode.Scalar>, _ pattern: ArraySlice<Unicode.Scalar>) -> Bool {
        guard let first = pattern.first else { return text.isEmpty }
        switch first {
        case "*": return (0...text.count).contains { self.like(text.dropFirst($0), pattern.dropFirst()) }
        case "?": return !text.isEmpty && self.like(text.dropFirst(), pattern.dropFirst())
        default: return text.first == first && self.like(text.dropFirst(), pattern.dropFirst())
        }
    }

    static func containsRun(_ haystack: [Unicode.Scalar], _ needle: [Unicode.Scalar]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return needle.isEmpty
            || (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<$0 + needle.count]) == needle }
    }

    static func compare(_ comparison: FilterComparison, _ criteria: String) -> Bool? {
        let left = self.value(comparison.left, criteria, comparison.options)
        let right = self.value(comparison.right, criteria, comparison.options)
        switch comparison.comparisonOperator {
        case .equal: return self.equal(left, right)
        case .notEqual: return !self.equal(left, right)
        case .less: return self.order(left, right).map { $0 < 0 }
        case .lessOrEqual: return self.order(left, right).map { $0 <= 0 }
        case .greater: return self.order(left, right).map { $0 > 0 }
        case .greaterOrEqual: return self.order(left, right).map { $0 >= 0 }
        case .beginsWith, .endsWith, .like:
            guard case .string(let text) = left, case .string(let other) = right else { return nil }
            switch comparison.comparisonOperator {
            case .beginsWith: return text.starts(with: other)
            case .endsWith: return text.reversed().starts(with: other.reversed())
            default: return self.like(text[...], other[...])
            }
        case .contains:
            switch (left, right) {
            case (.string(let text), .string(let needle)): return self.containsRun(text, needle)
            case (.array(let elements), _): return elements.contains { self.equal(right, $0) }
            default: return nil
            }
        case .in:
            switch (left, right) {
            case (_, .array(let elements)): return elements.contains { self.equal(left, $0) }
            case (.string(let needle), .string(let text)): return self.containsRun(text, needle)
            default: return nil
            }
        case .between:
            guard case .array(let bounds) = right, bounds.count == 2,
                let low = self.order(left, bounds[0]), let high = self.order(left, bounds[1])
            else { return nil }
            return low >= 0 && high <= 0
        }
    }
}

@Suite("Predicate properties")
struct PredicatePropertyTests {
    @Test("printing then parsing gives back the same expression", arguments: 0..<8)
    func printParseRoundTrip(seed: UInt64) throws {
        var generator = PredicateGenerator(random: SeededGenerator(state: seed))
        for _ in 0..<250 {
            let expression = generator.expression()
            let reparsed = try FilterPredicate(expression.description)
            #expect(reparsed.expression == expression, "\(expression)")
            #expect(reparsed.warnings.isEmpty, "canonical text needs no precedence: \(expression)")
        }
    }

    @Test("the compiled form agrees with the reference interpreter", arguments: 0..<8)
    func compiledAgreesWithReference(seed: UInt64) throws {
        var generator = PredicateGenerator(random: SeededGenerator(state: 1000 + seed))
        for _ in 0..<250 {
            let predicate = FilterPredicate(generator.expression())
            for _ in 0..<8 {
                let criteria = generator.text()
                let compiled: Bool? = try? predicate.evaluate(criteria)
                let reference = ReferenceInterpreter.evaluate(predicate.expression, criteria)
                #expect(compiled == reference, "\(predicate) with '\(criteria)'")
            }
        }
    }
}
