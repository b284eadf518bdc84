import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateKafka
import Testing

extension EmbeddedBrokerTests {
    /// Exactly-once, the state's changes written into the open transaction before its commit.
    @Suite("Exactly-once stages")
    struct ExactlyOnceStageTests {
        @Test(
            "exactly-once, the changelog records of an interval go into the transaction before its commit, closed by a marker"
        )
        func stagedBeforeTheCommit() async throws {
            let bench = try await GatewayBench(partitions: 1)
            var configuration = bench.configuration(mode: .exactlyOnce)
            // Stages a second and a half apart, the commit after six.
            configuration.commitInterval = .seconds(6)
            let instance = try await InProcessGateway(bench, configuration: configuration)
            try await instance.waitUntil { instance.gateway.assignedPartitions == 1 }
            @Sendable func markers() throws -> Int {
                try bench.readAll(bench.topics.state, readUncommitted: true).count {
                    $0.key == PartitionState.commitMarkerKey
                }
            }
            try bench.send([Events.notification("n-1", user: "u-1")])
            // The commit that covers it, seen as it ends (not by reading its outputs: the embedded
            // broker shows a transaction's records before it commits, and a slow read could let
            // the next interval's stages pass before the second record arrives).
            try await instance.waitUntil(
                { instance.metric("focusgate_transactions_total", labels: #"result="committed""#) >= 1 },
                timeout: .seconds(20), what: "the first record's commit")
            let committed = instance.metric("focusgate_transactions_total", labels: #"result="committed""#)
            let before = try markers()
            // The next interval began when that commit ended: its stages come 1.5, 3 and 4.5 s in,
            // its commit at six (a worker commits only an interval it took records in).
            try bench.send([Events.notification("n-2", user: "u-2")])
            try await instance.waitUntil(
                { ((try? markers()) ?? 0) > before }, timeout: .seconds(5),
                what: "the second record's changes and a marker written in its interval's first seconds")
            #expect(
                instance.metric("focusgate_transactions_total", labels: #"result="committed""#) == committed,
                "written before the transaction's commit")
            #expect(try bench.readAll(bench.topics.badges).count == 1, "its badge update waits for the commit")
            let audit = try await bench.settled(records: 2, timeout: .seconds(20))
            #expect(audit.distinctIDs == 2)
            #expect(instance.metric("focusgate_transactions_total", labels: #"result="aborted""#) == 0)
            #expect(try bench.readAll(bench.topics.badges).count == 2, "taken with the commit")
            try await instance.stop()
            await bench.shutdown()
        }
    }
}
