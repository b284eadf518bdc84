import FocusGateCore
import FocusGateKafka
import Testing

@testable import FocusGate

extension EmbeddedBrokerTests {
    /// An at-least-once commit's records, produced a slice per loop turn after the commit.
    @Suite("Commit backlog")
    struct CommitBacklogTests {
        @Test(
            "a backlog produces its records in the order added, a slice at a time, with their partitions, headers, tombstones, timestamps and delivery id"
        )
        func producesInOrder() async throws {
            let bench = try await GatewayBench(partitions: 2)
            let outputs = try GatewayOutputs(
                configuration: bench.configuration(mode: .atLeastOnce), worker: 0, instanceTag: "backlog",
                deliveries: FocusGate.DeliveryLog(), logger: KafkaTestSupport.logger)
            var backlog = CommitBacklog()
            backlog.appendBadges([
                BadgeUpdate(
                    userID: "u-1", appID: "a", badge: 2, unread: 3, focus: "Work", contextVersion: 4, sequence: 5,
                    updatedAtMilliseconds: 1_700_000_000_000)
            ])
            backlog.append(.status, partition: nil, key: Array("u-1".utf8), value: Array("status".utf8))
            let asOf = backlog.addAsOf([1, 2, 3])
            backlog.append(.state, partition: 1, key: [0, 7], value: [9, 9], asOf: asOf, timestamp: 1_000)
            backlog.append(.state, partition: 1, key: [0, 8], value: nil, asOf: asOf, timestamp: 1_000)
            backlog.append(
                .state, partition: 1, key: PartitionState.commitMarkerKey, value: [1, 2, 3], timestamp: 1_000)
            backlog.deliveryID = outputs.ledger.current
            #expect(backlog.count == 5)

            #expect(try backlog.produce(upTo: 2, through: outputs) == 2)
            #expect(backlog.count == 3 && !backlog.isEmpty)
            #expect(try backlog.produce(upTo: 10, through: outputs) == 3)
            #expect(backlog.isEmpty)
            try outputs.producer.flush(timeout: .seconds(10))
            #expect(
                outputs.producer.acknowledgements.counts(of: outputs.ledger.current) == (delivered: 5, failed: 0),
                "every record counted under the backlog's delivery id")

            let badges = try bench.readAll(bench.topics.badges)
            #expect(badges.map(\.key) == [Array("u-1/a".utf8)])
            let badge = try #require(badges.first?.value)
            #expect(String(decoding: badge, as: UTF8.self).contains(#""badge":2"#))
            #expect(try bench.readAll(bench.topics.status).map(\.value) == [Array("status".utf8)])
            let state = try bench.readAll(bench.topics.state)
            #expect(state.map(\.partition) == [1, 1, 1])
            #expect(state.map(\.key) == [[0, 7], [0, 8], PartitionState.commitMarkerKey])
            #expect(state.map(\.value) == [[9, 9], nil, [1, 2, 3]], "a tombstone has no value")
            #expect(state.map(\.timestamp) == [1_000, 1_000, 1_000])
            #expect(
                state.map(\.headers) == [
                    [KafkaHeader(name: PartitionState.asOfHeader, value: [1, 2, 3])],
                    [KafkaHeader(name: PartitionState.asOfHeader, value: [1, 2, 3])], [],
                ])

            // Emptied once produced: the next commit's records start afresh.
            backlog.append(.state, partition: 0, key: [1], value: [1])
            #expect(backlog.count == 1)
            #expect(backlog.removeAll() == 1, "what was not produced is counted out")
            #expect(backlog.isEmpty)
            await bench.shutdown()
        }

        @Test(
            "a backlog's records are spread over its schedule: due in proportion to the time gone, at least the minimum a turn"
        )
        func pacing() {
            var backlog = CommitBacklog()
            for index in 0..<1_000 { backlog.append(.state, partition: 0, key: [UInt8(index % 256)], value: [1]) }
            #expect(backlog.recordsDue(at: .now, minimum: 10) == 1_000, "no schedule: everything at once")
            let start = ContinuousClock.now
            backlog.schedule(from: start, until: start + .milliseconds(100))
            #expect(backlog.recordsDue(at: start, minimum: 10) == 10)
            #expect(backlog.recordsDue(at: start + .milliseconds(25), minimum: 10) == 250)
            #expect(backlog.recordsDue(at: start + .milliseconds(25), minimum: 400) == 400)
            #expect(backlog.recordsDue(at: start + .milliseconds(100), minimum: 10) == 1_000)
            #expect(backlog.recordsDue(at: start + .seconds(1), minimum: 10) == 1_000, "late: the rest")
        }
    }
}
