import FocusGateCore
import Foundation
import Testing

/// One entry of `Fixtures/predicate-examples.json`, the contract's predicate examples.
struct PredicateExample: Sendable, CustomTestStringConvertible {
    enum Expected: Sendable, Equatable { case value(Bool), refused, notEvaluated }

    var predicate: String
    var criteria: String?
    var expected: Expected
    var arguments: [FilterArgument]

    var testDescription: String { "\(self.predicate) with \(self.criteria.map { "'\($0)'" } ?? "no criteria")" }

    static let all: [PredicateExample] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Fixtures/predicate-examples.json")
        let root = try! JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        return (root["examples"] as! [[String: Any]]).map { entry in
            let expected: Expected
            switch entry["expected"] {
            case let value as Bool: expected = .value(value)
            case let text as String where text == "refused": expected = .refused
            default: expected = .notEvaluated
            }
            return PredicateExample(
                predicate: entry["predicate"] as! String,
                criteria: entry["criteria"] as? String,
                expected: expected,
                arguments: (entry["arguments"] as? [Any] ?? []).map(argument)
            )
        }
    }()

    private static func argument(_ value: Any) -> FilterArgument {
        switch value {
        case let string as String: .string(string)
        case let array as [Any]: .array(array.map(argument))
        case let number as NSNumber: .number(number.doubleValue)
        default: fatalError("unsupported argument in fixture: \(value)")
        }
    }
}

@Suite("Predicate examples (Fixtures/predicate-examples.json)")
struct PredicateExamplesTests {
    @Test("the fixture holds the contract's examples")
    func fixtureIsComplete() {
        #expect(PredicateExample.all.count >= 32)
    }

    @Test(
        "every example evaluates, is refused, or is not evaluated, as the contract says",
        arguments: PredicateExample.all)
    func example(_ example: PredicateExample) throws {
        switch example.expected {
        case .refused:
            #expect(throws: FilterPredicateError.self) {
                try FilterPredicate(example.predicate, arguments: example.arguments)
            }
        case .notEvaluated:
            // No criteria: the decision is `no-criteria` before any predicate runs (see DecisionTests).
            #expect(example.criteria == nil)
            _ = try FilterPredicate(example.predicate, arguments: example.arguments)
        case .value(let expected):
            let predicate = try FilterPredicate(example.predicate, arguments: example.arguments)
            #expect(try predicate.evaluate(try #require(example.criteria)) == expected)
        }
    }
}
