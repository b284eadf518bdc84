import FocusGateCore
import Testing

@Suite("Predicate language")
struct PredicateLanguageTests {
    @Test(
        "operators and modifiers",
        arguments: [
            ("SELF = 'a'", "a", true),
            ("SELF <> 'a'", "a", false),
            ("SELF < 'b'", "a", true),
            ("SELF <= 'a'", "a", true),
            ("SELF =< 'a'", "b", false),
            ("SELF >= 'b'", "b", true),
            ("SELF => 'c'", "b", false),
            ("SELF BETWEEN {'a', 'c'}", "b", true),
            ("SELF BETWEEN {'a', 'c'}", "d", false),
            ("SELF CONTAINS[c] 'URGENT'", "Team-Urgent-7", true),
            ("SELF BEGINSWITH[cd] 'ECOLE'", "école-42", true),
            ("SELF ENDSWITH[d] 'e'", "café", true),
            ("SELF LIKE[c] 'WORK-*'", "work-42", true),
            ("SELF LIKE '*-?'", "a-é", true),
            ("SELF LIKE '*a*b*'", "xxaxxbxx", true),
            ("SELF LIKE '*a*b'", "xxaxxbxxc", false),
            ("SELF LIKE ''", "", true),
            ("SELF IN {'a', 5, 'b'}", "b", true),
            ("SELF IN 'work,school'", "k,s", true),
            ("'work' IN SELF", "my-work-account", true),
            ("{'a', 'b'} CONTAINS SELF", "a", true),
            ("SELF == \"dq\"", "dq", true),
            ("SELF == 'it\\'s'", "it's", true),
            ("SELF == 'caf\\u00e9'", "café", true),
            ("SELF == 'café'", "cafe\u{301}", true),
            ("SELF ==[c] 'STRASSE'", "straße", true),
            ("SELF ==[cd] 'ÉCOLE'", "ecole", true),
            ("SELF == 5", "5", false),
            ("SELF != 5", "5", true),
            ("5 == 5.0", "x", true),
            ("SELF IN {}", "x", false),
            ("TRUEPREDICATE && FALSEPREDICATE || TRUEPREDICATE", "x", true),
            ("not (SELF == 'a' or SELF == 'b')", "c", true),
            ("SELF IN %@ AND SELF != %@", "acct-1", true),
        ])
    func evaluates(predicate: String, criteria: String, expected: Bool) throws {
        let arguments: [FilterArgument] =
            predicate.contains("%@") ? [.array([.string("acct-1"), .string("acct-2")]), .string("acct-2")] : []
        #expect(try FilterPredicate(predicate, arguments: arguments).evaluate(criteria) == expected)
    }

    @Test("a large IN list is hashed and answers like a small one")
    func largeInList() throws {
        let values = (0..<1000).map { "acct-\($0)" }
        let predicate = try FilterPredicate("SELF IN %@", arguments: [.array(values.map { .string($0) })])
        #expect(try predicate.evaluate("acct-999"))
        #expect(try predicate.evaluate("acct-0"))
        #expect(try !predicate.evaluate("acct-1000"))
        #expect(try !predicate.evaluate(""))
        let folded = try FilterPredicate("SELF IN[c] %@", arguments: [.array(values.map { .string($0.uppercased()) })])
        #expect(try folded.evaluate("Acct-500"))
    }

    @Test("ordering a string against a number is an evaluation error, not a crash")
    func evaluationErrors() throws {
        for text in ["SELF < 5", "SELF BEGINSWITH 5", "SELF BETWEEN {1, 'z'}", "SELF IN 5", "5 CONTAINS SELF"] {
            let predicate = try FilterPredicate(text)
            #expect(throws: FilterEvaluationError(code: "type-mismatch"), "\(text)") { try predicate.evaluate("a") }
        }
        // Short-circuit: the right side is not evaluated when the left decides.
        #expect(try FilterPredicate("SELF == 'a' OR SELF < 5").evaluate("a"))
    }

