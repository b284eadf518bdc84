import FocusGate
import FocusGateHarness
import FocusGateKafka
import Foundation
import FocusGateTestSupport
import Testing

/// Exactly-once where it can be proven: on Tansu, an independent broker that writes transaction
/// markers and stores the offsets sent with a transaction (the embedded broker does neither, and
/// shows aborted records to every reader). Run by `make test-compat`, which builds FocusGate
/// against librdkafka 2.8 (2.0.2 cannot talk to Tansu) and sets `FOCUSGATE_TEST_TANSU`.
@Suite(
    "On Tansu, an independent broker: exactly-once audits", .serialized, .ownThreads,
    .enabled(if: TansuBroker.executable != nil, "make test-compat runs these (FOCUSGATE_TEST_TANSU)"))
struct IndependentBrokerAuditTests {
    typealias Stream = EmbeddedBrokerTests.GatewayRestartTests

    /// `focusgate serve` on the bench's Tansu as instance `name`, exactly-once, with a group
    /// session of `session`; its workers static members of the group unless `staticMembers` is false.
    static func serve(
        _ bench: GatewayBench, _ name: String, session: Duration = .seconds(6), staticMembers: Bool = true
    ) async throws -> ServeProcess {
        try await ServeProcess(
            bench,
            environment: [
                "FOCUSGATE_INSTANCE_NAME": name, "FOCUSGATE_DELIVERY_MODE": "exactly-once",
                "FOCUSGATE_KAFKA_STATICMEMBERSHIP": "\(staticMembers)",
                "FOCUSGATE_KAFKA_PROPERTIES_SESSION_TIMEOUT_MS": "\(session.wholeMilliseconds)",
            ])
    }

    /// The audit of the output topics as the transaction markers in their logs sort them
    /// (``KafkaLogReader``: Tansu 0.6 writes the markers but does not tell `read_committed`
    /// readers which transactions aborted), with the records of aborted and of still-open
    /// transactions counted.
    static func markerAudit(_ bench: GatewayBench) throws -> (audit: Audit, aborted: Int, open: Int) {
        let reader = try KafkaLogReader(bootstrapServers: bench.bootstrapServers)
        var aborted = 0
        var open = 0
        func committed(_ topic: String) throws -> [KafkaMessage] {
            try (0..<Int32(bench.partitions)).flatMap { partition in
                let log = try reader.read(topic: topic, partition: partition)
                aborted += log.aborted.count
                open += log.open.count
                return log.committed.map {
                    KafkaMessage(
                        topic: topic, partition: partition, offset: $0.offset, key: $0.key, value: $0.value,
                        headers: $0.headers.map { KafkaHeader(name: $0.name, value: $0.value) }, timestamp: nil)
                }
            }
        }
        let audit = try Audit(
            delivered: committed(bench.topics.delivered), silenced: committed(bench.topics.silenced),
            deadLetters: committed(bench.topics.deadLetters), badges: committed(bench.topics.badges))
        return (audit, aborted, open)
    }

    /// Prints the first repeated outputs, each copy with where it came from: for a failing audit.
    static func describeRepeats(_ audit: Audit, groupOffsets: [Int32: Int64]) {
        print("the group's offsets: \(groupOffsets.sorted { $0.key < $1.key })")
        for (id, copies) in audit.outputsByID.filter({ $0.value.count > 1 }).prefix(5) {
            let described = copies.map {
                "\($0.topic)/\($0.partition)@\($0.offset) from \($0.header("focusgate-source") ?? "?")"
            }
            print("\(id): \(described.joined(separator: "; "))")
        }
    }

