/// Parses predicate text into a ``FilterExpression``.
///
/// Grammar (keywords case-insensitive; AND binds tighter than OR):
///
///     predicate  := and (("OR" | "||") and)*
///     and        := not (("AND" | "&&") not)*
///     not        := ("NOT" | "!") not | primary
///     primary    := "(" predicate ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
///     comparison := operand operator modifiers? operand
///     operand    := "SELF" | string | number | "{" (operand ("," operand)*)? "}" | "%@"
struct PredicateParser {
    // Tokens are lexed on demand, so that errors are reported in reading order.
    private var lexer: PredicateLexer
    private var tokens: [PredicateLexer.Token] = []
    private var index = 0
    private let arguments: [FilterArgument]
    private var argumentIndex = 0
    private(set) var warnings: [FilterPredicateWarning] = []
    private var depth = 0
    private var terms = 0

    /// Deepest nesting of parentheses, `NOT` and arrays accepted.
    static let maxDepth = 64
    /// Most comparisons and connectives in one predicate (AND/OR chains make the expression
    /// tree as deep as they are long).
    static let maxTerms = 1000

    private init(text: String, arguments: [FilterArgument]) {
        self.lexer = PredicateLexer(text)
        self.arguments = arguments
    }

    /// Parses `text`, filling `%@` placeholders from `arguments` in order.
    static func parse(_ text: String, arguments: [FilterArgument]) throws(FilterPredicateError) -> (
        FilterExpression, [FilterPredicateWarning]
    ) {
        var parser = PredicateParser(text: text, arguments: arguments)
        let expression = try parser.parseOr()
        guard try parser.current().kind == .end else {
            throw try parser.unexpected("expected AND, OR or the end of the predicate")
        }
        if parser.argumentIndex < arguments.count {
            throw FilterPredicateError(
                code: .argument, position: try parser.current().position,
                message: "\(arguments.count) arguments given for \(parser.argumentIndex) %@ placeholders")
        }
        return (expression, parser.warnings)
    }

    // MARK: - Connectives

    private mutating func parseOr() throws(FilterPredicateError) -> FilterExpression {
        let start = try self.current().position
        var (left, mixed) = try self.parseAnd()
        var sawOr = false
        while try self.accept(word: "OR", symbol: "||") {
            let (right, rightIsAndChain) = try self.parseAnd()
            mixed = mixed || rightIsAndChain
            sawOr = true
            try self.countTerm()
            left = .or(left, right)
        }
        if sawOr && mixed {
            self.warnings.append(.mixedAndOr(at: start))
        }
        return left
    }

    /// Returns the expression and whether it is a bare (unparenthesized) AND chain.
    private mutating func parseAnd() throws(FilterPredicateError) -> (FilterExpression, Bool) {
        var left = try self.parseNot()
        var isChain = false
        while try self.accept(word: "AND", symbol: "&&") {
            try self.countTerm()
            left = .and(left, try self.parseNot())
            isChain = true
        }
        return (left, isChain)
    }

    private mutating func parseNot() throws(FilterPredicateError) -> FilterExpression {
        if try self.accept(word: "NOT", symbol: "!") {
            try self.enter()
            defer { self.depth -= 1 }
            return .not(try self.parseNot())
        }
        return try self.parsePrimary()
    }

    private mutating func parsePrimary() throws(FilterPredicateError) -> FilterExpression {
        if try self.acceptSymbol("(") {
            try self.enter()
            defer { self.depth -= 1 }
            let inner = try self.parseOr()
            guard try self.acceptSymbol(")") else { throw try self.unexpected("expected )") }
            return inner
        }
        if try self.acceptWord("TRUEPREDICATE") { return .constant(true) }
        if try self.acceptWord("FALSEPREDICATE") { return .constant(false) }
        try self.countTerm()
        return .comparison(try self.parseComparison())
    }

    /// Goes one nesting level deeper (the token just taken opened it), refusing past ``maxDepth``.
    private mutating func enter() throws(FilterPredicateError) {
        self.depth += 1
        guard self.depth <= Self.maxDepth else {
            throw FilterPredicateError(
                code: .tooComplex, position: self.tokens[self.index - 1].position,
                message: "nesting deeper than \(Self.maxDepth) levels")
        }
    }

    /// Counts a comparison or connective, refusing past ``maxTerms``.
    private mutating func countTerm() throws(FilterPredicateError) {
        self.terms += 1
        guard self.terms <= Self.maxTerms else {
            throw FilterPredicateError(
                code: .tooComplex, position: try self.current().position,
                message: "more than \(Self.maxTerms) comparisons and connectives")
        }
    }

    // MARK: - Comparisons

