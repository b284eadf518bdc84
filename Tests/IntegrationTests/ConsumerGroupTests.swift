import FocusGateKafka
import FocusGateEmbeddedBroker
import FocusGateHarness
import FocusGateThreads
import Foundation
import Synchronization
import Testing

/// What one group member observed, shared between its consuming thread and the test.
final class GroupMemberState: Sendable {
    let name: String
    private let stopRequested = Atomic(false)
    private let state = Mutex<
        (assignment: Set<KafkaTopicPartition>, events: [KafkaRebalance], values: [String], unannounced: Int)
    >(([], [], [], 0))

    init(name: String) {
        self.name = name
    }

    var assignment: Set<KafkaTopicPartition> { self.state.withLock { $0.assignment } }
    var events: [KafkaRebalance] { self.state.withLock { $0.events } }
    var values: [String] { self.state.withLock { $0.values } }
    /// Records of partitions whose assignment the hook had not seen yet: must stay 0.
    var unannouncedRecords: Int { self.state.withLock { $0.unannounced } }

    private let releaseRequested = Atomic(false)
    /// A member that holds its partitions back (`run(…, holdingBack: true)`) assigns them from now on.
    func release() { self.releaseRequested.store(true, ordering: .relaxed) }

    func stop() { self.stopRequested.store(true, ordering: .relaxed) }
    var shouldStop: Bool { self.stopRequested.load(ordering: .relaxed) }

    func record(_ event: KafkaRebalance) {
        self.state.withLock { state in
            state.events.append(event)
            switch event {
            case .assigned(let partitions): state.assignment.formUnion(partitions)
            case .revoked(let partitions, _): state.assignment.subtract(partitions)
            }
        }
    }

    func received(_ records: KafkaRecordBatch) {
        let values = records.map { String(decoding: $0.value!, as: UTF8.self) }
        let partitions = records.map { KafkaTopicPartition(topic: $0.topic, partition: $0.partition) }
        self.state.withLock { state in
            state.values.append(contentsOf: values)
            state.unannounced += partitions.filter { !state.assignment.contains($0) }.count
        }
    }

    /// Runs a member on its own thread: consume, commit after every batch, and commit the
    /// revoked partitions' progress inside the rebalance hook, before they move. `holdingBack`:
    /// the hook holds every assigned partition back, assigned once ``release()`` is called.
    func run(broker: EmbeddedKafkaBroker, topic: String, group: String, holdingBack: Bool = false) async throws {
        try await DedicatedThread.run(name: "member-\(self.name)") {
            var processed: [KafkaTopicPartition: Int64] = [:]
            var held: Set<KafkaTopicPartition> = []
            var consumerReference: KafkaConsumer?
            let consumer = try KafkaConsumer(
                configuration: KafkaTestSupport.consumerConfiguration(broker, group: group),
                logger: KafkaTestSupport.logger,
                onRebalance: { event in
                    if case .revoked(let partitions, let lost) = event, !lost, let consumer = consumerReference {
                        let offsets = partitions.compactMap { partition in
                            processed[partition].map {
                                KafkaTopicPartition(topic: partition.topic, partition: partition.partition, offset: $0)
                            }
                        }
                        try? consumer.commit(offsets)
                        partitions.forEach { processed[$0] = nil }
                    }
                    if holdingBack, let consumer = consumerReference {
                        switch event {
                        case .assigned(let partitions):
                            precondition(consumer.holdBack(partitions), "the group is cooperative")
                            held.formUnion(partitions)
                        case .revoked(let partitions, _):
                            held.subtract(partitions)
                        }
                    }
                    self.record(event)
                }
            )
            consumerReference = consumer
            defer { consumerReference = nil }
            try consumer.subscribe([topic])
            while !self.shouldStop {
                if !held.isEmpty, self.releaseRequested.load(ordering: .relaxed) {
                    try consumer.assignHeldBack(Array(held))
                    held.removeAll()
                }
                let offsets = consumer.consumeBatch(maxRecords: 100, timeout: .milliseconds(50)) {
                    batch -> [KafkaTopicPartition] in
                    self.received(batch)
                    var next: [KafkaTopicPartition: Int64] = [:]
                    for record in batch {
                        next[KafkaTopicPartition(topic: record.topic, partition: record.partition)] = record.offset + 1
                    }
                    processed.merge(next) { max($0, $1) }
                    return next.map {
                        KafkaTopicPartition(topic: $0.key.topic, partition: $0.key.partition, offset: $0.value)
                    }
                }
                try consumer.commit(offsets)
            }
            consumer.close()  // leaves the group: the revoke hook runs here and commits
        }
    }
}

