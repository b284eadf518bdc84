import Foundation
import Testing

/// `focusgate predicate` and `focusgate explain` as a user runs them.
@Suite("focusgate predicate / explain")
struct CLITests {
    struct Run {
        var status: Int32
        var output: String
        var error: String
    }

    static func run(_ arguments: [String], input: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("focusgate")
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
            error: String(decoding: err, as: UTF8.self))
    }

    static func file(_ contents: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "focusgate-cli-\(UUID().uuidString).json"
        ).path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("predicate prints true then false, exit 0 (the issue's acceptance example)")
    func predicateEvaluates() throws {
        let run = try Self.run(["predicate", "SELF IN {'work'}", "--criteria", "work", "--criteria", "home"])
        #expect(run.status == 0)
        #expect(run.output == "true\nfalse\n")
    }

    @Test("predicate reads criteria lines from standard input, fills %@, reports warnings and evaluation errors")
    func predicateFromInput() throws {
        let run = try Self.run(
            ["predicate", "SELF IN %@ OR SELF < 5 AND TRUEPREDICATE", "--arguments", #"[["acct-1"]]"#],
            input: "acct-1\nother\n")
        #expect(run.status == 0)
        #expect(run.output == "true\nerror: type-mismatch\n")
        #expect(run.error.contains("mixed-and-or"))
    }

    @Test("a refused predicate exits 2 with code, position and reason")
    func predicateRefused() throws {
        let run = try Self.run(["predicate", "SELF.length > 3", "--criteria", "work"])
        #expect(run.status == 2)
        #expect(run.output.isEmpty)
        #expect(run.error.contains("key-path at 4"))
    }

    @Test("explain prints the decision as JSON")
    func explain() throws {
        let context = try Self.file(
            #"{"userId":"u-42","version":17,"focus":"Work","expiresAt":"2030-01-01T00:00:00Z","apps":{"com.example.chat":{"filterPredicate":"SELF IN {'work'}"}}}"#
        )
        let silenced = try Self.file(#"{"id":"n1","userId":"u-42","appId":"com.example.chat","filterCriteria":"home"}"#)
        let critical = try Self.file(
            #"{"id":"n2","userId":"u-42","appId":"com.example.chat","aps":{"filter-criteria":"home","interruption-level":"critical"}}"#
        )

        let first = try Self.run(["explain", "--context", context, "--event", silenced, "--at", "2029-06-01T00:00:00Z"])
        #expect(first.status == 0)
        #expect(
            first.output
                == #"{"badgeCounted":false,"badgeUpdates":"coalesced-per-commit","contextVersion":17,"decision":"silenced","focus":"Work","reason":"predicate-mismatch"}"#
                + "\n")

        let second = try Self.run([
            "explain", "--context", context, "--event", critical, "--at", "2029-06-01T00:00:00Z",
        ])
        #expect(
            second.output.contains(#""decision":"delivered""#)
                && second.output.contains(#""reason":"breakthrough-critical""#))

        let expired = try Self.run([
            "explain", "--context", context, "--event", silenced, "--at", "2030-01-01T00:00:00.001Z",
        ])
        #expect(expired.output.contains(#""reason":"no-focus""#))
    }

    @Test(
        "explain refuses bad input with exit 2",
        arguments: [
            #"{"id":"n1","userId":"u","appId":"a""#,
            #"{"type":"clear","id":"n1","userId":"u","appId":"a"}"#,
        ])
    func explainRefuses(event: String) throws {
        let run = try Self.run(["explain", "--event", try Self.file(event)])
        #expect(run.status == 2)
        #expect(!run.error.isEmpty)
    }

    @Test("explain refuses a context whose predicate does not compile")
    func explainRefusesContext() throws {
        let context = try Self.file(#"{"userId":"u","version":1,"apps":{"a":{"filterPredicate":"SELF MATCHES 'x'"}}}"#)
        let event = try Self.file(#"{"id":"n1","userId":"u","appId":"a"}"#)
        let run = try Self.run(["explain", "--context", context, "--event", event])
        #expect(run.status == 2)
        #expect(run.error.contains("apps.a.filterPredicate"))
    }

    @Test("config prints the effective configuration with secrets redacted; a bad key exits 2 naming it")
    func configCommand() throws {
        let file = try Self.file(
            "kafka:\n  groupId: gateway-a\n  properties:\n    sasl.password: hunter2\nadmin:\n  token: s3cret\n")
        let run = try Self.run(["config", "--config", file])
        #expect(run.status == 0)
        #expect(run.output.contains("kafka.groupId: gateway-a"))
        #expect(
            run.output.contains("kafka.properties.sasl.password: <redacted>")
                && run.output.contains("admin.token: <redacted>"))
        #expect(!run.output.contains("hunter2") && !run.output.contains("s3cret"))

        let bad = try Self.run(["config", "--config", try Self.file("workers: many\n")])
        #expect(bad.status == 2)
        #expect(bad.error.contains("workers: must be an integer"))
        let missing = try Self.run(["serve", "--config", "/nonexistent/focusgate.yaml"])
        #expect(missing.status == 2 && missing.error.contains("--config: cannot read"))
    }
}
