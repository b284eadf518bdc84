/// An app's `notificationFilterPredicate`, compiled once and evaluated per notification.
///
/// Compiling validates the text (refusing what Focus filters do not accept, with position and
/// reason), prepares every constant for its comparison's modifiers and turns large `IN` lists
/// into hash sets. Evaluating an ASCII criteria allocates nothing.
public struct FilterPredicate: Sendable, Hashable, CustomStringConvertible {
    /// The text the predicate was compiled from.
    public let source: String
    /// The parsed form.
    public let expression: FilterExpression
    /// Constructs that were accepted but deserve a second look (e.g. AND/OR mixed without parentheses).
    public let warnings: [FilterPredicateWarning]
    let program: CompiledPredicate

    /// Compiles a predicate.
    ///
    /// - Parameters:
    ///   - source: NSPredicate format text, with `SELF` standing for the filter criteria.
    ///   - arguments: Values for `%@` placeholders, in order.
    /// - Throws: ``FilterPredicateError`` with the position and reason of the first refused construct.
    public init(_ source: String, arguments: [FilterArgument] = []) throws(FilterPredicateError) {
        let (expression, warnings) = try PredicateParser.parse(source, arguments: arguments)
        self.source = source
        self.expression = expression
        self.warnings = warnings
        self.program = CompiledPredicate(expression)
    }

    /// Compiles an already parsed expression.
    public init(_ expression: FilterExpression) {
        self.source = expression.description
        self.expression = expression
        self.warnings = []
        self.program = CompiledPredicate(expression)
    }

    /// Evaluates the predicate with `SELF` = `criteria`.
    ///
    /// - Throws: ``FilterEvaluationError`` when a comparison has no meaning for these types
    ///   (e.g. ordering a string against a number); the decision is then `predicate-error`.
    public func evaluate(_ criteria: String) throws(FilterEvaluationError) -> Bool {
        var criteria = criteria
        let outcome = criteria.withUTF8 { self.program.evaluate(criteria: UnsafeRawBufferPointer($0)) }
        switch outcome {
        case .true: return true
        case .false: return false
        case .error(let code): throw FilterEvaluationError(code: code)
        }
    }

    public var description: String { self.expression.description }

    public static func == (lhs: FilterPredicate, rhs: FilterPredicate) -> Bool {
        lhs.expression == rhs.expression
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.expression)
    }
}
