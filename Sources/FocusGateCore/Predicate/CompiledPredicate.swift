/// The evaluable form of a predicate: constants prepared, `IN` lists hashed. Immutable.
final class CompiledPredicate: Sendable {
    enum Outcome: Equatable {
        case `true`, `false`
        case error(String)

        init(_ value: Bool) { self = value ? .true : .false }
    }

    indirect enum Node: Sendable {
        case constant(Bool)
        case not(Node)
        case and(Node, Node)
        case or(Node, Node)
        case comparison(Comparison)
    }

    struct Comparison: Sendable {
        var comparisonOperator: FilterOperator
        /// Which prepared form of the criteria this comparison reads (``FilterOptions/rawValue``).
        var view: Int
        var left: Operand
        var right: Operand
        /// For `SELF IN {strings…}` with many elements.
        var membership: ByteStringSet?
    }

    indirect enum Operand: Sendable {
        case criteria
        case string([UInt8])
        case number(Double)
        case array([Operand])
    }

    let root: Node
    /// Bit `1 << options.rawValue` is set when some comparison reads that prepared form of the criteria.
    let usedViews: Int

    init(_ expression: FilterExpression) {
        var usedViews = 0
        self.root = Self.compile(expression, usedViews: &usedViews)
        self.usedViews = usedViews
    }

    // MARK: - Compiling

    private static let hashedMembershipThreshold = 8

    private static func compile(_ expression: FilterExpression, usedViews: inout Int) -> Node {
        switch expression {
        case .constant(let value):
            return .constant(value)
        case .not(let inner):
            return .not(self.compile(inner, usedViews: &usedViews))
        case .and(let left, let right):
            return .and(self.compile(left, usedViews: &usedViews), self.compile(right, usedViews: &usedViews))
        case .or(let left, let right):
            return .or(self.compile(left, usedViews: &usedViews), self.compile(right, usedViews: &usedViews))
        case .comparison(let comparison):
            let options = comparison.options
            let left = self.compile(comparison.left, options)
            let right = self.compile(comparison.right, options)
            if comparison.left == .criteria || comparison.right == .criteria || Self.containsCriteria(comparison.right)
            {
                usedViews |= 1 << Int(options.rawValue)
            }
            var membership: ByteStringSet?
            if comparison.comparisonOperator == .in, case .array(let elements) = right {
                let strings = elements.compactMap { element -> [UInt8]? in
                    if case .string(let bytes) = element { return bytes }
                    return nil
                }
                if strings.count >= self.hashedMembershipThreshold {
                    membership = ByteStringSet(strings)
                }
            }
            return .comparison(
                Comparison(
                    comparisonOperator: comparison.comparisonOperator, view: Int(options.rawValue), left: left,
                    right: right, membership: membership)
            )
        }
    }

    private static func compile(_ operand: FilterOperand, _ options: FilterOptions) -> Operand {
        switch operand {
        case .criteria: .criteria
        case .string(let value): .string(Array(PredicateText.normalize(value, options).utf8))
        case .number(let value): .number(value)
        case .array(let values): .array(values.map { self.compile($0, options) })
        }
    }

    private static func containsCriteria(_ operand: FilterOperand) -> Bool {
        if case .array(let values) = operand { return values.contains(.criteria) }
        return false
    }

    // MARK: - Evaluating

    /// The steps one evaluation may take in `LIKE` patterns with `?` (each a byte compared): about
    /// a millisecond of a core. An evaluation that would take more is an error (the notification is
    /// delivered, reason `predicate-error`): a pattern and criteria chosen to be slow cannot hold a
    /// worker. Every other comparison is linear in the criteria and needs no budget.
    static let evaluationBudget = 1 << 21

    /// The error of an evaluation that ran out of ``evaluationBudget``.
    static let budgetExceeded = "too-costly"

    /// Evaluates with `criteria` as raw UTF-8.
    func evaluate(criteria: UnsafeRawBufferPointer) -> Outcome {
        var budget = Self.evaluationBudget
        return self.evaluate(criteria: criteria, budget: &budget)
    }

    private func evaluate(criteria: UnsafeRawBufferPointer, budget: inout Int) -> Outcome {
        if self.usedViews == 0 {
            return self.evaluate(self.root, CriteriaViews(), &budget)
        }
        if PredicateText.isASCII(criteria) {
            // ASCII: exact and [d] read the bytes as they are; [c] and [cd] read a lower-cased copy on the stack.
            let needsLowercase = self.usedViews & (1 << 1 | 1 << 3) != 0
            guard needsLowercase else {
                return self.evaluate(self.root, CriteriaViews(exact: criteria, lowered: criteria), &budget)
            }
            return withUnsafeTemporaryAllocation(byteCount: max(criteria.count, 1), alignment: 1) { buffer in
                for index in 0..<criteria.count {
                    let byte = criteria[index]
                    buffer[index] = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
                }
                let lowered = UnsafeRawBufferPointer(rebasing: buffer[0..<criteria.count])
                return self.evaluate(self.root, CriteriaViews(exact: criteria, lowered: lowered), &budget)
            }
        }
        // Non-ASCII: prepare each form the predicate reads (this path allocates).
        let text = String(decoding: criteria, as: UTF8.self)
        var prepared: [[UInt8]] = Array(repeating: [], count: 4)
        for view in 0..<4 where self.usedViews & (1 << view) != 0 {
            prepared[view] = Array(PredicateText.normalize(text, FilterOptions(rawValue: UInt8(view))).utf8)
        }
        return prepared[0].withUnsafeBytes { v0 in
            prepared[1].withUnsafeBytes { v1 in
                prepared[2].withUnsafeBytes { v2 in
                    prepared[3].withUnsafeBytes { v3 in
                        self.evaluate(self.root, CriteriaViews(views: (v0, v1, v2, v3)), &budget)
                    }
                }
            }
        }
    }

    /// The criteria prepared for each modifier combination, indexed by ``FilterOptions/rawValue``.
    struct CriteriaViews {
        var views: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer)

        init() {
            let empty = UnsafeRawBufferPointer(start: nil, count: 0)
            self.views = (empty, empty, empty, empty)
        }

        init(exact: UnsafeRawBufferPointer, lowered: UnsafeRawBufferPointer) {
            self.views = (exact, lowered, exact, lowered)
        }

        init(views: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer)) {
            self.views = views
        }

        subscript(view: Int) -> UnsafeRawBufferPointer {
            switch view {
            case 0: self.views.0
            case 1: self.views.1
            case 2: self.views.2
            default: self.views.3
            }
        }
    }

    private func evaluate(_ node: Node, _ criteria: CriteriaViews, _ budget: inout Int) -> Outcome {
        switch node {
        case .constant(let value):
            return Outcome(value)
        case .not(let inner):
            switch self.evaluate(inner, criteria, &budget) {
            case .true: return .false
            case .false: return .true
            case .error(let code): return .error(code)
            }
        case .and(let left, let right):
            let first = self.evaluate(left, criteria, &budget)
            return first == .true ? self.evaluate(right, criteria, &budget) : first
        case .or(let left, let right):
            let first = self.evaluate(left, criteria, &budget)
            return first == .false ? self.evaluate(right, criteria, &budget) : first
        case .comparison(let comparison):
            return self.evaluate(comparison, criteria[comparison.view], budget: &budget)
        }
    }
}