    @Test(
        "refusals name the reason and the position",
        arguments: [
            ("SELF MATCHES 'x'", FilterPredicateError.Code.unsupportedOperator, 5),
            ("SELF.length > 3", .keyPath, 4),
            ("name == 'x'", .keyPath, 0),
            ("%K == 'x'", .keyPath, 0),
            ("SELF == $ACCOUNT", .variable, 8),
            ("ANY SELF == 'x'", .unsupportedOperator, 0),
            ("SUBQUERY(SELF, $x, $x == 'a').@count > 0", .unsupportedOperator, 0),
            ("lowercase(SELF) == 'x'", .function, 0),
            ("SELF == 'open", .invalidString, 8),
            ("SELF ==[x] 'a'", .modifier, 8),
            ("SELF == ", .unexpectedEnd, 8),
            ("SELF 'a'", .unexpectedToken, 5),
            ("(SELF == 'a'", .unexpectedEnd, 12),
            ("SELF == 'a' 'b'", .unexpectedToken, 12),
            ("SELF == %@", .argument, 8),
            ("SELF BETWEEN {'a'}", .unexpectedToken, 13),
            ("SELF == nil", .unexpectedToken, 8),
            ("SELF == 12abc", .invalidNumber, 8),
            ("SELF == #", .invalidCharacter, 8),
        ])
    func refusals(predicate: String, code: FilterPredicateError.Code, position: Int) {
        let error = #expect(throws: FilterPredicateError.self) { try FilterPredicate(predicate) }
        #expect(error?.code == code)
        #expect(error?.position == position)
        #expect(error?.message.isEmpty == false)
    }

    @Test("AND and OR mixed without parentheses: accepted, AND binds tighter, with a warning")
    func mixedAndOrWarning() throws {
        let mixed = try FilterPredicate("SELF == 'a' OR SELF == 'b' AND SELF == 'c'")
        #expect(mixed.warnings.map(\.code) == ["mixed-and-or"])
        #expect(try mixed.evaluate("a"))  // a OR (b AND c)
        #expect(try !mixed.evaluate("b"))
        #expect(try FilterPredicate("(SELF == 'a' OR SELF == 'b') AND SELF == 'c'").warnings.isEmpty)
        #expect(try FilterPredicate("SELF == 'a' OR (SELF == 'b' AND SELF == 'c')").warnings.isEmpty)
        #expect(try FilterPredicate("SELF == 'a' AND SELF == 'b'").warnings.isEmpty)
    }

    @Test("canonical printing")
    func printing() throws {
        let predicate = try FilterPredicate("self in {'a',\"b\"} and not (SELF ==[cd] 'x' || SELF like 'w*')")
        #expect(predicate.description == "SELF IN {'a', 'b'} AND NOT (SELF ==[cd] 'x' OR SELF LIKE 'w*')")
    }
}

@Suite("Predicate limits: nesting and size are bounded before any recursion can exhaust a stack")
struct PredicateLimitTests {
    @Test("64 levels of parentheses are accepted, 65 are refused as too-complex")
    func nesting() throws {
        let ok = String(repeating: "(", count: 64) + "SELF == 'a'" + String(repeating: ")", count: 64)
        #expect(try FilterPredicate(ok).evaluate("a"))
        let deep = String(repeating: "(", count: 65) + "SELF == 'a'" + String(repeating: ")", count: 65)
        let error = #expect(throws: FilterPredicateError.self) { try FilterPredicate(deep) }
        #expect(error?.code == .tooComplex && error?.position == 64)
    }

    @Test("what the fuzzer found: 4,000 nested array braces (or NOTs) are refused, not a stack overflow")
    func fuzzerFindings() {
        for text in [String(repeating: "{", count: 4000), String(repeating: "NOT ", count: 100_000) + "TRUEPREDICATE"] {
            #expect(throws: FilterPredicateError.self) { try FilterPredicate("SELF IN " + text) }
            #expect(throws: FilterPredicateError.self) { try FilterPredicate(text) }
        }
    }

    @Test("long AND/OR chains: 500 comparisons pass, 100,000 are refused")
    func chains() throws {
        let chain = { (count: Int) in (0..<count).map { "SELF == '\($0)'" }.joined(separator: " OR ") }
        #expect(try FilterPredicate(chain(500)).evaluate("499"))
        let error = #expect(throws: FilterPredicateError.self) { try FilterPredicate(chain(100_000)) }
        #expect(error?.code == .tooComplex)
    }
}