    @Test(
        "SIGKILLed mid-stream and restarted: every input once in the committed log, aborted outputs marked, badges continue; the restarted static member commits before its predecessor's session ends"
    )
    func killedAndRestarted() async throws {
        let bench = try await GatewayBench(on: .tansu)
        let records = Stream.stream(6000)
        // A 30 s session: only static membership, not the group dropping the killed members, can
        // hand the partitions back before it ends.
        let starting = ContinuousClock.now
        let first = try await Self.serve(bench, "audit-a", session: .seconds(30))
        #expect(try await first.waitUntilAssigned(timeout: .seconds(60)))
        let firstJoin = ContinuousClock.now - starting
        let producing = Stream.produceInBackground(bench, records, chunks: 60)
        try await first.waitForConsumed(Double(records.count / 2), timeout: .seconds(120))
        #expect(await first.stop(SIGKILL) == SIGKILL)
        let committedAtKill = try bench.committedOffsets()

        // The same instance name: the same transactional ids (the predecessor's open transaction
        // is aborted at once) and the same static group members (its partitions come straight back).
        let started = ContinuousClock.now
        let second = try await Self.serve(bench, "audit-a", session: .seconds(30))
        let committed = try await second.waitForMetric(
            #"focusgate_transactions_total{result="committed"}"#, atLeast: 1, timeout: .seconds(60))
        let firstCommit = ContinuousClock.now - started
        // Tansu 0.6 answers a JoinGroup after about half the session (17–20 s here, the first
        // start's included): without static membership the restart waited out the killed
        // members' session first (55 s). On a real cluster a static member rejoins in a second.
        #expect(committed && firstCommit < .seconds(30), "the restarted instance committed after \(firstCommit)")
        if firstCommit >= .seconds(30) {
            // Its group joins (librdkafka's cgrp lines with FOCUSGATE_TEST_KAFKA_DEBUG=cgrp) and its own notices.
            let lines = second.standardError.split(separator: "\n").filter { line in
                !line.contains(" debug ")
                    || ["=JOIN", "=SYNC", "=HEARTBEAT", "=REBALANCE", "ASSIGNOR", "=CGRPJOINSTATE"].contains {
                        line.contains($0)
                    }
            }
            print("the restarted instance's log:\n\(lines.prefix(200).joined(separator: "\n"))")
        }
        try await producing.value

        _ = try await bench.settled(records: records.count, timeout: .seconds(120)) { second.standardError }
        let (audit, aborted, open) = try Self.markerAudit(bench)
        let findings = audit.check(against: records, consumedAgain: 0)
        print(
            "Tansu SIGKILL audit: \(findings); partitions \(firstJoin) after the first start, a commit \(firstCommit) after the restart; outputs of aborted transactions: \(aborted), of open ones: \(open)"
        )
        #expect(findings.missing == 0 && findings.unexpected == 0 && findings.repeatedOutputs == 0)
        #expect(open == 0, "every transaction closed by a marker")
        if findings.repeatedOutputs > 0 { Self.describeRepeats(audit, groupOffsets: committedAtKill) }
        #expect(await second.stop(SIGTERM) == 0)
        await bench.shutdown()
    }

    @Test("two instances, one stopped mid-stream: the other takes its partitions and every input comes out once")
    func handover() async throws {
        let bench = try await GatewayBench(on: .tansu)
        let records = Stream.stream(6000)
        // Dynamic members: Tansu 0.6 checks sessions only when a dynamic member calls, so a
        // static member that stopped for good would keep its partitions there forever (a real
        // cluster moves them when its session ends: docs/compatibility.md).
        let leaving = try await Self.serve(bench, "handover-a", staticMembers: false)
        let staying = try await Self.serve(bench, "handover-b", staticMembers: false)
        #expect(try await leaving.waitUntilAssigned(timeout: .seconds(60)))
        #expect(try await staying.waitUntilAssigned(timeout: .seconds(60)))
        let producing = Stream.produceInBackground(bench, records, chunks: 60)
        try await Wait.until("a third of the records consumed", timeout: .seconds(120)) {
            let consumed =
                await leaving.metric("focusgate_events_consumed_total")
                + staying.metric("focusgate_events_consumed_total")
            return consumed >= Double(records.count / 3)
        }
        #expect(await leaving.stop(SIGTERM) == 0, "a graceful stop exits 0")
        try await producing.value

        _ = try await bench.settled(records: records.count, timeout: .seconds(120)) { staying.standardError }
        let (audit, aborted, open) = try Self.markerAudit(bench)
        let findings = audit.check(against: records, consumedAgain: 0)
        print("Tansu handover audit: \(findings); \(aborted) outputs of aborted transactions, \(open) of open ones")
        #expect(open == 0, "every transaction closed by a marker")
        #expect(findings.missing == 0 && findings.unexpected == 0 && findings.repeatedOutputs == 0)
        #expect(await staying.metric("focusgate_assigned_partitions") == Double(bench.partitions))
        #expect(await staying.stop(SIGTERM) == 0)
        await bench.shutdown()
    }
}