/// Whether `condition` holds within `timeout` (checked until it does); callers expect it.
func eventually(timeout: Duration, _ condition: () -> Bool) async throws -> Bool {
    do {
        try await Wait.until("the condition", timeout: timeout) { condition() }
        return true
    } catch is WaitTimeout {
        return false
    }
}

extension EmbeddedBrokerTests {
    @Suite("Consumer groups")
    struct ConsumerGroupTests {
        /// A broker with a topic of four partitions, a group name, and the topic's partitions.
        static func fourPartitions() throws -> (
            broker: EmbeddedKafkaBroker, topic: String, group: String, all: Set<KafkaTopicPartition>
        ) {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 4))
            let all = Set((0..<4).map { KafkaTopicPartition(topic: topic, partition: $0) })
            return (broker, topic, KafkaTestSupport.uniqueTopic("group"), all)
        }

        @Test("two members split the partitions, a leaving member's partitions move back, nothing is lost or repeated")
        func splitAndRebalance() async throws {
            let (broker, topic, group, all) = try Self.fourPartitions()
            func produceRound(_ round: Int) throws {
                let records = (0..<40).map { (key: Optional("user-\($0)"), value: Optional("r\(round)-\($0)")) }
                _ = try KafkaTestSupport.produce(broker, topic: topic, records: records)
            }

            try produceRound(1)
            let a = GroupMemberState(name: "a")
            let runA = Task { try await a.run(broker: broker, topic: topic, group: group) }
            #expect(try await eventually(timeout: .seconds(20)) { a.assignment == all && a.values.count == 40 })

            let b = GroupMemberState(name: "b")
            let runB = Task { try await b.run(broker: broker, topic: topic, group: group) }
            let split = try await eventually(timeout: .seconds(30)) {
                !a.assignment.isEmpty && !b.assignment.isEmpty && a.assignment.isDisjoint(with: b.assignment)
                    && a.assignment.union(b.assignment) == all
            }
            try #require(split, "assignments: a=\(a.assignment) b=\(b.assignment)")
            #expect(a.events.contains { if case .revoked(_, lost: false) = $0 { true } else { false } })

            try produceRound(2)
            #expect(try await eventually(timeout: .seconds(20)) { a.values.count + b.values.count == 80 })
            #expect(!b.values.isEmpty, "the second member consumed its share")

            b.stop()
            try await runB.value
            #expect(try await eventually(timeout: .seconds(30)) { a.assignment == all })

            try produceRound(3)
            #expect(try await eventually(timeout: .seconds(20)) { a.values.count + b.values.count == 120 })
            a.stop()
            try await runA.value

            let received = a.values + b.values
            let expected = (1...3).flatMap { round in (0..<40).map { "r\(round)-\($0)" } }
            #expect(received.count == expected.count, "no record consumed twice")
            #expect(
                a.unannouncedRecords == 0 && b.unannouncedRecords == 0,
                "the assign hook ran before any record of its partitions")
            #expect(Set(received) == Set(expected), "no record lost")
        }

        @Test("partitions held back are not fetched, can move to another member, and are consumed once assigned")
        func holdBackAcrossRebalance() async throws {
            let (broker, topic, group, all) = try Self.fourPartitions()
            let records = (0..<40).map { (key: Optional("user-\($0)"), value: Optional("r-\($0)")) }
            _ = try KafkaTestSupport.produce(broker, topic: topic, records: records)

            let a = GroupMemberState(name: "a")
            let runA = Task { try await a.run(broker: broker, topic: topic, group: group, holdingBack: true) }
            #expect(try await eventually(timeout: .seconds(20)) { a.assignment == all })
            // b's join moves held-back partitions of a's: librdkafka refuses to unassign a
            // partition it never assigned, which would leave the rebalance unfinished.
            let b = GroupMemberState(name: "b")
            let runB = Task { try await b.run(broker: broker, topic: topic, group: group, holdingBack: true) }
            let split = try await eventually(timeout: .seconds(30)) {
                a.assignment.count == 2 && b.assignment.count == 2 && a.assignment.union(b.assignment) == all
            }
            try #require(split, "assignments: a=\(a.assignment) b=\(b.assignment)")
            #expect(a.values.isEmpty && b.values.isEmpty, "nothing is fetched while held back")
            a.release()
            b.release()
            #expect(try await eventually(timeout: .seconds(20)) { a.values.count + b.values.count == 40 })
            a.stop()
            b.stop()
            try await runA.value
            try await runB.value
            #expect(!a.values.isEmpty && !b.values.isEmpty, "each member consumed its share")
            #expect(Set(a.values + b.values) == Set(records.map { $0.value! }))
            #expect(a.values.count + b.values.count == 40, "no record consumed twice")
        }

        @Test("the rebalance hook can start assigned partitions at offsets of its own, not the group's")
        func hookChoosesStartOffsets() async throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            try broker.createTopic(.init(name: topic, partitions: 1))
            _ = try KafkaTestSupport.produce(
                broker, topic: topic, records: (0..<20).map { (key: "k", value: "v\($0)") }, partition: 0)
            let offsets = try await DedicatedThread.run(name: "consumer") { () -> [Int64] in
                final class Box { var consumer: KafkaConsumer? }
                let box = Box()
                let consumer = try KafkaConsumer(
                    configuration: KafkaTestSupport.consumerConfiguration(
                        broker, group: KafkaTestSupport.uniqueTopic("group")),
                    logger: KafkaTestSupport.logger,
                    onRebalance: { rebalance in
                        // The group has no committed offset: without the hook's choice the
                        // consumer would start at the beginning.
                        guard case .assigned(let partitions) = rebalance else { return }
                        let starts = partitions.map {
                            KafkaTopicPartition(topic: $0.topic, partition: $0.partition, offset: 12)
                        }
                        box.consumer?.startAssigned(at: starts)
                    })
                box.consumer = consumer
                try consumer.subscribe([topic])
                let offsets = KafkaTestSupport.consume(consumer, count: 8, timeout: .seconds(30)).map(\.offset)
                consumer.close()
                box.consumer = nil
                return offsets
            }
            #expect(offsets == Array(12..<20))
        }

        @Test("committed offsets are resumed after a restart: nothing lost, nothing repeated")
        func resumeFromCommitted() async throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            let group = KafkaTestSupport.uniqueTopic("group")
            try broker.createTopic(.init(name: topic, partitions: 2))
            _ = try KafkaTestSupport.produce(
                broker, topic: topic, records: (0..<100).map { (key: "k\($0 % 7)", value: "v\($0)") })

            var firstRun = try await DedicatedThread.run(name: "first-run") { () -> [String] in
                let consumer = try KafkaConsumer(
                    configuration: KafkaTestSupport.consumerConfiguration(broker, group: group),
                    logger: KafkaTestSupport.logger)
                try consumer.subscribe([topic])
                var values: [String] = []
                let clock = ContinuousClock()
                let deadline = clock.now + .seconds(20)
                // Process (and commit) only the first 30 records seen, then stop as if restarted.
                while values.count < 30 && clock.now < deadline {
                    consumer.consumeBatch(maxRecords: 30 - values.count, timeout: .milliseconds(100)) { batch in
                        var offsets: [KafkaTopicPartition: Int64] = [:]
                        for record in batch {
                            values.append(String(decoding: record.value!, as: UTF8.self))
                            offsets[KafkaTopicPartition(topic: record.topic, partition: record.partition)] =
                                record.offset + 1
                        }
                        try? consumer.commit(
                            offsets.map {
                                KafkaTopicPartition(topic: $0.key.topic, partition: $0.key.partition, offset: $0.value)
                            })
                    }
                }
                let committed = try consumer.committed(
                    [KafkaTopicPartition(topic: topic, partition: 0), KafkaTopicPartition(topic: topic, partition: 1)],
                    timeout: .seconds(5))
                consumer.close()
                return values + ["committed:\(committed.compactMap(\.offset).reduce(0, +))"]
            }
            #expect(firstRun.last == "committed:30")
            firstRun.removeLast()
            #expect(firstRun.count == 30)

            let secondRun = try await DedicatedThread.run(name: "second-run") { () -> [String] in
                let consumer = try KafkaConsumer(
                    configuration: KafkaTestSupport.consumerConfiguration(broker, group: group),
                    logger: KafkaTestSupport.logger)
                try consumer.subscribe([topic])
                // Generous: if the mock has not processed the first member's LeaveGroup, this member
                // gets one partition, and the other only after that member's session (6 s) expires
                // and the group rebalances, which took over 20 s once on a loaded CI machine.
                let values = KafkaTestSupport.consume(consumer, count: 70, timeout: .seconds(60)).compactMap(
                    \.valueString)
                // Nothing more arrives: the restart did not rewind.
                let extra = KafkaTestSupport.consume(consumer, count: 1, timeout: .milliseconds(500))
                consumer.close()
                return values + extra.compactMap(\.valueString)
            }
            #expect(secondRun.count == 70)
            #expect(Set(firstRun).isDisjoint(with: secondRun))
            #expect(Set(firstRun + secondRun) == Set((0..<100).map { "v\($0)" }))
        }
    }
}
