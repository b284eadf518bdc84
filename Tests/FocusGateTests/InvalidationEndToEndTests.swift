@testable import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateKafka
import FocusGateStore
import Foundation
import HTTPTypes
import Hummingbird
import Prometheus
import Synchronization
import Testing

@Suite("Invalidations end to end over the embedded broker", .serialized)
struct InvalidationEndToEndTests {
    @Test(
        "partitions added to the invalidations topic are read without a restart, from their beginning: what was sent to them before they were seen is applied"
    )
    func addedPartitions() async throws {
        let fixture = try await AdminFixture()
        let topic = "grown.invalidations"
        try fixture.broker.createTopic(.init(name: topic, partitions: 4))
        let cache = ContextCache(
            store: fixture.store, metrics: ContextCacheMetrics(registry: PrometheusCollectorRegistry()),
            logger: testLogger)
        // The cluster says 2 partitions until the topic "grows" to its 4.
        let grown = Atomic(false)
        let changes = Mutex<[String]>([])
        let listener = InvalidationListener(
            configuration: KafkaConsumerConfiguration(bootstrapServers: fixture.broker.bootstrapServers, groupID: nil),
            topic: topic, cache: cache, logger: testLogger, partitionCheckInterval: .milliseconds(200),
            partitionCount: { _, _ in grown.load(ordering: .relaxed) ? 4 : 2 }
        ) { userID, _ in
            changes.withLock { $0.append(userID) }
        }
        let listening = Task { try await listener.run() }
        defer { listening.cancel() }
        try await Wait.until("the listener positioned") { listener.isPositioned }
        let cached = try await cache.resolveOffPool(["u-grown"])["u-grown"]
        try #require(cached?.hasNoContext == true, "u-grown cached as having no context: an invalidation applies to it")

        // Sent to partition 3, which the listener does not read yet.
        let producer = try KafkaProducer(
            configuration: .init(bootstrapServers: fixture.broker.bootstrapServers), logger: testLogger,
            onDeliveryReport: { _ in })
        let context = FocusContext.fixture("u-grown", version: 3)
        try producer.produce(
            topic: topic, partition: 3, key: Array("u-grown".utf8),
            value: Array(ContextInvalidation.inlineValue(for: context)))
        try producer.flush(timeout: .seconds(10))
        grown.store(true, ordering: .relaxed)
        do {
            try await Wait.until("the invalidation on the added partition applied", timeout: .seconds(30)) {
                changes.withLock { $0 == ["u-grown"] }
            }
        } catch {
            // Which way it went wrong, should it recur: nothing read, or read more than once.
            Issue.record(
                "changes reported: \(changes.withLock { $0 }); the listener consuming: \(listener.isConsuming)")
            throw error
        }
        listening.cancel()
        _ = try? await listening.value
        await fixture.shutdown()
    }

    @Test("PUT a context: every listening instance applies it and the next notification is decided with it")
    func putThenDecide() async throws {
        let fixture = try await AdminFixture()
        var consumerConfiguration = KafkaConsumerConfiguration(
            bootstrapServers: fixture.broker.bootstrapServers, groupID: nil)
        consumerConfiguration.properties["topic.metadata.refresh.interval.ms"] = "1000"
        let registry = PrometheusCollectorRegistry()
        let cache = ContextCache(
            store: fixture.store, metrics: ContextCacheMetrics(registry: registry), logger: testLogger)
        let changes = Mutex<[(String, Int64?)]>([])
        let listener = InvalidationListener(
            configuration: consumerConfiguration, topic: fixture.topic, cache: cache, logger: testLogger
        ) { userID, context in
            changes.withLock { $0.append((userID, context?.version)) }
        }
        let listening = Task { try await listener.run() }
        defer { listening.cancel() }
        try await Wait.until("the listener positioned") { listener.isPositioned }
        #expect(listener.isConsuming)

        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func decide() async throws -> Decision {
            FocusDecider.decide(
                NotificationEvent(id: "n", userID: "u-42", appID: "com.example.chat", filterCriteria: "home"),
                lookup: try await cache.resolveOffPool(["u-42"])["u-42"]!, nowMilliseconds: now
            ).decision
        }
        // The user is cached as "no context": notifications are delivered.
        #expect(try await decide().reason == .noFocus)

        try await LiveServer.run(fixture.router()) { client in
            try await client.execute(
                uri: "/v1/users/u-42/context", method: .put, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: contextBody)
            ) { #expect($0.status == .ok) }
        }
        let decision = try await Wait.for("the PUT context applied", { try await decide() }) {
            $0.reason == .predicateMismatch
        }
        #expect(decision.outcome == .silenced && decision.reason == .predicateMismatch && decision.contextVersion == 17)
        #expect(changes.withLock { $0.map(\.0) } == ["u-42"])

        // A reload-style invalidation, then a tombstone.
        let newer = contextBody.replacingOccurrences(of: "\"version\":17", with: "\"version\":18").replacingOccurrences(
            of: "'work'", with: "'home'")
        _ = try await fixture.store.put(try FocusContext.decode(from: Data(newer.utf8)))
        _ = try await fixture.producer.send(
            topic: fixture.topic, key: Array("u-42".utf8), value: Array(#"{"userId":"u-42","version":18}"#.utf8))
        let reloaded = try await Wait.for("version 18 reloaded", { try await decide() }) {
            $0.reason == .predicateMatch
        }
        #expect(reloaded.contextVersion == 18)

        _ = try await fixture.producer.send(
            topic: fixture.topic, key: Array("u-42".utf8), value: Array(#"{"userId":"u-42","version":5}"#.utf8))
        _ = try await fixture.producer.send(
            topic: fixture.topic, key: Array("u-42".utf8), value: Array("not json".utf8))
        _ = try await fixture.producer.send(topic: fixture.topic, key: Array("u-42".utf8), value: nil)
        try await Wait.until("the tombstone dropped the user") { cache.count == 0 }
        #expect(metric(registry, "focusgate_invalidations_total", labels: #"kind="stale""#) == 1)
        #expect(metric(registry, "focusgate_invalidations_total", labels: #"kind="invalid""#) == 1)
        #expect(metric(registry, "focusgate_invalidations_total", labels: #"kind="dropped""#) == 1)
        #expect(changes.withLock { $0.map(\.1) } == [17, 18, nil])
        listening.cancel()
        _ = try? await listening.value
        await fixture.shutdown()
    }
}