    private mutating func parseComparison() throws(FilterPredicateError) -> FilterComparison {
        let left = try self.parseOperand()
        let operatorToken = try self.current()
        let comparisonOperator: FilterOperator
        switch operatorToken.kind {
        case .symbol("=="), .symbol("="): comparisonOperator = .equal
        case .symbol("!="), .symbol("<>"): comparisonOperator = .notEqual
        case .symbol("<"): comparisonOperator = .less
        case .symbol("<="), .symbol("=<"): comparisonOperator = .lessOrEqual
        case .symbol(">"): comparisonOperator = .greater
        case .symbol(">="), .symbol("=>"): comparisonOperator = .greaterOrEqual
        case .word("BEGINSWITH"): comparisonOperator = .beginsWith
        case .word("ENDSWITH"): comparisonOperator = .endsWith
        case .word("CONTAINS"): comparisonOperator = .contains
        case .word("LIKE"): comparisonOperator = .like
        case .word("IN"): comparisonOperator = .in
        case .word("BETWEEN"): comparisonOperator = .between
        case .word("MATCHES"):
            throw FilterPredicateError(
                code: .unsupportedOperator, position: operatorToken.position,
                message: "MATCHES (regular expressions) is not accepted by Focus filters")
        case .end:
            throw FilterPredicateError(
                code: .unexpectedEnd, position: operatorToken.position, message: "expected a comparison operator")
        default:
            throw try self.unexpected("expected a comparison operator")
        }
        self.index += 1
        var options: FilterOptions = []
        if case .modifiers(let given) = try self.current().kind {
            options = given
            self.index += 1
        }
        let rightPosition = try self.current().position
        let right = try self.parseOperand()
        if comparisonOperator == .between {
            guard case .array(let bounds) = right, bounds.count == 2 else {
                throw FilterPredicateError(
                    code: .unexpectedToken, position: rightPosition, message: "BETWEEN takes {lower, upper}")
            }
        }
        return FilterComparison(left: left, comparisonOperator, options: options, right: right)
    }

    private mutating func parseOperand() throws(FilterPredicateError) -> FilterOperand {
        let token = try self.current()
        switch token.kind {
        case .word("SELF"):
            self.index += 1
            if try self.current().kind == .symbol(".") {
                throw FilterPredicateError(
                    code: .keyPath, position: try self.current().position,
                    message: "key paths on SELF are not supported")
            }
            return .criteria
        case .string(let value):
            self.index += 1
            return .string(value)
        case .number(let value):
            self.index += 1
            return .number(value)
        case .placeholder:
            self.index += 1
            guard self.argumentIndex < self.arguments.count else {
                throw FilterPredicateError(
                    code: .argument, position: token.position, message: "no argument for this %@")
            }
            defer { self.argumentIndex += 1 }
            return self.arguments[self.argumentIndex].operand
        case .symbol("{"):
            self.index += 1
            try self.enter()
            defer { self.depth -= 1 }
            var elements: [FilterOperand] = []
            if try self.acceptSymbol("}") { return .array(elements) }
            repeat {
                let element = try self.parseOperand()
                if element == .criteria {
                    throw FilterPredicateError(
                        code: .unexpectedToken, position: token.position, message: "SELF cannot be an array element")
                }
                elements.append(element)
            } while try self.acceptSymbol(",")
            guard try self.acceptSymbol("}") else { throw try self.unexpected("expected , or }") }
            return .array(elements)
        case .word(let word):
            throw try self.refusedWord(word, at: token.position)
        case .end:
            throw FilterPredicateError(
                code: .unexpectedEnd, position: token.position,
                message: "expected SELF, a string, a number, an array or %@")
        default:
            throw try self.unexpected("expected SELF, a string, a number, an array or %@")
        }
    }

    private mutating func refusedWord(_ word: String, at position: Int) throws(FilterPredicateError)
        -> FilterPredicateError
    {
        switch word {
        case "ANY", "ALL", "SOME", "NONE":
            return FilterPredicateError(
                code: .unsupportedOperator, position: position, message: "\(word) aggregates are not supported")
        case "SUBQUERY":
            return FilterPredicateError(
                code: .unsupportedOperator, position: position, message: "SUBQUERY is not supported")
        case "AND", "OR", "NOT", "IN", "LIKE", "CONTAINS", "BEGINSWITH", "ENDSWITH", "BETWEEN", "MATCHES":
            return FilterPredicateError(
                code: .unexpectedToken, position: position, message: "\(word) cannot start an operand")
        case "NULL", "NIL", "TRUE", "FALSE", "YES", "NO":
            return FilterPredicateError(
                code: .unexpectedToken, position: position,
                message: "\(word) literals are not supported: compare SELF with strings")
        default:
            if try self.token(at: self.index + 1).kind == .symbol("(") {
                return FilterPredicateError(code: .function, position: position, message: "functions are not supported")
            }
            return FilterPredicateError(
                code: .keyPath, position: position,
                message: "key paths are not supported: only SELF (the filter criteria) may be compared")
        }
    }

    // MARK: - Tokens

    private mutating func token(at index: Int) throws(FilterPredicateError) -> PredicateLexer.Token {
        while self.tokens.count <= index {
            if let last = self.tokens.last, last.kind == .end { return last }
            self.tokens.append(try self.lexer.next())
        }
        return self.tokens[index]
    }

    private mutating func current() throws(FilterPredicateError) -> PredicateLexer.Token {
        try self.token(at: self.index)
    }

    private mutating func acceptWord(_ word: String) throws(FilterPredicateError) -> Bool {
        guard try self.current().kind == .word(word) else { return false }
        self.index += 1
        return true
    }

    private mutating func accept(word: String, symbol: String) throws(FilterPredicateError) -> Bool {
        if try self.acceptWord(word) { return true }
        return try self.acceptSymbol(symbol)
    }

    private mutating func acceptSymbol(_ symbol: String) throws(FilterPredicateError) -> Bool {
        guard try self.current().kind == .symbol(symbol) else { return false }
        self.index += 1
        return true
    }

    private mutating func unexpected(_ message: String) throws(FilterPredicateError) -> FilterPredicateError {
        let token = try self.current()
        return FilterPredicateError(
            code: token.kind == .end ? .unexpectedEnd : .unexpectedToken, position: token.position, message: message)
    }
}
