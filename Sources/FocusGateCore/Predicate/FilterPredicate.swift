/// An app's `notificationFilterPredicate`, compiled once and evaluated per notification.
///
/// Compiling validates the text (refusing what Focus filters do not accept, with position and
/// reason), prepares every constant for its comparison's modifiers and turns large `IN` lists
/// into hash sets. Evaluating an ASCII criteria allocates nothing. The value is one reference,
/// so the same compiled predicate can be shared by every context that uses it.
public struct FilterPredicate: Sendable, Hashable, CustomStringConvertible {
    private final class Storage: Sendable {
        let source: String
        let expression: FilterExpression
        let warnings: [FilterPredicateWarning]
        let program: CompiledPredicate

        init(source: String, expression: FilterExpression, warnings: [FilterPredicateWarning]) {
            self.source = source
            self.expression = expression
            self.warnings = warnings
            self.program = CompiledPredicate(expression)
        }
    }

    private let storage: Storage

    /// Compiles a predicate.
    ///
    /// - Parameters:
    ///   - source: NSPredicate format text, with `SELF` standing for the filter criteria.
    ///   - arguments: Values for `%@` placeholders, in order.
    /// - Throws: ``FilterPredicateError`` with the position and reason of the first refused construct.
    public init(_ source: String, arguments: [FilterArgument] = []) throws(FilterPredicateError) {
        let (expression, warnings) = try PredicateParser.parse(source, arguments: arguments)
        self.storage = Storage(source: source, expression: expression, warnings: warnings)
    }

    /// Compiles an already parsed expression.
    public init(_ expression: FilterExpression) {
        self.storage = Storage(source: expression.description, expression: expression, warnings: [])
    }

    /// The text the predicate was compiled from.
    public var source: String { self.storage.source }
    /// The parsed form.
    public var expression: FilterExpression { self.storage.expression }
    /// Constructs that were accepted but deserve a second look (e.g. AND/OR mixed without parentheses).
    public var warnings: [FilterPredicateWarning] { self.storage.warnings }

    /// Evaluates the predicate with `SELF` = `criteria`.
    ///
    /// - Throws: ``FilterEvaluationError`` when a comparison has no meaning for these types
    ///   (e.g. ordering a string against a number); the decision is then `predicate-error`.
    public func evaluate(_ criteria: String) throws(FilterEvaluationError) -> Bool {
        var criteria = criteria
        let outcome = criteria.withUTF8 { self.storage.program.evaluate(criteria: UnsafeRawBufferPointer($0)) }
        switch outcome {
        case .true: return true
        case .false: return false
        case .error(let code): throw FilterEvaluationError(code: code)
        }
    }

    public var description: String { self.expression.description }

    public static func == (lhs: FilterPredicate, rhs: FilterPredicate) -> Bool {
        lhs.storage === rhs.storage || lhs.expression == rhs.expression
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.expression)
    }
}
