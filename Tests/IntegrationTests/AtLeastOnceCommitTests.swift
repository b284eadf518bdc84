import FocusGate
import FocusGateCore
import FocusGateEmbeddedBroker
import FocusGateHarness
import FocusGateKafka
import Testing

extension EmbeddedBrokerTests {
    /// At-least-once commits that wait for their records' acknowledgements beside the loop.
    @Suite("At-least-once commits")
    struct AtLeastOnceCommitTests {
        @Test("at-least-once, the loop takes records while a commit's records wait for their acknowledgement")
        func loopGoesOnWhileCommitWaits() async throws {
            let bench = try await GatewayBench(partitions: 1, brokers: 2)
            // The input on broker 1; everything the gateway writes on broker 2, whose answers to
            // Produce requests are slowed below (fetches are not).
            for topic in bench.topics.specifications(partitions: 1).map(\.name) {
                try bench.broker.setPartitionLeader(
                    topic: topic, partition: 0, broker: topic == bench.topics.notifications ? 1 : 2)
            }
            let instance = try await InProcessGateway(bench, configuration: bench.configuration(mode: .atLeastOnce))
            try await instance.waitUntil { instance.gateway.assignedPartitions == 1 }
            // The gateway's next Produce request is written at once and answered 5 s later.
            try bench.broker.pushRequestErrors(broker: 2, .produce, [(error: .noError, delay: .seconds(5))])
            let first = Events.notification("n-1", user: "u-1")
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications, records: [(first.key, first.value)])
            // Its commit has begun: the commit marker closing its state changes is in the changelog.
            try await instance.waitUntil(
                {
                    ((try? bench.readAll(bench.topics.state)) ?? []).contains {
                        $0.key == PartitionState.commitMarkerKey
                    }
                },
                what: "the first record's commit marker written")
            let second = Events.notification("n-2", user: "u-2")
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications, records: [(second.key, second.value)])
            // A commit that flushed would hold the loop until the answer, 5 s after the request.
            try await instance.waitUntil(
                { instance.metric("focusgate_events_consumed_total") >= 2 }, timeout: .seconds(3),
                what: "the second record taken while the first one's commit waits")
            #expect(
                try bench.committedOffsets().values.reduce(0, +) == 0,
                "the first record's offset waits for its records' acknowledgement")
            try await instance.waitUntil(
                { ((try? bench.committedOffsets()) ?? [:]).values.reduce(0, +) == 2 }, timeout: .seconds(20),
                what: "both offsets committed once the answers came")
            #expect(instance.metric("focusgate_transactions_total", labels: #"result="aborted""#) == 0)
            try await instance.stop()
            await bench.shutdown()
        }
    }
}
