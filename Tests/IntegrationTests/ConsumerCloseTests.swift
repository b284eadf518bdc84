import FocusGate
import FocusGateHarness
import FocusGateKafka
import FocusGateEmbeddedBroker
import FocusGateThreads
import Foundation
import Logging
import Synchronization
import Testing

/// Log lines of one consumer, with a semaphore that opens at the first line containing `pattern`:
/// a wait on the consuming thread itself, which cannot `await`.
final class LogWatch: Sendable {
    private let pattern: String
    private let lines = Mutex<(all: [String], matched: Bool)>(([], false))
    private let matched = DispatchSemaphore(value: 0)

    init(pattern: String) {
        self.pattern = pattern
    }

    var logger: Logger {
        var logger = Logger(label: "focusgate.close-tests") { label in
            JSONLogHandler(label: label) { line in self.append(line) }
        }
        logger.logLevel = .debug
        return logger
    }

    private func append(_ line: String) {
        let first = self.lines.withLock { state in
            state.all.append(line)
            guard !state.matched, line.contains(self.pattern) else { return false }
            state.matched = true
            return true
        }
        if first { self.matched.signal() }
    }

    /// Whether a line containing the pattern arrived within `timeout`.
    func waitForMatch(timeout: TimeInterval) -> Bool {
        self.matched.wait(timeout: .now() + timeout) == .success
    }

    func contains(_ text: String) -> Bool {
        self.lines.withLock { $0.all.contains { $0.contains(text) } }
    }

    /// The lines containing `text`.
    func lines(containing text: String) -> [String] {
        self.lines.withLock { $0.all.filter { $0.contains(text) } }
    }
}

/// How often the rebalance hook ran.
private final class HookCalls: Sendable {
    let count = Atomic(0)
}

extension EmbeddedBrokerTests {
    /// librdkafka 2.0.2 aborts the process (`rdkafka_sticky_assignor.c:1896: Assertion
    /// 'assignor_state' failed`) when a cooperative-sticky consumer is destroyed after the group
    /// answered its JoinGroup and before an assignment followed. These tests close and release a
    /// consumer in exactly that moment, held open by delaying the coordinator's SyncGroup answer:
    /// without ``KafkaConsumer/close()``'s wait and the deinit's guard, the test process dies here.
    @Suite("Closing a group member before its first assignment")
    struct ConsumerCloseTests {
        /// Subscribes a member whose SyncGroup answer comes `syncDelay` late, closes and releases it
        /// once the JoinGroup answer is in; returns the hook's calls and the consumer's log.
        private func closeBetweenJoinAndSync(
            syncDelay: Duration, firstAssignmentWait: Duration
        ) async throws -> (hookCalls: Int, log: LogWatch) {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            let topic = KafkaTestSupport.uniqueTopic()
            let group = KafkaTestSupport.uniqueTopic("group")
            try broker.createTopic(.init(name: topic, partitions: 2))
            _ = try KafkaTestSupport.produce(broker, topic: topic, records: [("k", "v1"), ("k", "v2")])
            try broker.setCoordinator(.group, key: group, broker: 1)
            try broker.pushRequestErrors(broker: 1, .syncGroup, [(error: .noError, delay: syncDelay)])

            let log = LogWatch(pattern: "JoinGroup response: GenerationId")
            var configuration = KafkaTestSupport.consumerConfiguration(broker, group: group)
            configuration.properties["debug"] = "cgrp"
            configuration.firstAssignmentWait = firstAssignmentWait
            let member = configuration
            let hookCalls = HookCalls()
            let (joined, syncedFirst) = try await DedicatedThread.run(name: "closing-member") {
                () throws -> (Bool, Bool) in
                let consumer = try KafkaConsumer(
                    configuration: member, logger: log.logger,
                    onRebalance: { _ in hookCalls.count.add(1, ordering: .relaxed) })
                try consumer.subscribe([topic])
                let joined = log.waitForMatch(timeout: 30)
                let syncedFirst = log.contains("SyncGroup response")
                consumer.close()
                return (joined, syncedFirst)
                // The consumer is released here: rd_kafka_destroy runs, or is withheld.
            }
            try #require(joined, "the group answered the member's JoinGroup")
            try #require(!syncedFirst, "closed before the SyncGroup answer arrived")
            return (hookCalls.count.load(ordering: .relaxed), log)
        }

        @Test("closed between JoinGroup and SyncGroup: waits for the assignment, hands nothing over, is destroyed")
        func waitsForTheAssignment() async throws {
            let (hookCalls, log) = try await self.closeBetweenJoinAndSync(
                syncDelay: .seconds(3), firstAssignmentWait: .seconds(20))
            #expect(hookCalls == 0, "a closing member's assignment and revocation never reach the application")
            #expect(!log.contains("left allocated"), "the assignment came within the wait: the client was destroyed")
        }

        @Test("a member whose assignment does not come within the wait is closed and left allocated, not destroyed")
        func leavesTheClientAllocated() async throws {
            let (hookCalls, log) = try await self.closeBetweenJoinAndSync(
                syncDelay: .seconds(5), firstAssignmentWait: .milliseconds(500))
            #expect(hookCalls == 0)
            #expect(log.contains("consumer closed before its first assignment; its client is left allocated"))
        }
    }
}
