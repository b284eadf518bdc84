/// Why a filter predicate was refused, with where.
///
/// `code` is stable and bounded (safe as a metric label and an API error code); `position` is the
/// UTF-8 offset in the predicate text where the problem starts.
public struct FilterPredicateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable identifier of the kind of problem.
    public var code: Code
    /// Where the problem starts: a UTF-8 offset into the predicate text.
    public var position: Int
    /// A human readable reason.
    public var message: String

    /// Creates an error.
    public init(code: Code, position: Int, message: String) {
        self.code = code
        self.position = position
        self.message = message
    }

    public var description: String {
        "\(self.code.rawValue) at \(self.position): \(self.message)"
    }

    /// Kinds of refusal.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public var description: String { self.rawValue }

        /// The text ended where more was expected.
        public static let unexpectedEnd = Code(rawValue: "unexpected-end")
        /// A token that cannot stand here.
        public static let unexpectedToken = Code(rawValue: "unexpected-token")
        /// A character that starts no token.
        public static let invalidCharacter = Code(rawValue: "invalid-character")
        /// A string literal without its closing quote, or with a bad escape.
        public static let invalidString = Code(rawValue: "invalid-string")
        /// A malformed number literal.
        public static let invalidNumber = Code(rawValue: "invalid-number")
        /// An operator Focus filters do not accept (`MATCHES`, aggregates, `SUBQUERY`, …).
        public static let unsupportedOperator = Code(rawValue: "unsupported-operator")
        /// A key path (`SELF.length`, `%K`, `name`): only `SELF` is a notification's criteria.
        public static let keyPath = Code(rawValue: "key-path")
        /// A `$variable`.
        public static let variable = Code(rawValue: "variable")
        /// A function call.
        public static let function = Code(rawValue: "function")
        /// A `%@` without an argument, or an argument of the wrong type.
        public static let argument = Code(rawValue: "argument")
        /// An unknown comparison modifier (only `[c]`, `[d]`, `[cd]`).
        public static let modifier = Code(rawValue: "modifier")
        /// Nesting (parentheses, `NOT`, arrays) deeper than ``PredicateParser/maxDepth``, or more
        /// than ``PredicateParser/maxTerms`` comparisons and connectives: refused before the
        /// recursive passes over the expression could exhaust a thread's stack.
        public static let tooComplex = Code(rawValue: "too-complex")
    }
}

/// A note about an accepted predicate that may not mean what its author thinks.
public struct FilterPredicateWarning: Sendable, Hashable, CustomStringConvertible {
    /// A stable identifier.
    public var code: String
    /// Where the construct starts (UTF-8 offset).
    public var position: Int
    /// A human readable explanation.
    public var message: String

    public var description: String { "\(self.code) at \(self.position): \(self.message)" }

    static func mixedAndOr(at position: Int) -> FilterPredicateWarning {
        FilterPredicateWarning(
            code: "mixed-and-or",
            position: position,
            message:
                "AND and OR mixed without parentheses; FocusGate binds AND tighter than OR, which Apple does not document"
        )
    }
}

/// Why a compiled predicate could not be evaluated for a criteria (a `predicate-error` decision).
public struct FilterEvaluationError: Error, Sendable, Hashable {
    /// A stable identifier, e.g. `type-mismatch`.
    public var code: String

    /// Creates an evaluation error.
    public init(code: String) {
        self.code = code
    }
}
