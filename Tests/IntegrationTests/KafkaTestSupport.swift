import FocusGateKafka
import FocusGateEmbeddedBroker
import FocusGateHarness
import Foundation
import Logging
import Synchronization
import FocusGateTestSupport
import Testing

/// Every test that talks to an embedded broker, one at a time: they block threads on Kafka calls
/// and time group rebalances, which parallel runs on two cores would distort.
@Suite("Embedded broker over TCP", .serialized, .ownThreads)
struct EmbeddedBrokerTests {}

/// The gateway's scenarios end to end (decisions, schedules, summaries, rate limits, people,
/// history, retention, failover), one at a time like ``EmbeddedBrokerTests`` but alongside them:
/// each waits mostly on the broker and the instances it starts, not on the cores, and none of
/// them times what it waits for.
@Suite("Embedded broker over TCP: gateway scenarios", .serialized, .ownThreads)
struct GatewayScenarioTests {}

/// The gateway's broker-fault audits, one at a time like ``EmbeddedBrokerTests`` but alongside
/// them: the two take about the same time, and these assert no timings, only their audits (with
/// waits of a minute and more), which a busier machine delays but does not change.
@Suite("Embedded broker over TCP: broker-fault audits", .serialized, .ownThreads)
struct BrokerFaultAuditTests {}

/// A cluster the tests talk to over TCP: the embedded broker, or Tansu (`make test-compat`).
protocol KafkaTestCluster: Sendable {
    var bootstrapServers: String { get }
    /// Brokers in the cluster: with more than one, a test can move partition leaders.
    var brokerCount: Int { get }
    /// Creates a topic: its partitions, compacted when its `cleanup.policy` says so.
    func create(_ topic: KafkaTopicSpecification) async throws
    func stop() async
}

extension EmbeddedKafkaBroker: KafkaTestCluster {
    func create(_ topic: KafkaTopicSpecification) async throws {
        try self.createTopic(topic)
    }

    func stop() async {
        self.shutdown()
    }
}

extension TansuBroker: KafkaTestCluster {
    var brokerCount: Int { 1 }

    func create(_ topic: KafkaTopicSpecification) async throws {
        try await self.createTopic(
            topic.name, partitions: topic.partitions,
            compacted: topic.config["cleanup.policy"]?.contains("compact") == true)
    }
}

/// Which cluster a test runs its gateway on: the embedded broker always, and also Tansu, an
/// independent broker, when the run has it (`make test-compat` sets `FOCUSGATE_TEST_TANSU`).
enum TestCluster: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case embedded
    case tansu

    /// The clusters of this run.
    static var available: [TestCluster] {
        TansuBroker.executable == nil ? [.embedded] : [.embedded, .tansu]
    }

    var testDescription: String { self.rawValue }
}

/// Shared helpers for tests that talk to the embedded broker over TCP.
enum KafkaTestSupport {
    static let logger: Logger = {
        var logger = Logger(label: "focusgate.tests") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel =
            ProcessInfo.processInfo.environment["FOCUSGATE_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
        return logger
    }()

    /// A new single-use topic name.
    static func uniqueTopic(_ prefix: String = "test") -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// Consumer settings tuned for tests: fast group membership, and on a cluster whose leaders
    /// can move, metadata refreshed every second (``metadataRefresh(_:)``).
    static func consumerConfiguration(_ broker: some KafkaTestCluster, group: String?) -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: broker.bootstrapServers, groupID: group)
        configuration.sessionTimeout = .seconds(6)
        configuration.properties["heartbeat.interval.ms"] = "500"
        configuration.properties.merge(self.metadataRefresh(broker)) { $1 }
        // librdkafka's own debug contexts (e.g. `cgrp`), logged at debug level (`FOCUSGATE_TEST_LOG=debug`).
        if let contexts = ProcessInfo.processInfo.environment["FOCUSGATE_TEST_KAFKA_DEBUG"] {
            configuration.properties["debug"] = contexts
        }
        return configuration
    }

    /// Metadata refreshed every second where a test can move partition leaders (a cluster of
    /// several brokers), so that clients find them at once; librdkafka's default elsewhere.
    /// librdkafka 2.8 can rejoin a group in a loop with the short refresh (docs/compatibility.md).
    static func metadataRefresh(_ cluster: some KafkaTestCluster) -> [String: String] {
        cluster.brokerCount > 1 ? ["topic.metadata.refresh.interval.ms": "1000"] : [:]
    }

    /// Produces `records` (key, value) and waits for every delivery report; returns the reports in order.
    static func produce(
        _ broker: some KafkaTestCluster,
        topic: String,
        records: [(key: String?, value: String?)],
        partition: Int32? = nil,
        headers: [KafkaHeader] = []
    ) throws -> [DeliveryOutcome] {
        try self.produce(
            broker, topic: topic,
            bytes: records.map { ($0.key.map { Array($0.utf8) }, $0.value.map { Array($0.utf8) }) },
            partition: partition, headers: headers)
    }

    /// Produces raw `bytes` records (key, value; `nil` is absent) and waits for every delivery report.
    static func produce(
        _ broker: some KafkaTestCluster,
        topic: String,
        bytes records: [(key: [UInt8]?, value: [UInt8]?)],
        partition: Int32? = nil,
        headers: [KafkaHeader] = []
    ) throws -> [DeliveryOutcome] {
        try self.produce(
            broker, topic: topic, headed: records.map { ($0.key, $0.value, headers) }, partition: partition)
    }

    /// Produces raw records, each with headers of its own, and waits for every delivery report.
    static func produce(
        _ broker: some KafkaTestCluster,
        topic: String,
        headed records: [(key: [UInt8]?, value: [UInt8]?, headers: [KafkaHeader])],
        partition: Int32? = nil
    ) throws -> [DeliveryOutcome] {
        let reports = DeliveryLog()
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers),
            logger: self.logger,
            onDeliveryReport: reports.record
        )
        for (index, record) in records.enumerated() {
            try producer.produce(
                topic: topic, partition: partition, key: record.key, value: record.value, headers: record.headers,
                deliveryID: UInt64(index + 1)
            )
        }
        try producer.flush(timeout: .seconds(20))
        return reports.outcomes.sorted { $0.deliveryID < $1.deliveryID }
    }

    /// Consumes until `count` records arrived or `timeout` passed; returns owned copies.
    static func consume(_ consumer: KafkaConsumer, count: Int, timeout: Duration) -> [KafkaMessage] {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var messages: [KafkaMessage] = []
        while messages.count < count && clock.now < deadline {
            consumer.consumeBatch(maxRecords: 500, timeout: .milliseconds(100)) { batch in
                messages.append(contentsOf: batch.map { $0.copy() })
            }
        }
        return messages
    }

    /// A free TCP port on 127.0.0.1, as the kernel hands them out.
    static func freePort() -> UInt16 {
        freeLoopbackPort()
    }
}

/// What a delivery report said, copied out of the callback.
struct DeliveryOutcome: Sendable, Hashable {
    var deliveryID: UInt64
    var topic: String
    var partition: Int32
    var offset: Int64?
    var error: KafkaError?
}

/// Collects delivery reports; thread-safe so that any polling thread may record.
final class DeliveryLog: Sendable {
    private let entries = Mutex<[DeliveryOutcome]>([])

    func record(_ report: KafkaDeliveryReport) {
        let outcome = DeliveryOutcome(
            deliveryID: report.deliveryID, topic: report.topic, partition: report.partition,
            offset: report.offset, error: report.error
        )
        self.entries.withLock { $0.append(outcome) }
    }

    var outcomes: [DeliveryOutcome] { self.entries.withLock { $0 } }
}
