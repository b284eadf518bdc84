import ArgumentParser
import FocusGateCore
import Foundation

/// `focusgate predicate`: compile a filter predicate and evaluate it against criteria.
struct PredicateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "predicate",
        abstract: "Check a Focus filter predicate and evaluate it against criteria.",
        discussion: """
            Prints true or false for each criteria, one per line, and exits 0. A predicate that Focus
            filters do not accept is refused: the error (code, position, reason) goes to standard error
            and the exit status is 2. Without --criteria, criteria lines are read from standard input
            when it is not a terminal.
            """
    )

    @Argument(help: "The predicate, e.g. \"SELF IN {'work'}\".")
    var expression: String

    @Option(name: .customLong("criteria"), help: "A filterCriteria value to evaluate; repeatable.")
    var criteria: [String] = []

    @Option(help: "Values for %@ placeholders, as a JSON array (strings, numbers, arrays).")
    var arguments: String?

    func run() throws {
        let predicate: FilterPredicate
        do {
            predicate = try FilterPredicate(self.expression, arguments: try self.parsedArguments())
        } catch let error as FilterPredicateError {
            printError("refused: \(error)")
            printError("  \(self.expression)")
            printError("  \(String(repeating: " ", count: self.characterOffset(ofUTF8: error.position)))^")
            throw ExitCode(2)
        }
        for warning in predicate.warnings {
            printError("warning: \(warning)")
        }
        var lines = self.criteria
        if lines.isEmpty && isatty(STDIN_FILENO) == 0 {
            while let line = readLine(strippingNewline: true) { lines.append(line) }
        }
        for criteria in lines {
            do {
                print(try predicate.evaluate(criteria) ? "true" : "false")
            } catch {
                print("error: \(error.code)")
            }
        }
    }

    private func parsedArguments() throws -> [FilterArgument] {
        guard let arguments = self.arguments else { return [] }
        guard
            let values = try? JSONSerialization.jsonObject(with: Data(arguments.utf8), options: [.fragmentsAllowed])
                as? [Any]
        else {
            throw ValidationError("--arguments must be a JSON array")
        }
        func convert(_ value: Any) throws -> FilterArgument {
            switch value {
            case let string as String: return .string(string)
            case let array as [Any]: return .array(try array.map(convert))
            case let number as NSNumber: return .number(number.doubleValue)
            default: throw ValidationError("--arguments may hold strings, numbers and arrays")
            }
        }
        return try values.map(convert)
    }

    private func characterOffset(ofUTF8 position: Int) -> Int {
        String(decoding: self.expression.utf8.prefix(position), as: UTF8.self).count
    }
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
