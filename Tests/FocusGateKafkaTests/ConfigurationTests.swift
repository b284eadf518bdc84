import FocusGateKafka
import Foundation
import Logging
import Testing

@Suite("Kafka configuration")
struct ConfigurationTests {
    private let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    @Test(
        "a refused property is named in the error",
        arguments: [
            ("linger.ms", "many"),
            ("no.such.property", "1"),
            ("acks", "several"),
        ])
    func refusedPropertyIsNamed(property: String, value: String) {
        var configuration = KafkaProducerConfiguration(bootstrapServers: "127.0.0.1:1")
        configuration.properties[property] = value
        let error = #expect(throws: KafkaError.self) {
            _ = try KafkaProducer(configuration: configuration, logger: self.logger, onDeliveryReport: { _ in })
        }
        #expect(error?.property == property)
        #expect(error?.code == .invalidArgument)
        #expect(error?.description.contains(property) == true)
    }

    @Test("pass-through properties win over typed settings and reach librdkafka")
    func passThroughWins() throws {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: "127.0.0.1:1", groupID: "g")
        configuration.properties["queued.min.messages"] = "1234"
        configuration.properties["security.protocol"] = "plaintext"
        let properties = Dictionary(configuration.rdkafkaProperties, uniquingKeysWith: { _, _ in "duplicate" })
        #expect(properties["queued.min.messages"] == "1234")
        #expect(properties["security.protocol"] == "plaintext")
        #expect(configuration.rdkafkaProperties.filter { $0.0 == "queued.min.messages" }.count == 1)
        _ = try KafkaConsumer(configuration: configuration, logger: self.logger)
    }

    @Test("consumer defaults: manual offsets, cooperative rebalancing, throughput prefetch, read_committed")
    func consumerDefaults() {
        let configuration = KafkaConsumerConfiguration(bootstrapServers: "b:9092", groupID: "focusgate")
        let properties = Dictionary(uniqueKeysWithValues: configuration.rdkafkaProperties)
        #expect(properties["enable.auto.commit"] == "false")
        #expect(properties["enable.auto.offset.store"] == "false")
        #expect(properties["partition.assignment.strategy"] == "cooperative-sticky")
        #expect(properties["isolation.level"] == "read_committed")
        #expect(properties["queued.min.messages"] == "10000000")
        #expect(properties["queued.max.messages.kbytes"] == "2097151")
        #expect(properties["group.id"] == "focusgate")
        let manual = KafkaConsumerConfiguration(bootstrapServers: "b:9092", groupID: nil)
        #expect(
            Dictionary(uniqueKeysWithValues: manual.rdkafkaProperties)["group.id"]
                == KafkaConsumerConfiguration.manualAssignmentGroupID)
    }

    @Test("a static member's group.instance.id goes to librdkafka only with a group")
    func staticMembership() {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: "b:9092", groupID: "focusgate")
        #expect(Dictionary(uniqueKeysWithValues: configuration.rdkafkaProperties)["group.instance.id"] == nil)
        configuration.groupInstanceID = "focusgate-a-0"
        #expect(
            Dictionary(uniqueKeysWithValues: configuration.rdkafkaProperties)["group.instance.id"] == "focusgate-a-0")
        configuration.groupID = nil
        #expect(Dictionary(uniqueKeysWithValues: configuration.rdkafkaProperties)["group.instance.id"] == nil)
    }

    @Test(
        "the librdkafka loaded is the one the build was made against (both are librdkafka.so.1)",
        .enabled(if: ProcessInfo.processInfo.environment["FOCUSGATE_TEST_LIBRDKAFKA"] != nil))
    func loadedLibrary() {
        #expect(RDKafkaLibrary.version == ProcessInfo.processInfo.environment["FOCUSGATE_TEST_LIBRDKAFKA"])
    }

    @Test("producer defaults: idempotent; a transactional id implies idempotence and sets the timeout")
    func producerDefaults() {
        var configuration = KafkaProducerConfiguration(bootstrapServers: "b:9092")
        configuration.isIdempotent = false
        #expect(Dictionary(uniqueKeysWithValues: configuration.rdkafkaProperties)["enable.idempotence"] == "false")
        configuration.transactionalID = "focusgate-0"
        configuration.transactionTimeout = .seconds(15)
        let properties = Dictionary(uniqueKeysWithValues: configuration.rdkafkaProperties)
        #expect(properties["enable.idempotence"] == "true")
        #expect(properties["transactional.id"] == "focusgate-0")
        #expect(properties["transaction.timeout.ms"] == "15000")
        #expect(
            Dictionary(uniqueKeysWithValues: KafkaProducerConfiguration(bootstrapServers: "b").rdkafkaProperties)[
                "enable.idempotence"] == "true")
    }

    @Test("a gap-less producer asks librdkafka for the guarantee only when idempotent and not transactional")
    func gaplessProducer() {
        var configuration = KafkaProducerConfiguration(bootstrapServers: "b:9092")
        #expect(Dictionary(uniqueKeysWithValues: configuration.rdkafkaProperties)["enable.gapless.guarantee"] == nil)
        configuration.isGapless = true
        #expect(Dictionary(uniqueKeysWithValues: configuration.rdkafkaProperties)["enable.gapless.guarantee"] == "true")
        configuration.transactionalID = "focusgate-0"
        #expect(Dictionary(uniqueKeysWithValues: configuration.rdkafkaProperties)["enable.gapless.guarantee"] == nil)
    }

    @Test("a producer asks for delivery reports of failures only when told to")
    func failureReportsOnly() {
        var configuration = KafkaProducerConfiguration(bootstrapServers: "b:9092")
        #expect(Dictionary(uniqueKeysWithValues: configuration.rdkafkaProperties)["delivery.report.only.error"] == nil)
        configuration.reportsFailuresOnly = true
        #expect(
            Dictionary(uniqueKeysWithValues: configuration.rdkafkaProperties)["delivery.report.only.error"] == "true")
    }

    @Test("a producer lingers 1 ms unless linger.ms is passed through")
    func linger() {
        var configuration = KafkaProducerConfiguration(bootstrapServers: "b:9092")
        #expect(Dictionary(uniqueKeysWithValues: configuration.rdkafkaProperties)["linger.ms"] == "1")
        configuration.properties["linger.ms"] = "5"
        #expect(Dictionary(uniqueKeysWithValues: configuration.rdkafkaProperties)["linger.ms"] == "5")
    }

    @Test("pass-through properties go to the clients they are for, as librdkafka lists them; unknown ones to both")
    func propertyScopes() throws {
        let shared = [
            "fetch.wait.max.ms": "10", "session.timeout.ms": "6000", "heartbeat.interval.ms": "500",
            "linger.ms": "20", "transaction.timeout.ms": "9000", "security.protocol": "plaintext",
            "socket.keepalive.enable": "true",
        ]
        var consumer = KafkaConsumerConfiguration(bootstrapServers: "b:9092", groupID: "g")
        consumer.properties = shared
        let consumed = Dictionary(uniqueKeysWithValues: consumer.rdkafkaProperties)
        #expect(consumed["fetch.wait.max.ms"] == "10" && consumed["heartbeat.interval.ms"] == "500")
        #expect(consumed["session.timeout.ms"] == "6000", "a pass-through property still wins over the typed one")
        #expect(consumed["linger.ms"] == nil && consumed["transaction.timeout.ms"] == nil)
        #expect(consumed["security.protocol"] == "plaintext" && consumed["socket.keepalive.enable"] == "true")
        var producer = KafkaProducerConfiguration(bootstrapServers: "b:9092")
        producer.properties = shared
        let produced = Dictionary(uniqueKeysWithValues: producer.rdkafkaProperties)
        #expect(produced["fetch.wait.max.ms"] == nil && produced["session.timeout.ms"] == nil)
        #expect(produced["heartbeat.interval.ms"] == nil)
        #expect(produced["linger.ms"] == "20" && produced["security.protocol"] == "plaintext")
        #expect(RDKafkaPropertyScope.applies("no.such.property", to: .producer))
        #expect(RDKafkaPropertyScope.applies("no.such.property", to: .consumer))
        // Both clients accept what they were given.
        _ = try KafkaConsumer(configuration: consumer, logger: self.logger)
        _ = try KafkaProducer(configuration: producer, logger: self.logger) { _ in }
    }

    @Test("clients send without Nagle's delay unless a pass-through property says otherwise")
    func nagleDisabled() {
        var consumer = KafkaConsumerConfiguration(bootstrapServers: "b:9092", groupID: "g")
        var producer = KafkaProducerConfiguration(bootstrapServers: "b:9092")
        #expect(Dictionary(uniqueKeysWithValues: consumer.rdkafkaProperties)["socket.nagle.disable"] == "true")
        #expect(Dictionary(uniqueKeysWithValues: producer.rdkafkaProperties)["socket.nagle.disable"] == "true")
        consumer.properties["socket.nagle.disable"] = "false"
        producer.disablesNagle = false
        #expect(Dictionary(uniqueKeysWithValues: consumer.rdkafkaProperties)["socket.nagle.disable"] == "false")
        #expect(Dictionary(uniqueKeysWithValues: producer.rdkafkaProperties)["socket.nagle.disable"] == "false")
    }

    @Test("topic specifications: compaction is a topic config")
    func topicSpecification() {
        let state = KafkaTopicSpecification.compacted("focusgate.state", partitions: 8, replicationFactor: 3)
        #expect(state.isCompacted)
        #expect(state.config == ["cleanup.policy": "compact"])
        #expect(!KafkaTopicSpecification(name: "notifications", partitions: 8).isCompacted)
    }
}

