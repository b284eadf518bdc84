// MARK: - Comparisons on prepared values

extension CompiledPredicate {
    /// A comparison side with the criteria resolved to its prepared bytes.
    private enum Value {
        case bytes(UnsafeRawBufferPointer)
        case number(Double)
        case array([Operand])
    }

    func evaluate(_ comparison: Comparison, _ criteria: UnsafeRawBufferPointer, budget: inout Int) -> Outcome {
        Self.withValue(comparison.left, criteria) { left in
            Self.withValue(comparison.right, criteria) { right in
                Self.apply(
                    comparison.comparisonOperator, left, right, criteria: criteria, membership: comparison.membership,
                    budget: &budget)
            }
        }
    }

    private static func withValue(_ operand: Operand, _ criteria: UnsafeRawBufferPointer, _ body: (Value) -> Outcome)
        -> Outcome
    {
        switch operand {
        case .criteria: body(.bytes(criteria))
        case .string(let bytes): bytes.withUnsafeBytes { body(.bytes($0)) }
        case .number(let value): body(.number(value))
        case .array(let elements): body(.array(elements))
        }
    }

    private static func apply(
        _ comparisonOperator: FilterOperator,
        _ left: Value,
        _ right: Value,
        criteria: UnsafeRawBufferPointer,
        membership: ByteStringSet?,
        budget: inout Int
    ) -> Outcome {
        switch comparisonOperator {
        case .equal:
            return Outcome(self.equal(left, right, criteria))
        case .notEqual:
            return Outcome(!self.equal(left, right, criteria))
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard let order = self.order(left, right) else { return .error("type-mismatch") }
            switch comparisonOperator {
            case .less: return Outcome(order < 0)
            case .lessOrEqual: return Outcome(order <= 0)
            case .greater: return Outcome(order > 0)
            default: return Outcome(order >= 0)
            }
        case .beginsWith, .endsWith, .like:
            guard case .bytes(let text) = left, case .bytes(let pattern) = right else { return .error("type-mismatch") }
            switch comparisonOperator {
            case .beginsWith: return Outcome(PredicateBytes.hasPrefix(text, pattern))
            case .endsWith: return Outcome(PredicateBytes.hasSuffix(text, pattern))
            default:
                guard let matched = PredicateBytes.like(text, pattern, budget: &budget) else {
                    return .error(Self.budgetExceeded)
                }
                return Outcome(matched)
            }
        case .contains:
            switch (left, right) {
            case (.bytes(let text), .bytes(let needle)):
                return Outcome(PredicateBytes.contains(text, needle))
            case (.array(let elements), _):
                return Outcome(self.isMember(right, of: elements, criteria))
            default:
                return .error("type-mismatch")
            }
        case .in:
            switch (left, right) {
            case (_, .array(let elements)):
                if let membership, case .bytes(let needle) = left {
                    return Outcome(membership.contains(needle))
                }
                return Outcome(self.isMember(left, of: elements, criteria))
            case (.bytes(let needle), .bytes(let text)):
                return Outcome(PredicateBytes.contains(text, needle))
            default:
                return .error("type-mismatch")
            }
        case .between:
            guard case .array(let bounds) = right, bounds.count == 2 else { return .error("type-mismatch") }
            return self.withValue(bounds[0], criteria) { lower in
                self.withValue(bounds[1], criteria) { upper in
                    guard let fromLower = self.order(left, lower), let toUpper = self.order(left, upper) else {
                        return .error("type-mismatch")
                    }
                    return Outcome(fromLower >= 0 && toUpper <= 0)
                }
            }
        }
    }

    /// Equality: strings by prepared bytes, numbers by value; a number never equals a string.
    private static func equal(_ left: Value, _ right: Value, _ criteria: UnsafeRawBufferPointer) -> Bool {
        switch (left, right) {
        case (.bytes(let a), .bytes(let b)):
            return PredicateBytes.equal(a, b)
        case (.number(let a), .number(let b)):
            return a == b
        case (.array(let a), .array(let b)):
            guard a.count == b.count else { return false }
            for (x, y) in zip(a, b) {
                let same = self.withValue(x, criteria) { first in
                    self.withValue(y, criteria) { second in Outcome(self.equal(first, second, criteria)) }
                }
                if same != .true { return false }
            }
            return true
        default:
            return false
        }
    }

    private static func order(_ left: Value, _ right: Value) -> Int? {
        switch (left, right) {
        case (.bytes(let a), .bytes(let b)): PredicateBytes.order(a, b)
        case (.number(let a), .number(let b)): a < b ? -1 : a > b ? 1 : 0
        default: nil
        }
    }

    private static func isMember(_ value: Value, of elements: [Operand], _ criteria: UnsafeRawBufferPointer) -> Bool {
        for element in elements {
            let found = self.withValue(element, criteria) { Outcome(self.equal(value, $0, criteria)) }
            if found == .true { return true }
        }
        return false
    }
}
