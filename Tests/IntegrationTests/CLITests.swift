import FocusGateHarness
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

    static func run(_ arguments: [String], input: String? = nil, environment: [String: String] = [:]) async throws
        -> Run
    {
        let result = try await ChildProcess.run(
            ServeProcess.siblingExecutable.path, arguments, environment: environment, input: Array((input ?? "").utf8))
        return Run(status: result.status, output: result.output, error: result.error)
    }

    static func file(_ contents: String) throws -> String {
        let path = ScratchDirectory.process.file("cli", extension: "json")
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("predicate prints true then false, exit 0 (the issue's acceptance example)")
    func predicateEvaluates() async throws {
        let run = try await Self.run(["predicate", "SELF IN {'work'}", "--criteria", "work", "--criteria", "home"])
        #expect(run.status == 0)
        #expect(run.output == "true\nfalse\n")
    }

    /// librdkafka allocates each produced message on the worker thread and frees it on its broker
    /// thread; under glibc's allocator those frees wait on the worker's arena lock
    /// (docs/performance.md, "The allocator"). jemalloc prints its statistics at exit when asked.
    @Test("the focusgate binary allocates with jemalloc, not glibc's malloc")
    func allocatesWithJemalloc() async throws {
        let run = try await Self.run(
            ["predicate", "SELF IN {'work'}", "--criteria", "work"], environment: ["MALLOC_CONF": "stats_print:true"])
        #expect(run.status == 0)
        #expect(run.output.hasPrefix("true\n"))
        #expect(run.error.contains("Begin jemalloc statistics"))
    }

    @Test("predicate reads criteria lines from standard input, fills %@, reports warnings and evaluation errors")
    func predicateFromInput() async throws {
        let run = try await Self.run(
            ["predicate", "SELF IN %@ OR SELF < 5 AND TRUEPREDICATE", "--arguments", #"[["acct-1"]]"#],
            input: "acct-1\nother\n")
        #expect(run.status == 0)
        #expect(run.output == "true\nerror: type-mismatch\n")
        #expect(run.error.contains("mixed-and-or"))
    }

    @Test("a refused predicate exits 2 with code, position and reason")
    func predicateRefused() async throws {
        let run = try await Self.run(["predicate", "SELF.length > 3", "--criteria", "work"])
        #expect(run.status == 2)
        #expect(run.output.isEmpty)
        #expect(run.error.contains("key-path at 4"))
    }

    @Test("explain prints the decision as JSON")
    func explain() async throws {
        let context = try Self.file(
            #"{"userId":"u-42","version":17,"focus":"Work","expiresAt":"2030-01-01T00:00:00Z","apps":{"com.example.chat":{"filterPredicate":"SELF IN {'work'}"}}}"#
        )
        let silenced = try Self.file(#"{"id":"n1","userId":"u-42","appId":"com.example.chat","filterCriteria":"home"}"#)
        let critical = try Self.file(
            #"{"id":"n2","userId":"u-42","appId":"com.example.chat","aps":{"filter-criteria":"home","interruption-level":"critical"}}"#
        )

        let first = try await Self.run([
            "explain", "--context", context, "--event", silenced, "--at", "2029-06-01T00:00:00Z",
        ])
        #expect(first.status == 0)
        #expect(
            first.output
                == #"{"badgeCounted":false,"badgeUpdates":"coalesced-per-commit","contextVersion":17,"decision":"silenced","focus":"Work","focusState":{"cause":"manual","focus":"Work","nextTransition":"2030-01-01T00:00:00.001Z","since":null},"rateLimit":null,"reason":"predicate-mismatch","senderList":null}"#
                + "\n")

        let second = try await Self.run([
            "explain", "--context", context, "--event", critical, "--at", "2029-06-01T00:00:00Z",
        ])
        #expect(
            second.output.contains(#""decision":"delivered""#)
                && second.output.contains(#""reason":"breakthrough-critical""#))

        let expired = try await Self.run([
            "explain", "--context", context, "--event", silenced, "--at", "2030-01-01T00:00:00.001Z",
        ])
        #expect(expired.output.contains(#""reason":"no-focus""#))

        // People: the rule that decided names the list.
        let people = try Self.file(
            #"{"userId":"u-42","version":18,"focus":"Work","otherApps":"silence","people":{"allowed":["boss"],"silenced":["spam"]}}"#
        )
        let fromBoss = try Self.file(#"{"id":"n3","userId":"u-42","appId":"com.example.chat","senderId":"boss"}"#)
        let fromSpam = try Self.file(
            #"{"id":"n4","userId":"u-42","appId":"com.example.chat","senderId":"spam","interruptionLevel":"time-sensitive"}"#
        )
        let allowed = try await Self.run(["explain", "--context", people, "--event", fromBoss])
        #expect(
            allowed.output.contains(#""decision":"delivered""#)
                && allowed.output.contains(#""reason":"person-allowed""#)
                && allowed.output.contains(#""senderList":"allowed""#)
                && allowed.output.contains(#""badgeCounted":true"#),
            "\(allowed.output)")
        let silencedPerson = try await Self.run(["explain", "--context", people, "--event", fromSpam])
        #expect(
            silencedPerson.output.contains(#""reason":"person-silenced""#)
                && silencedPerson.output.contains(#""senderList":"silenced""#), "\(silencedPerson.output)")
    }

    @Test("explain names the rate limit that decided, from what the flags say the state holds; repeated senders too")
    func explainRateLimitsAndRepeatedSenders() async throws {
        let context = try Self.file(
            #"{"userId":"u-42","version":3,"focus":"Work","otherApps":"silence","people":{"allowRepeated":true},"rateLimits":{"perUser":{"max":10,"windowSeconds":3600},"perApp":{"max":2,"windowSeconds":600},"exempt":["critical"]}}"#
        )
        let event = try Self.file(#"{"id":"n1","userId":"u-42","appId":"com.example.chat","senderId":"mom"}"#)
        let underCap = try await Self.run(["explain", "--context", context, "--event", event])
        #expect(underCap.output.contains(#""reason":"app-silenced""#), "\(underCap.output)")
        let repeated = try await Self.run([
            "explain", "--context", context, "--event", event, "--repeated-sender", "--delivered-from-app", "1",
        ])
        #expect(
            repeated.output.contains(#""reason":"repeated-sender""#) && repeated.output.contains(#""rateLimit":null"#),
            "\(repeated.output)")
        let overApp = try await Self.run([
            "explain", "--context", context, "--event", event, "--repeated-sender", "--delivered-from-app", "2",
        ])
        #expect(overApp.status == 0)
        #expect(
            overApp.output.contains(#""decision":"silenced""#) && overApp.output.contains(#""reason":"rate-limited""#)
                && overApp.output.contains(#""rateLimit":{"delivered":2,"max":2,"scope":"app","windowSeconds":600}"#),
            "\(overApp.output)")
        let negative = try await Self.run(["explain", "--context", context, "--event", event, "--delivered-to-user=-1"])
        #expect(negative.status == 2)
    }

    @Test("explain says which Focus a schedule or a manual override has on at --at, why, and the next transition")
    func explainSchedules() async throws {
        let context = try Self.file(
            #"{"userId":"u-42","version":4,"focus":"Work","focusSetAt":"2026-11-24T20:00:00Z","timeZone":"Europe/Paris","foci":{"Sleep":{"otherApps":"silence"}},"schedules":[{"focus":"Sleep","days":["mon","tue","wed","thu","fri","sat","sun"],"start":"22:00","end":"07:00"}]}"#
        )
        let event = try Self.file(#"{"id":"n1","userId":"u-42","appId":"com.example.chat"}"#)
        // 21:30 in Paris: Work, set by hand at 21:00, holds until Sleep's start at 22:00.
        let manual = try await Self.run([
            "explain", "--context", context, "--event", event, "--at", "2026-11-24T20:30:00Z",
        ])
        #expect(manual.status == 0)
        #expect(
            manual.output.contains(
                #""focusState":{"cause":"manual","focus":"Work","nextTransition":"2026-11-24T21:00:00.000Z","since":"2026-11-24T20:00:00.000Z"}"#
            ) && manual.output.contains(#""reason":"no-criteria""#), "\(manual.output)")
        // 23:00: the schedule's Sleep silences the app, until 07:00 Paris time.
        let sleep = try await Self.run([
            "explain", "--context", context, "--event", event, "--at", "2026-11-24T22:00:00Z",
        ])
        #expect(
            sleep.output.contains(
                #""focusState":{"cause":"schedule","focus":"Sleep","nextTransition":"2026-11-25T06:00:00.000Z","since":"2026-11-24T21:00:00.000Z"}"#
            ) && sleep.output.contains(#""reason":"app-silenced""#), "\(sleep.output)")
    }

    @Test(
        "explain refuses bad input with exit 2",
        arguments: [
            #"{"id":"n1","userId":"u","appId":"a""#,
            #"{"type":"clear","id":"n1","userId":"u","appId":"a"}"#,
        ])
    func explainRefuses(event: String) async throws {
        let run = try await Self.run(["explain", "--event", try Self.file(event)])
        #expect(run.status == 2)
        #expect(!run.error.isEmpty)
    }

    @Test("explain refuses a context whose predicate does not compile")
    func explainRefusesContext() async throws {
        let context = try Self.file(#"{"userId":"u","version":1,"apps":{"a":{"filterPredicate":"SELF MATCHES 'x'"}}}"#)
        let event = try Self.file(#"{"id":"n1","userId":"u","appId":"a"}"#)
        let run = try await Self.run(["explain", "--context", context, "--event", event])
        #expect(run.status == 2)
        #expect(run.error.contains("apps.a.filterPredicate"))
    }

    @Test("config prints the effective configuration with secrets redacted; a bad key exits 2 naming it")
    func configCommand() async throws {
        let file = try Self.file(
            "kafka:\n  groupId: gateway-a\n  properties:\n    sasl.password: hunter2\nadmin:\n  token: s3cret\n")
        let run = try await Self.run(["config", "--config", file])
        #expect(run.status == 0)
        #expect(run.output.contains("kafka.groupId: gateway-a"))
        #expect(
            run.output.contains("kafka.properties.sasl.password: <redacted>")
                && run.output.contains("admin.token: <redacted>"))
        #expect(!run.output.contains("hunter2") && !run.output.contains("s3cret"))

        let bad = try await Self.run(["config", "--config", try Self.file("workers: many\n")])
        #expect(bad.status == 2)
        #expect(bad.error.contains("workers: must be an integer"))
        let missing = try await Self.run(["serve", "--config", "/nonexistent/focusgate.yaml"])
        #expect(missing.status == 2 && missing.error.contains("--config: cannot read"))
    }

    @Test(
        "a strict start: serve exits 2 naming a misspelt FOCUSGATE_ variable (and the closest key) or a kafka.properties entry FocusGate owns, before starting anything"
    )
    func strictStart() async throws {
        // Before this check the misspelling was ignored and serve started the in-memory embedded broker.
        let misspelt = try await Self.run(
            ["serve"], environment: ["FOCUSGATE_KAFKA_BOOTSTRAP_SERVERS": "kafka-1:9092"])
        #expect(misspelt.status == 2)
        #expect(
            misspelt.error.contains("FOCUSGATE_KAFKA_BOOTSTRAP_SERVERS")
                && misspelt.error.contains("FOCUSGATE_KAFKA_BOOTSTRAPSERVERS (kafka.bootstrapServers)"),
            "\(misspelt.error)")
        #expect(!misspelt.output.contains("embedded broker"), "nothing started")

        let owned = try await Self.run(
            ["serve"], environment: ["FOCUSGATE_KAFKA_PROPERTIES_ENABLE_AUTO_COMMIT": "true"])
        #expect(owned.status == 2)
        #expect(owned.error.contains("kafka.properties.enable.auto.commit"), "\(owned.error)")

        let file = try Self.file("kafka:\n  properties:\n    isolation.level: read_uncommitted\n")
        let ownedInFile = try await Self.run(["config", "--config", file])
        #expect(ownedInFile.status == 2)
        #expect(ownedInFile.error.contains("kafka.properties.isolation.level"), "\(ownedInFile.error)")
    }
}
