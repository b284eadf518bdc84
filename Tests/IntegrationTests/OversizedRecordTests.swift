import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateKafka
import Foundation
import Testing

extension EmbeddedBrokerTests {
    /// Records near the broker's 1 MB limit: their copy (with FocusGate's headers) would not fit a
    /// record, so they go to the DLQ bounded, and the partition moves on.
    @Suite("Oversized records")
    struct OversizedRecordTests {
        @Test(
            "a 999,950-byte value and a 200-byte event with 999,600 bytes of headers go to the DLQ bounded; the next record of the partition is decided at once",
            arguments: [GatewayConfiguration.DeliveryMode.atLeastOnce, .exactlyOnce])
        func boundedDeadLetters(mode: GatewayConfiguration.DeliveryMode) async throws {
            let bench = try await GatewayBench()
            let instance = try await InProcessGateway(bench, configuration: bench.configuration(mode: mode))
            // Every partition assigned and restored: the first group join (about 3 s on the
            // embedded broker) is not part of what is measured.
            try await instance.waitUntil(
                {
                    instance.gateway.assignedPartitions == bench.partitions
                        && instance.gateway.readinessChecks["restore"] == true
                }, timeout: .seconds(60), what: "every partition assigned")
            let user = Array("u-big".utf8)
            let event = Array(Events.notification("n-headers", user: "u-big", criteria: "work").value.utf8)
            let headers = (0..<4).map { KafkaHeader(name: "h\($0)", value: [UInt8](repeating: 0x68, count: 249_900)) }
            let outcomes = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications,
                headed: [
                    (user, [UInt8](repeating: 0x78, count: 999_950), []),
                    (user, event, headers),
                ])
            #expect(outcomes.count == 2 && outcomes.allSatisfy { $0.error == nil }, "the broker took both")
            // From when the broker has it (the producer's flush returned: it was acknowledged).
            try bench.send([Events.notification("n-after", user: "u-big", criteria: "work")])
            let sentAt = Int64(Date().timeIntervalSince1970 * 1000)
            try await Wait.until("the next record decided", timeout: .seconds(30)) {
                let outputs =
                    try bench.readAll(bench.topics.delivered, readUncommitted: true)
                    + bench.readAll(bench.topics.silenced, readUncommitted: true)
                return outputs.contains(where: { $0.valueString?.contains(#""n-after""#) == true })
            }
            // When it was decided, as the state remembers it: within 2 s. (About 1.1 s here, nearly
            // all of it the embedded broker's fetch wait, fetch.wait.max.ms: with 100 ms it is 0.3 s.)
            guard
                case .held(.found(let item)) = await instance.gateway.directory.notification(
                    userID: "u-big", id: "n-after")
            else {
                Issue.record("the state does not remember n-after")
                try await instance.stop()
                await bench.shutdown()
                return
            }
            print(
                "oversized records (\(mode)): the next record decided \(item.decidedAtMilliseconds - sentAt) ms after the broker had it"
            )
            #expect(
                item.decidedAtMilliseconds - sentAt < 2_000,
                "decided \(item.decidedAtMilliseconds - sentAt) ms after the broker had it")
            let dead = try bench.readAll(bench.topics.deadLetters, readUncommitted: true)
            #expect(dead.count == 2, "\(dead.map { $0.header("focusgate-error-detail") ?? "" })")
            for record in dead {
                #expect(record.header("focusgate-error") == "too-large")
                #expect((record.value?.count ?? 0) <= 1024, "the first bytes only")
                #expect(record.keyString == "u-big")
                #expect(
                    record.headers.map(\.name) == ["focusgate-error", "focusgate-error-detail", "focusgate-source"])
                #expect(record.header("focusgate-source")?.hasPrefix(bench.topics.notifications + "/") == true)
            }
            #expect(
                dead.compactMap { $0.header("focusgate-error-detail") }.contains { $0.contains("with key and headers") }
            )
            #expect(instance.metric("focusgate_dlq_total", labels: #"error="too-large""#) == 2)
            #expect(
                instance.metric("focusgate_transactions_total", labels: #"result="aborted""#) == 0, "nothing aborted")
            try await instance.stop()
            await bench.shutdown()
        }

        @Test(
            "an output refused for its size dead-letters its input as undeliverable on the replay (no retry of the same copy); every other record is decided once",
            arguments: [GatewayConfiguration.DeliveryMode.atLeastOnce, .exactlyOnce])
        func sizeRefusal(mode: GatewayConfiguration.DeliveryMode) async throws {
            let bench = try await GatewayBench()
            var records = (0..<200).map { Events.notification("n-\($0)", user: "u-\($0 % 20)", criteria: "work") }
            // Within limits.maxEventBytes, but its copy is more than the producer takes: a producer
            // whose message.max.bytes is below what the limits assume (serve refuses to start so;
            // the worker must survive it all the same, as it must a topic's smaller limit).
            records[100] = Events.notification("n-100", user: "u-0", criteria: String(repeating: "w", count: 30_000))
            try bench.send(records)
            var configuration = bench.configuration(mode: mode)
            configuration.kafkaProperties["message.max.bytes"] = "20000"
            let instance = try await InProcessGateway(bench, configuration: configuration)
            let audit = try await bench.settled(records: records.count) { instance.diagnosis }
            // One input dead-lettered (the embedded broker also shows a copy an aborted replay wrote).
            let dead = audit.deadLetters
            let sources = Set(dead.compactMap { $0.header("focusgate-source") })
            try #require(sources.count == 1, "\(dead.map { $0.header("focusgate-error-detail") ?? "" })")
            for record in dead {
                #expect(record.header("focusgate-error") == "undeliverable")
                #expect(record.header("focusgate-error-detail")?.contains("MSG_SIZE_TOO_LARGE") == true)
                #expect(
                    record.headers.map(\.name) == ["focusgate-error", "focusgate-error-detail", "focusgate-source"])
            }
            #expect(dead[0].valueString?.hasPrefix(#"{"id":"n-100","#) == true, "the refused input's first bytes")
            let decided = Set((audit.delivered + audit.silenced).compactMap { Audit.id(of: $0) })
            #expect(decided == Set((0..<records.count).map { "n-\($0)" }).subtracting(["n-100"]))
            #expect((dead[0].value?.count ?? 0) <= 1024, "the first bytes only")
            #expect(instance.metric("focusgate_dlq_total", labels: #"error="undeliverable""#) == 1)
            // Dead-lettered on the first replay, not after commit.maxAttemptsPerInput (3) refusals.
            #expect(instance.metric("focusgate_transactions_total", labels: #"result="aborted""#) == 1)
            #expect(instance.gateway.readinessChecks["progress"] == true)
            try await instance.stop()
            await bench.shutdown()
        }
    }
}
