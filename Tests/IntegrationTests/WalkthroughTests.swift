import FocusGateHarness
import Foundation
import Testing

extension EmbeddedBrokerTests {
    /// The README's walkthrough, run as a user runs it: its shell blocks against a real `focusgate
    /// serve` and embedded broker, each answer compared with the one the README shows.
    @Suite("README walkthrough")
    struct WalkthroughTests {
        /// A command of the walkthrough and the lines the README shows it printing.
        struct Step {
            var command: String
            var shown: [String]
        }

        /// The walkthrough's commands in order, `make run` and the pauses left out (the test
        /// starts the server itself and waits for each answer instead).
        static func steps() throws -> [Step] {
            let walkthrough = try ProjectDocuments.section("Walkthrough", of: "README.md")
            var steps: [Step] = []
            for (index, block) in walkthrough.components(separatedBy: "```sh\n").enumerated() where index > 0 {
                let body = block.components(separatedBy: "\n```").first ?? ""
                var pending = ""
                for line in body.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
                    if line.hasPrefix("#") {
                        let shown = line.dropFirst().drop { $0 == " " }
                        if !steps.isEmpty && pending.isEmpty { steps[steps.count - 1].shown.append(String(shown)) }
                        continue
                    }
                    pending += line.hasSuffix("\\") ? String(line.dropLast()) : line
                    if line.hasSuffix("\\") { continue }
                    if Self.opensQuote(pending) {
                        pending += "\n"  // a quoted argument goes on over the next line
                        continue
                    }
                    let command = pending.trimmingCharacters(in: .whitespaces)
                    pending = ""
                    if command.isEmpty || command.hasPrefix("sleep ") || command.hasPrefix("make run") { continue }
                    steps.append(Step(command: command, shown: []))
                }
            }
            return steps
        }

        /// Whether a shell command line leaves a quoted string open (`'…'`, `"…"`).
        static func opensQuote(_ text: String) -> Bool {
            var single = false
            var double = false
            var escaped = false
            for character in text {
                if escaped {
                    escaped = false
                } else if single {
                    single = character != "'"
                } else if character == "\\" {
                    escaped = true
                } else if double {
                    double = character != "\""
                } else if character == "'" {
                    single = true
                } else if character == "\"" {
                    double = true
                }
            }
            return single || double
        }

        /// What a line's shape is: the text before any JSON object, the JSON object's keys, and
        /// the header names of a `name=value,…` list; `…` in a shown line means "and more".
        static func matches(shown: String, actual untrimmed: String) -> Bool {
            let elided = shown.contains("…")
            let actual = String(untrimmed.drop { $0 == " " })
            func keys(_ text: String) -> Set<String> {
                let regex = try! NSRegularExpression(pattern: #""([A-Za-z]+)":"#)
                return Set(
                    regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
                        String(text[Range($0.range(at: 1), in: text)!])
                    })
            }
            if shown.hasPrefix("focusgate-") {
                func names(_ text: String) -> Set<String> {
                    Set(text.split(separator: ",").compactMap { $0.split(separator: "=").first.map(String.init) })
                        .filter { $0.hasPrefix("focusgate-") }
                }
                return elided ? names(shown).isSubset(of: names(actual)) : names(shown) == names(actual)
            }
            if let brace = shown.firstIndex(of: "{") {
                guard let actualBrace = actual.firstIndex(of: "{"),
                    shown[..<brace] == actual[..<actualBrace]
                else { return false }
                return elided ? keys(shown).isSubset(of: keys(actual)) : keys(shown) == keys(actual)
            }
            return shown == actual
        }

        @Test("every command of the README's walkthrough answers what the README shows")
        func walkthrough() async throws {
            let steps = try Self.steps()
            #expect(steps.count >= 15, "the walkthrough's commands were found")
            #expect(steps.filter { !$0.shown.isEmpty }.count >= 8, "and the answers it shows")
            let bench = try await GatewayBench(partitions: 8)
            let serve = try await ServeProcess(bench)
            #expect(try await serve.waitUntilReady())
            #expect(try await serve.waitUntilAssigned())
            let focusgate = ServeProcess.siblingExecutable.path
            for step in steps {
                let command = step.command
                    .replacingOccurrences(of: "http://127.0.0.1:8080", with: "http://127.0.0.1:\(serve.adminPort)")
                    .replacingOccurrences(of: "127.0.0.1:9092", with: bench.bootstrapServers)
                    .replacingOccurrences(of: ".build/debug/focusgate", with: focusgate)
                // A command the README shows no answer for changes something: it runs once. One
                // with an answer is asked again until its answer has the README's shape (outputs
                // come with the next commit).
                var printed: [String] = []
                if step.shown.isEmpty {
                    let result = try await ChildProcess.run("/bin/bash", ["-o", "pipefail", "-c", command])
                    #expect(result.status == 0, "\(step.command): \(result.error)")
                    continue
                }
                let answered: Void? = try? await Wait.until("the answer of: \(step.command)", timeout: .seconds(30)) {
                    let result = try await ChildProcess.run("/bin/bash", ["-c", command])
                    printed = result.output.split(separator: "\n").map(String.init)
                    return printed.count == step.shown.count
                        && zip(step.shown, printed).allSatisfy { Self.matches(shown: $0, actual: $1) }
                }
                #expect(
                    answered != nil,
                    "\(step.command)\nREADME shows:\n\(step.shown.joined(separator: "\n"))\nprinted:\n\(printed.joined(separator: "\n"))"
                )
            }
            #expect(await serve.stop(SIGTERM) == 0)
            await bench.shutdown()
        }
    }
}
