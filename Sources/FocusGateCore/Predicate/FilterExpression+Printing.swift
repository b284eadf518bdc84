// MARK: - Canonical text

extension FilterExpression: CustomStringConvertible {
    /// The predicate in canonical form: keywords upper-case, single-quoted strings, AND/OR mixes
    /// parenthesized. Parsing it gives back the same expression.
    public var description: String {
        switch self {
        case .constant(let value):
            return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let inner):
            return "NOT \(inner.printedAsOperand)"
        case .and(let left, let right):
            return "\(left.printed(asLeftOf: .and)) AND \(right.printedAsOperand)"
        case .or(let left, let right):
            return "\(left.printed(asLeftOf: .or)) OR \(right.printedAsOperand)"
        case .comparison(let comparison):
            return comparison.description
        }
    }

    private enum Chain { case and, or }

    /// A left operand of the same connective continues the chain (the parser nests chains to the
    /// left); anything else compound is parenthesized, so that no AND/OR mix relies on precedence.
    private func printed(asLeftOf chain: Chain) -> String {
        switch (self, chain) {
        case (.and, .and), (.or, .or): self.description
        default: self.printedAsOperand
        }
    }

    private var printedAsOperand: String {
        switch self {
        case .constant, .comparison, .not: self.description
        case .and, .or: "(\(self.description))"
        }
    }
}

extension FilterComparison: CustomStringConvertible {
    public var description: String {
        var modifiers = ""
        if !self.options.isEmpty {
            modifiers = "["
            if self.options.contains(.caseInsensitive) { modifiers += "c" }
            if self.options.contains(.diacriticInsensitive) { modifiers += "d" }
            modifiers += "]"
        }
        return "\(self.left) \(self.comparisonOperator.rawValue)\(modifiers) \(self.right)"
    }
}

extension FilterOperand: CustomStringConvertible {
    public var description: String {
        switch self {
        case .criteria:
            return "SELF"
        case .string(let value):
            var escaped = "'"
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\\": escaped += "\\\\"
                case "'": escaped += "\\'"
                case "\n": escaped += "\\n"
                case "\t": escaped += "\\t"
                case "\r": escaped += "\\r"
                default: escaped.unicodeScalars.append(scalar)
                }
            }
            return escaped + "'"
        case .number(let value):
            return value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
        case .array(let values):
            return "{" + values.map(\.description).joined(separator: ", ") + "}"
        }
    }
}
