/// A parsed filter predicate: the subset of the NSPredicate language that Focus filters accept,
/// with `SELF` standing for the notification's `filterCriteria`.
public indirect enum FilterExpression: Sendable, Hashable {
    /// `TRUEPREDICATE` or `FALSEPREDICATE`.
    case constant(Bool)
    /// `NOT e`, `!e`.
    case not(FilterExpression)
    /// `a AND b`, `a && b`.
    case and(FilterExpression, FilterExpression)
    /// `a OR b`, `a || b`.
    case or(FilterExpression, FilterExpression)
    /// `left op[modifiers] right`.
    case comparison(FilterComparison)
}

/// One comparison, e.g. `SELF IN {'work'}` or `SELF BEGINSWITH[c] 'acct-'`.
public struct FilterComparison: Sendable, Hashable {
    public var left: FilterOperand
    public var comparisonOperator: FilterOperator
    public var options: FilterOptions
    public var right: FilterOperand

    public init(
        left: FilterOperand, _ comparisonOperator: FilterOperator, options: FilterOptions = [], right: FilterOperand
    ) {
        self.left = left
        self.comparisonOperator = comparisonOperator
        self.options = options
        self.right = right
    }
}

/// A value in a comparison.
public indirect enum FilterOperand: Sendable, Hashable {
    /// The notification's criteria.
    case criteria
    /// A string literal (or a `%@` filled with a string).
    case string(String)
    /// A number literal (or a `%@` filled with a number). A number never equals a string.
    case number(Double)
    /// An array literal `{…}` (or a `%@` filled with an array).
    case array([FilterOperand])
}

/// The comparison operators Focus filters accept.
public enum FilterOperator: String, Sendable, Hashable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    case `in` = "IN"
    case between = "BETWEEN"
}

/// Comparison modifiers: `[c]` case-insensitive, `[d]` diacritic-insensitive.
public struct FilterOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `[c]`: compare by Unicode case folding.
    public static let caseInsensitive = FilterOptions(rawValue: 1)
    /// `[d]`: compare after removing combining marks from the canonical decomposition.
    public static let diacriticInsensitive = FilterOptions(rawValue: 2)
}

/// A value for a `%@` placeholder.
public enum FilterArgument: Sendable, Hashable {
    case string(String)
    case number(Double)
    case array([FilterArgument])

    var operand: FilterOperand {
        switch self {
        case .string(let value): .string(value)
        case .number(let value): .number(value)
        case .array(let values): .array(values.map(\.operand))
        }
    }
}