@Suite("Kafka errors")
struct KafkaErrorTests {
    @Test("codes carry librdkafka's stable names")
    func names() {
        #expect(KafkaError.Code.timedOut.name == "_TIMED_OUT")
        #expect(KafkaError.Code.producerFenced.name == "PRODUCER_FENCED")
        #expect(KafkaError.Code.notLeaderForPartition.name == "NOT_LEADER_FOR_PARTITION")
        #expect(KafkaError.Code(rawValue: 87).name == "INVALID_RECORD")
    }

    @Test("the group's rebalancing is told apart from other failures (a worker replays those without a pause)")
    func groupMembershipChanges() {
        func error(_ code: Int32) -> KafkaError { KafkaError(code: KafkaError.Code(rawValue: code), message: "") }
        // ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, FENCED_INSTANCE_ID, _ASSIGNMENT_LOST
        for code: Int32 in [22, 25, 27, 82, -142] {
            #expect(error(code).isGroupMembershipChange, "\(KafkaError.Code(rawValue: code).name)")
        }
        // INVALID_RECORD, REQUEST_TIMED_OUT, COORDINATOR_NOT_AVAILABLE, _TIMED_OUT, _TRANSPORT
        for code: Int32 in [87, 7, 15, -185, -195] {
            #expect(!error(code).isGroupMembershipChange, "\(KafkaError.Code(rawValue: code).name)")
        }
    }

    @Test("the description shows code, property and classes")
    func description() {
        let error = KafkaError(
            code: .fenced, message: "gone", isFatal: true, requiresTransactionAbort: true, property: "transactional.id")
        #expect(error.description == "KafkaError(_FENCED): property transactional.id: gone [fatal,abort-required]")
    }
}
