import FocusGate
import FocusGateCore
import FocusGateKafka
import Testing

extension EmbeddedBrokerTests {
    /// What a worker takes from the state changelog when partitions arrive.
    @Suite("State restore")
    struct StateRestoreTests {
        /// One user's serialized state after `unread` notifications of app `chat`.
        static func serializedState(user: String, unread: Int) throws -> [UInt8] {
            var state = PartitionState()
            let decoder = EventDecoder(maxEventBytes: 2048)
            for index in 0..<unread {
                let event = try decoder.decode(Array(Events.notification("n-\(index)", user: user).value.utf8))
                _ = state.admit(event, context: nil, nowMilliseconds: 0)
            }
            var bytes: [UInt8] = []
            #expect(state.appendSerializedState(userID: user, to: &bytes))
            return bytes
        }

        @Test(
            "a state record marked past the committed input offset is skipped (its transaction never committed); marked within it or unmarked, it is taken"
        )
        func uncommittedStateSkipped() async throws {
            let bench = try await GatewayBench()
            let header = { (through: Int64) in [KafkaHeader(name: "focusgate-through", value: String(through))] }
            // Changelog partition 0, as an abort on the embedded broker leaves it (no abort markers):
            // committed state, then state of a transaction whose offsets never committed.
            let records: [(user: String, unread: Int, headers: [KafkaHeader])] = [
                ("u-committed", 1, header(12)),
                ("u-committed", 3, header(20)),
                ("u-unmarked", 2, []),
                ("u-only-uncommitted", 4, header(13)),
            ]
            for record in records {
                let value = try Self.serializedState(user: record.user, unread: record.unread)
                let outcomes = try KafkaTestSupport.produce(
                    bench.broker, topic: bench.topics.state, bytes: [(Array(record.user.utf8), value)],
                    partition: 0, headers: record.headers)
                #expect(outcomes.allSatisfy { $0.error == nil })
            }
            // The input partition's committed offset: 12.
            let filler = [(key: String?, value: String?)](repeating: ("u-filler", "not json"), count: 12)
            _ = try KafkaTestSupport.produce(
                bench.broker, topic: bench.topics.notifications, records: filler, partition: 0)
            let committer = try KafkaConsumer(
                configuration: KafkaTestSupport.consumerConfiguration(bench.broker, group: "focusgate"),
                logger: KafkaTestSupport.logger)
            try committer.commit([KafkaTopicPartition(topic: bench.topics.notifications, partition: 0, offset: 12)])
            committer.close()
            #expect(try bench.committedOffsets()[0] == 12)

            let instance = try await InProcessGateway(bench, configuration: bench.configuration())
            try await instance.waitUntil { instance.gateway.assignedPartitions == 4 }
            let unread = { (user: String) in
                await instance.gateway.badges.badges(userID: user).first { $0.appID == "chat" }?.unread
            }
            #expect(await unread("u-committed") == 1, "the later record (through 20 > 12) was skipped")
            #expect(await unread("u-unmarked") == 2, "records without the mark are taken")
            #expect(await unread("u-only-uncommitted") == nil, "no committed state at all")
            try await instance.stop()
            await bench.shutdown()
        }
    }
}
